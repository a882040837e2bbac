"""Integrity guard, run inside the sandbox: notices when candidate code rewires pytest.

Candidate code shares the process with pytest, so it could patch the machinery that turns a
test's exception into a report, register a plugin that rewrites reports, or swap a test's code.
The guard snapshots that machinery before any candidate code is imported and re-checks it
before every record; a difference is reported as tampering. It raises the cost of an attack
that the static pre-check did not stop; it cannot make a shared process trustworthy on its own.
Imports: standard library, pytest and pluggy only.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_CRITICAL = {
    "_pytest.runner": (
        "call_and_report",
        "runtestprotocol",
        "pytest_runtest_makereport",
        "pytest_runtest_protocol",
        "pytest_runtest_setup",
        "pytest_runtest_call",
        "pytest_runtest_teardown",
        "check_interactive_exception",
    ),
    "_pytest.runner.CallInfo": ("from_call", "__init__", "result"),
    "_pytest.reports.TestReport": ("__init__", "from_item_and_call"),
    "_pytest.reports.BaseReport": ("passed", "failed", "skipped", "__init__"),
    "_pytest.python": ("pytest_pyfunc_call",),
    "_pytest.python.Function": ("runtest", "setup", "_getobj", "repr_failure"),
    "_pytest.main": ("pytest_runtestloop",),
    "_pytest.skipping": (
        "pytest_runtest_makereport",
        "pytest_runtest_call",
        "pytest_runtest_setup",
    ),
    "pluggy._callers": ("_multicall",),
    "pluggy._hooks.HookCaller": ("__call__", "_hookexec", "get_hookimpls", "call_extra"),
    "pluggy._manager.PluginManager": ("register", "_hookexec", "get_plugins"),
}
_ITEM_ATTRS = ("runtest", "obj", "_obj", "ihook", "setup", "teardown", "_getobj")


def _resolve(path: str) -> Any:
    """A loaded module, or a class in one, by dotted path."""
    if path in sys.modules:
        return sys.modules[path]
    head, _, name = path.rpartition(".")
    return getattr(sys.modules.get(head), name, None)


def _fingerprint(value: Any) -> tuple[Any, ...]:
    func = getattr(value, "fget", value)  # properties: their getter
    return (value, getattr(func, "__code__", None), getattr(func, "__defaults__", None))


def _snapshot() -> list[tuple[Any, str, tuple[Any, ...]]]:
    found = []
    for path, names in _CRITICAL.items():
        owner = _resolve(path)
        for name in names:
            if owner is not None and name in vars(owner):
                found.append((owner, name, _fingerprint(vars(owner)[name])))
    return found


class Guard:
    """Call it to get a tampering reason, or None while everything is as it was."""

    def __init__(self, root: str, candidate: str, library: list[str]) -> None:
        import _pytest.python
        import _pytest.skipping  # noqa: F401
        import pluggy._callers  # noqa: F401

        self._internals = _snapshot()
        self._candidate = os.path.realpath(candidate)
        self._trusted = tuple(os.path.realpath(p) + os.sep for p in {*library, root})
        self._trusted_files = {os.path.realpath(os.path.dirname(__file__))}
        self._items: dict[str, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}
        self._plugin_manager: Any = None
        self._vars, self._getattr, self._realpath = vars, getattr, os.path.realpath
        self._verdicts: dict[str, bool] = {}

    def watch(self, plugin_manager: Any, items: list[Any]) -> None:
        """After collection: remember each test's code and the plugin manager to audit."""
        self._plugin_manager = plugin_manager
        self._items = {i.nodeid: (i, self._code_of(i), self._item_attrs(i)) for i in items}

    def _code_of(self, item: Any) -> Any:
        """The code object of the test's function. Not the function object itself: pytest
        binds methods (unittest ones per test) to fresh instances; their code stays put."""
        obj = self._vars(item).get("_obj")
        if obj is None:  # unittest items bind in setup: look the function up on the class
            owner = self._vars(item.parent).get("_obj") if item.parent is not None else None
            name = self._getattr(item, "originalname", None) or item.name
            obj = self._getattr(owner, name, None) if owner is not None else None
        return self._getattr(self._getattr(obj, "__func__", obj), "__code__", None)

    def _item_attrs(self, item: Any) -> dict[str, Any]:
        own = self._vars(item)
        return {name: own[name] for name in _ITEM_ATTRS if name in own and name != "_obj"}

    def __call__(self, nodeid: str | None = None) -> str | None:
        """Check the machinery and the plugins, and one test (before its records go out) or,
        without a nodeid, every test."""
        for owner, name, print_ in self._internals:
            now = self._vars(owner).get(name)
            if _fingerprint(now) != print_:
                return f"{getattr(owner, '__name__', owner)}.{name} was replaced"
        watched = [self._items[nodeid]] if nodeid in self._items else []
        for item, code, attrs in watched if nodeid else self._items.values():
            if self._code_of(item) != code or self._item_attrs(item) != attrs:
                return f"test {item.nodeid} was altered after collection"
        return self._audit_plugins()

    def _audit_plugins(self) -> str | None:
        if self._plugin_manager is None:
            return None
        for plugin in self._plugin_manager.get_plugins():
            if not self._trusted_origin(plugin):
                return f"an untrusted pytest plugin was registered: {plugin!r}"[:300]
        return None

    def _trusted_origin(self, plugin: Any) -> bool:
        module_name = (
            getattr(plugin, "__name__", None)
            if type(plugin).__name__ == "module"
            else getattr(plugin if isinstance(plugin, type) else type(plugin), "__module__", None)
        )
        module = sys.modules.get(module_name or "")
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path:
            return module_name in sys.builtin_module_names
        if path not in self._verdicts:  # realpath is slow; each file is judged once
            real = self._realpath(path)
            self._verdicts[path] = real != self._candidate and (
                real.startswith(self._trusted) or os.path.dirname(real) in self._trusted_files
            )
        return self._verdicts[path]
