"""Integrity guard, run inside the sandbox: notices when candidate code rewires what decides a
test's outcome.

The audit hook keeps candidate code away from frames and memory; plain attribute assignment it
cannot see. So the guard remembers, before any candidate code is imported, every attribute of
pytest's and pluggy's modules and classes and of builtins; after collection, each test's code
and the namespaces of the test and support modules and of the modules they use; and compares
before every record. A difference, or a candidate's object in a library module, is tampering.

Only the candidate rebinding what is not its own counts. The candidate's own modules are never
watched (a module counting in a global of its own is its business). Every other module's own
rebinding is told apart by where it can come from: the names its own code stores (`global X`
then `X = ...`, or `module.X = ...` as `warnings.catch_warnings` does) may change, to anything
but the candidate's object; and a value of a test or support file's (a fixture's stand-in) may
be put anywhere. Built as closures (no class whose methods candidate code could replace).
Imports: standard library only.
"""

from __future__ import annotations

import builtins
import itertools
import opcode
import operator
import sys
from types import CodeType, FunctionType, ModuleType, SimpleNamespace
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
# The instructions that rebind a name: a module's global, or an attribute (of its own module,
# reached by name, or of its own classes). Read now, before candidate code exists.
_STORES = frozenset(
    opcode.opmap[n] for n in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR", "DELETE_ATTR")
)
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]
_WRAPPERS = (staticmethod, classmethod)
# Whose values may newly stand in an entry: by whether the owner's own code rebinds the name
# (own) and whether the owner is a library (a test file's stand-in may replace a library's).
_NONE, _OF_TESTS, _NOT_CANDIDATES = frozenset(), frozenset({_TEST}), frozenset({_LIB, _TEST})


def build(stack: SimpleNamespace, hushed: Any = lambda fn: fn) -> SimpleNamespace:
    """rebase() at session start; watch(pluginmanager, items, own_plugin) after collection;
    check(nodeid) -> reason|None; impostor(items) -> reason|None, before the semantic wrappers;
    kind_of(obj): library (0), test (1) or candidate (2). `hushed` (shield.install's) runs
    the scan of the libraries' namespaces, which runs no candidate code, out of the audit
    hook's way."""
    builtins_kept = [(vars(builtins), k, v, "builtins", _NONE) for k, v in vars(builtins).items()]
    kind_of, item_function = stack.origin, _item_function()
    changed, own_stores = _changed(kind_of), _own_stores(stack.classify)
    item_code, impostor = _item_code(item_function), _impostors(item_function, kind_of)
    later: dict[str, list] = {"items": [], "kept": [], "used": [], "plugins": [], "used_mros": []}
    vars_, builtins_ns, own_items = vars, vars(builtins), _ITEM_ATTRS
    modules, list_ = sys.modules, list
    foreign, judged = hushed(_foreign), {}  # judged: see _foreign

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
        used = [m for m in _used(tests) if not _candidates_own(m, kind_of, stack.classify)]
        libraries = [m for m in used if kind_of(m) == _LIB]
        classes, later["used_mros"] = _snapshot(libraries, own_stores, kind_of)  # TestCase
        tests_kept = _snapshot(tests, own_stores)[0]
        kept = tests_kept + _snapshot(used, own_stores, kind_of, classes=False)[0]
        later["kept"] = kept + classes
        later["used"] = [*_namespaces(libraries), (builtins_ns, "builtins")]

    def check(nodeid: str | None = None) -> str | None:
        reason = changed(builtins_kept) or changed(later["pytest"]) or changed(later["kept"])
        reason = reason or _mro_changed(later["mros"]) or _mro_changed(later["used_mros"])
        reason = reason or foreign(later["used"], kind_of, judged)
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


def _changed(kind_of: Any):
    """changed(entries) -> reason|None: the first entry rebound by someone it does not own.
    Each entry says whose values `may` newly stand in it (see _snapshot); the candidate's never
    may, so the candidate rebinding anything not its own is tampering. Entries are grouped by
    namespace once per list; a group whose every value is still the same object is passed in
    one sweep of C loops (dict lookups by text, compared by identity: nothing of anyone's
    runs), and only a group with a difference is read entry by entry."""
    missing, volatile, lib = object(), _VOLATILE, _LIB
    groups: dict[int, tuple] = {}  # id(entries) -> (entries, [(namespace, keys, values, its)])
    is_not, repeat, map_, any_, id_ = operator.is_not, itertools.repeat, map, any, id

    def grouped(entries: list) -> list:
        known = groups.get(id_(entries))
        if known is not None and known[0] is entries:
            return known[1]
        by_namespace: dict[int, list] = {}
        for entry in entries:
            by_namespace.setdefault(id_(entry[0]), []).append(entry)
        found = [
            (its[0][0], tuple(e[1] for e in its), tuple(e[2] for e in its), its)
            for its in by_namespace.values()
        ]
        groups[id_(entries)] = (entries, found)
        return found

    def changed(entries: list) -> str | None:
        for namespace, keys, values, its in grouped(entries):
            get = namespace.get
            if not any_(map_(is_not, map_(get, keys, repeat(missing)), values)):
                continue
            for _, key, value, owner, may in its:
                now = get(key, missing)
                if now is value or (owner, key) in volatile:
                    continue
                if (kind_of(now) if now is not missing else lib) not in may:
                    return f"{owner}.{key} was replaced"
        return None

    return changed


def _candidates_own(module: ModuleType, kind_of: Any, classify: Any) -> bool:
    """A module of the candidate's: its file is candidate code and so are its functions (a
    library module with a planted function is still the library's)."""
    path = _names(module).get("__file__")
    return type(path) is str and classify(path) == _CAND and kind_of(module) == _CAND


def _own_stores(classify: Any):
    """own_stores(module) -> the names the module's own code (its functions and its classes'
    methods, nested code included, none of it the candidate's) rebinds or deletes."""
    function_type, code_type, type_, wrappers = FunctionType, CodeType, type, _WRAPPERS

    def codes_of(module: ModuleType) -> list:
        name, found = _name(module), []
        for value in list(_names(module).values()):
            if type_(value) is function_type and value.__module__ == name:
                found.append(value.__code__)
            elif issubclass(type_(value), type_) and _CLASS_DICT(value).get("__module__") == name:
                for member in list(_CLASS_DICT(value).values()):
                    func = member.__func__ if type_(member) in wrappers else member
                    func = func.fget if type_(func) is property else func
                    if type_(func) is function_type:
                        found.append(func.__code__)
        return found

    def own_stores(module: ModuleType) -> frozenset[str]:
        todo, names = codes_of(module), set()
        while todo:
            code = todo.pop()
            if classify(code) != _CAND:
                names |= _stored_names(code)
                todo += [c for c in code.co_consts if type_(c) is code_type]
        return frozenset(names)

    return own_stores


def _stored_names(code: CodeType) -> set[str]:
    """The names a code object's own instructions store or delete (global or attribute)."""
    raw, names, found, extended = code.co_code, code.co_names, set(), 0
    for i in range(0, len(raw) - 1, 2):
        op, arg = raw[i], raw[i + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op in _STORES and arg < len(names):
            found.add(names[arg])
    return found


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


def _foreign(namespaces: list, kind_of: Any, seen: dict) -> str | None:
    """A library module the tests use, one of its classes, or builtins, now holding the
    candidate's object. `seen` (kept across checks) holds, per namespace, each entry judged
    before with what its judgement rests on: the object, its class and, for a function, its
    code; an entry whose three are the same objects as then is not judged again."""
    function_type, module_type, type_, str_, id_ = FunctionType, ModuleType, type, str, id
    for namespace, name in namespaces:
        last = seen.get(id_(namespace))
        if last is None:
            last = seen[id_(namespace)] = {}
        for key, value in list(namespace.items()):
            if type_(key) is not str_ or (name, key) in _MAY_BE_SET:
                continue
            kind = type_(value)
            if kind is module_type:
                continue
            code = value.__code__ if kind is function_type else None
            was = last.get(key)
            if was is not None and was[0] is value and was[1] is kind and was[2] is code:
                continue
            if kind_of(value) == _CAND:
                return f"{name}.{key} is the candidate's"
            last[key] = (value, kind, code)
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


def _snapshot(
    modules: Any, own_stores: Any = None, kind_of: Any = None, classes: bool = True
) -> tuple[list, list]:
    """(namespace, key, value, owner's name, may) for every attribute of the modules and, with
    `classes`, of the classes they define; and (class, __mro__) for those classes. `may`: the
    kinds of value that may newly stand there: anything but the candidate's where the module's
    own code rebinds the name (`own_stores`), else a test file's in a library (`kind_of`), else
    none (pytest, and the tests' own names)."""
    entries, mros = [], []
    for module in modules:
        namespace, name = _names(module), _name(module)
        stores = own_stores(module) if own_stores is not None else _NONE
        other = _OF_TESTS if kind_of is not None and kind_of(module) == _LIB else _NONE

        def may(key: Any, stores: frozenset = stores, other: frozenset = other) -> frozenset:
            return _NOT_CANDIDATES if key in stores else other

        entries += [(namespace, k, v, name, may(k)) for k, v in namespace.items()]
        for value in list(namespace.values()) if classes else ():
            if issubclass(type(value), type) and _CLASS_DICT(value).get("__module__") == name:
                label = f"{name}.{type.__dict__['__qualname__'].__get__(value)}"
                own = _CLASS_DICT(value)
                entries += [(own, k, v, label, may(k)) for k, v in own.items()]
                mros.append((value, value.__mro__))
    return entries, mros
