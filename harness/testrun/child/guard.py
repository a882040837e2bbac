"""Integrity guard, run inside the sandbox: notices when candidate code rewires what decides a
test's outcome.

The audit hook keeps candidate code away from frames and memory; plain attribute assignment it
cannot see. So the guard remembers, before any candidate code is imported, every attribute of
pytest's and pluggy's modules and classes and of builtins; after collection, each test's code
and the namespaces of the test and support modules and of the modules they use; and compares
before every record. A difference, or a candidate's object in a library module, is tampering.
Built as closures (no class whose methods candidate code could replace). Imports: standard
library only.
"""

from __future__ import annotations

import builtins
import sys
from types import FunctionType, ModuleType, SimpleNamespace
from typing import Any

_PREFIXES = ("pytest", "_pytest", "pluggy")
_ITEM_ATTRS = ("runtest", "obj", "_obj", "ihook", "setup", "teardown", "_getobj")
# pytest's own state that changes during a session (none of it decides an outcome).
_VOLATILE = frozenset(
    ("_pytest.assertion.util", k) for k in ("_reprcompare", "_assertion_pass", "_config")
)
# Library attributes a candidate may legitimately point at its own objects.
_MAY_BE_SET = frozenset(
    {
        ("sys", "stdout"),
        ("sys", "stderr"),
        ("sys", "stdin"),
        ("sys", "excepthook"),
        ("sys", "displayhook"),
        ("sys", "unraisablehook"),
        ("threading", "excepthook"),
        ("warnings", "showwarning"),
        ("logging", "_loggerClass"),
        ("logging", "_logRecordFactory"),
        ("asyncio.events", "_event_loop_policy"),
    }
)
_LIB, _TEST, _CAND = 0, 1, 2
_CLASS_DICT = type.__dict__["__dict__"].__get__  # a class's own dict, whatever its metaclass


def build(stack: SimpleNamespace) -> SimpleNamespace:
    """rebase() at session start; watch(pluginmanager, items, own_plugin) after collection;
    check(nodeid) -> reason|None; impostor(items) -> reason|None, before the semantic wrappers;
    kind_of(obj): library (0), test (1) or candidate (2)."""
    builtins_kept = [(vars(builtins), k, v, "builtins") for k, v in vars(builtins).items()]
    kind_of, item_function, changed = stack.origin, _item_function(), _changed()
    item_code, impostor = _item_code(item_function), _impostors(item_function, kind_of)
    later: dict[str, list] = {"items": [], "kept": [], "used": [], "plugins": [], "used_mros": []}
    vars_, builtins_ns, own_items = vars, vars(builtins), _ITEM_ATTRS
    modules, list_ = sys.modules, list

    def pytest_modules() -> list:
        return [m for n, m in list_(modules.items()) if n.startswith(_PREFIXES)]

    def rebase() -> None:
        """At session start: pytest has configured itself (and patched some of its own
        classes); candidate code has not run yet."""
        later["pytest"], later["mros"] = _snapshot(pytest_modules())

    rebase()

    def attrs_of(item: Any) -> list:
        own = vars_(item)
        return [own.get(k) for k in own_items if k != "_obj"]

    def same(now: list, then: list) -> bool:  # by identity: no __eq__ of theirs runs here
        return len(now) == len(then) and all(a is b for a, b in zip(now, then, strict=True))

    def watch(pm: Any, items: list, own: Any) -> None:
        later["items"] = [(i, item_code(i), attrs_of(i)) for i in items]
        later["plugins"] = [pm, own]
        tests = _test_modules(items, kind_of)
        used = _used(tests)
        libraries = [m for m in used if kind_of(m) == _LIB]
        classes, later["used_mros"] = _snapshot(libraries)  # TestCase, Fraction: theirs too
        later["kept"] = _snapshot(tests)[0] + _snapshot(used, classes=False)[0] + classes
        later["used"] = [*_namespaces(libraries), (builtins_ns, "builtins")]

    def check(nodeid: str | None = None) -> str | None:
        reason = changed(builtins_kept) or changed(later["pytest"]) or changed(later["kept"])
        reason = reason or _mro_changed(later["mros"]) or _mro_changed(later["used_mros"])
        reason = reason or _foreign(later["used"], kind_of)
        if reason:
            return reason
        for item, code, attrs in later["items"]:
            if (nodeid is None or item.nodeid == nodeid) and (
                item_code(item) is not code or not same(attrs_of(item), attrs)
            ):
                return f"test {item.nodeid} was altered after collection"
        return _plugins(*later["plugins"], kind_of) if later["plugins"] else None

    return SimpleNamespace(
        watch=watch, check=check, kind_of=kind_of, rebase=rebase, impostor=impostor
    )


def _test_modules(items: list, kind_of: Any) -> list[ModuleType]:
    """The test and support modules: the ones pytest collected the tests from (whatever they
    hold: candidate code may plant its own function first in one, to pass it off as its own
    module), and every other module whose functions are the tests'."""
    found = {id(m): m for m in _modules() if kind_of(m) == _TEST}
    for item in items:
        module = getattr(item, "module", None)  # pytest's Module node's object
        if type(module) is ModuleType:
            found[id(module)] = module
    return list(found.values())


def _item_function():
    vars_, getattr_ = vars, getattr

    def item_function(item: Any) -> Any:
        """The test's function (pytest binds methods, unittest ones per test, to fresh
        instances; the function under them stays put), or None."""
        obj = vars_(item).get("_obj")
        if obj is None:  # unittest items bind in setup: look the function up on the class
            parent = getattr_(item, "parent", None)
            owner = vars_(parent).get("_obj") if parent is not None else None
            name = getattr_(item, "originalname", None) or item.name
            obj = getattr_(owner, name, None) if owner is not None else None
        return getattr_(obj, "__func__", obj)

    return item_function


def _item_code(item_function: Any):
    getattr_ = getattr

    def item_code(item: Any) -> Any:
        """The code object of the test's function."""
        return getattr_(item_function(item), "__code__", None)

    return item_code


def _impostors(item_function: Any, kind_of: Any):
    """impostor(items) -> reason|None: a collected test whose function is not a test file's.
    A library decorator's wrapper (mock.patch) counts as its __wrapped__ function's."""
    function_type, type_, vars_, range_ = FunctionType, type, vars, range

    def genuine(func: Any) -> bool:
        for _ in range_(16):
            if type_(func) is not function_type:
                return False
            kind = kind_of(func)
            if kind != _LIB:
                return kind == _TEST
            func = vars_(func).get("__wrapped__")
        return False

    def impostor(items: list) -> str | None:
        for item in items:
            func = item_function(item)
            if type_(func) is function_type and not genuine(func):
                return f"test {item.nodeid} does not run its test file's code"
        return None

    return impostor


def _changed():
    missing, volatile = object(), _VOLATILE

    def changed(entries: list) -> str | None:
        for namespace, key, value, owner in entries:
            if namespace.get(key, missing) is not value and (owner, key) not in volatile:
                return f"{owner}.{key} was replaced"
        return None

    return changed


def _mro_changed(mros: list) -> str | None:
    for cls, mro in mros:
        now = type.__dict__["__mro__"].__get__(cls)
        if len(now) != len(mro) or any(a is not b for a, b in zip(now, mro, strict=True)):
            return f"the bases of {type.__dict__['__qualname__'].__get__(cls)} were replaced"
    return None


def _namespaces(modules: list[ModuleType]) -> list[tuple[dict, str]]:
    """(namespace, its name) of each module and of each class it defines."""
    found = []
    for module in modules:
        namespace, name = _names(module), _name(module)
        found.append((namespace, name))
        for value in list(namespace.values()):
            if issubclass(type(value), type) and _CLASS_DICT(value).get("__module__") == name:
                label = f"{name}.{type.__dict__['__qualname__'].__get__(value)}"
                found.append((_CLASS_DICT(value), label))
    return found


def _foreign(namespaces: list, kind_of: Any) -> str | None:
    """A library module the tests use, one of its classes, or builtins, now holding the
    candidate's object."""
    for namespace, name in namespaces:
        for key, value in list(namespace.items()):
            known = type(key) is not str or (name, key) in _MAY_BE_SET
            if not known and type(value) is not ModuleType and kind_of(value) == _CAND:
                return f"{name}.{key} is the candidate's"
    return None


def _plugins(pm: Any, own: Any, kind_of: Any) -> str | None:
    for plugin in pm.get_plugins():
        if plugin is not own and kind_of(plugin) == _CAND:
            kind = type.__dict__["__qualname__"].__get__(type(plugin))
            return f"a pytest plugin that is not pytest's own was registered: a {kind}"
    return None


def _modules() -> list[ModuleType]:
    """sys.modules' genuine modules (their own classes could run code on attribute access)."""
    return [m for m in list(sys.modules.values()) if type(m) is ModuleType]


def _names(module: ModuleType) -> dict:
    return ModuleType.__dict__["__dict__"].__get__(module)


def _name(module: ModuleType) -> str:
    name = _names(module).get("__name__")
    return name if type(name) is str else ""


def _used(modules: list[ModuleType]) -> list[ModuleType]:
    """The modules the tests reach: the ones in their namespaces, those of the classes in them
    (from fractions import Fraction), and those modules' own submodules (os.path)."""
    used = {id(v): v for m in modules for v in _names(m).values() if type(v) is ModuleType}
    for module in modules:
        for value in list(_names(module).values()):
            home = _CLASS_DICT(value).get("__module__") if issubclass(type(value), type) else None
            found = sys.modules.get(home) if type(home) is str else None
            if type(found) is ModuleType:
                used[id(found)] = found
    for module in list(used.values()):
        prefix = _name(module) + "."
        for value in _names(module).values():
            if type(value) is ModuleType and _name(value).startswith(prefix):
                used[id(value)] = value
    return list(used.values())


def _snapshot(modules: Any, classes: bool = True) -> tuple[list, list]:
    """(namespace, key, value, owner's name) for every attribute of the modules and, with
    `classes`, of the classes they define; and (class, __mro__) for those classes."""
    entries, mros = [], []
    for module in modules:
        namespace, name = _names(module), _name(module)
        entries += [(namespace, k, v, name) for k, v in namespace.items()]
        for value in list(namespace.values()) if classes else ():
            if issubclass(type(value), type) and _CLASS_DICT(value).get("__module__") == name:
                label = f"{name}.{type.__dict__['__qualname__'].__get__(value)}"
                own = _CLASS_DICT(value)
                entries += [(own, k, v, label) for k, v in own.items()]
                mros.append((value, value.__mro__))
    return entries, mros
