"""Who is asking, inside the sandbox: walking the stack out from an operation, whose frames
(library, test or candidate: see classify.py) stand between it and whoever gets the result,
and whose an object is.

Built once by the bootstrap as closures over values captured before candidate code exists, so
nothing here reads a module attribute, class attribute or builtin once it is running.
Imports: standard library only.
"""

from __future__ import annotations

import _thread
import builtins
import sys
from types import FunctionType, ModuleType, SimpleNamespace
from typing import Any

LIBRARY, TEST, CANDIDATE = 0, 1, 2

# Library functions that hand a frame (or its namespace) back to their caller, by file and
# qualified name: a frame read inside one of them is judged by who called it. Any other library
# function that reads a frame keeps it (typing's caller module, logging's caller line,
# traceback's summaries) and may. Copies cannot pose as these: files.py refuses to run code
# under a library file's name that is not that file's own.
_RETURNERS = frozenset(
    {
        ("/inspect.py", "currentframe"),
        ("/inspect.py", "stack"),
        ("/inspect.py", "trace"),
        ("/inspect.py", "getouterframes"),
        ("/inspect.py", "getinnerframes"),
        ("/inspect.py", "getgeneratorlocals"),
        ("/inspect.py", "getcoroutinelocals"),
        ("/traceback.py", "walk_stack"),
        ("/traceback.py", "walk_tb"),
        ("/traceback.py", "_walk_tb_with_full_positions"),
        ("/logging/__init__.py", "<lambda>"),  # currentframe
        ("/types.py", "_GeneratorWrapper.gi_frame"),
        ("/types.py", "_GeneratorWrapper.cr_frame"),
        ("/asyncio/base_tasks.py", "_task_get_stack"),
        ("/pydantic/_internal/_typing_extra.py", "parent_frame_namespace"),
        ("/pydantic/type_adapter.py", "TypeAdapter._fetch_parent_frame"),
        ("/structlog/_frames.py", "_find_first_app_frame_and_name"),
        ("/_pytest/_code/code.py", "TracebackEntry.frame"),
        ("/_pytest/_code/code.py", "Frame.__init__"),
        ("/_pytest/_code/code.py", "Traceback.__init__"),
    }
)


def build(classify: Any, boot_dir: str) -> SimpleNamespace:
    """The stack walkers, as closures (see the module docstring); `classify` is the
    classify of what classify.build returns (it takes a code object or a filename)."""
    returner, origin = _returner_test(), _origin(classify, boot_dir + "/")
    lib, test, cand, own = LIBRARY, TEST, CANDIDATE, boot_dir + "/"
    ident, main = _thread.get_ident, _thread.get_ident()  # built on pytest's thread

    def first_outside(frame: Any) -> int:
        """The kind of the first frame, walking out, that is not library code. A thread of
        library frames alone (a worker running a library function it was handed) is the
        candidate's: only pytest's own thread is library code from top to bottom."""
        while frame is not None:
            kind = classify(frame.f_code)
            if kind != lib:
                return kind
            frame = frame.f_back
        return bottom()

    def bottom() -> int:
        return lib if ident() == main else cand

    def keeps(frame: Any) -> bool:
        """A library frame that keeps the frames it reads: not a returner, and its module holds
        none of the candidate's functions (which it would call with them)."""
        if returner(frame.f_code):  # a library frame: its filename is that file's
            return False
        for value in frame.f_globals.values():
            if is_function(value) and origin(value) == cand:
                return False
        return True

    def frame_goes_to_candidate(frame: Any, attr: Any = None) -> bool:
        """For a frame read (sys._getframe, or the frame attribute `attr`: tb_frame, gi_frame...):
        does the candidate get it? The sandbox's own code keeps what it reads (and files.py
        refuses to run copies). A library frame reading an attribute its code does not name
        (getattr with a name it was handed: string.Formatter.get_field) keeps nothing."""
        if first_outside(frame) != cand:
            return False
        code = frame.f_code
        generic = attr is not None and attr not in code.co_names and attr not in code.co_consts
        while frame is not None:
            name = frame.f_code.co_filename
            kind = classify(frame.f_code)
            if kind != lib:
                return kind == cand
            if name.startswith(own) or (not generic and keeps(frame)):
                return False
            generic, frame = False, frame.f_back
        return bottom() == cand

    def clean(frame: Any) -> bool:
        """No frame on the stack but library code, on pytest's own thread: what the
        recorder's hooks expect (a worker of library frames alone is the candidate's)."""
        while frame is not None:
            if classify(frame.f_code) != lib:
                return False
            frame = frame.f_back
        return bottom() == lib

    is_function, spoofs = _is_function(), _spoofs

    def refused_change(obj: Any, rest: tuple, caller: Any) -> bool:
        """Changing a library or test object's code, defaults, bases or class: refused when the
        candidate does it itself (library code may, importing: types.coroutine does). Giving
        the candidate's own function library code: refused whenever the candidate asks."""
        if origin(obj) != cand:
            return classify(caller.f_code) == cand
        return spoofs(classify, rest) and first_outside(caller) == cand

    return SimpleNamespace(
        classify=classify,
        origin=origin,
        is_library=lambda filename: classify(filename) == lib,
        clean=clean,
        candidate_asks=lambda frame: first_outside(frame) == cand,
        candidate_asks_for_frames=frame_goes_to_candidate,
        is_test_object=lambda fn: is_function(fn) and origin(fn) == test,
        refused_change=refused_change,
    )


def _is_function():
    function_type, type_ = FunctionType, type
    return lambda obj: type_(obj) is function_type


def _origin(classify: Any, own: str):
    """Whose an object is: a function by its code (the sandbox's own wrapper around a
    candidate's function is the candidate's); a module or a class by the functions it defines,
    else by its file (a class: its module's); anything else by its class. Reads nothing
    through the object's own attribute lookup, so no candidate code runs."""
    function_type, module_type, type_, str_, issubclass_ = (
        FunctionType,
        ModuleType,
        type,
        str,
        issubclass,
    )
    lib, cand, modules = LIBRARY, CANDIDATE, sys.modules
    class_dict, module_dict = type.__dict__["__dict__"].__get__, ModuleType.__dict__["__dict__"]
    cell_filled, builtin_names = _cell_filled, frozenset(sys.builtin_module_names)
    # The builtins module's own classes that nobody can change (their flags say immutable),
    # by id (no hash of a class runs here): what `defined` and `__module__` say of them.
    id_, flags = id, type.__dict__["__flags__"].__get__
    static = {
        id(k): k for k in vars(builtins).values() if type(k) is type and flags(k) & _IMMUTABLE
    }

    def of_function(func: Any) -> int:
        name = func.__code__.co_filename
        for cell in func.__closure__ or () if name.startswith(own) else ():
            inner = cell.cell_contents if cell_filled(cell) else None
            if type_(inner) is function_type and classify(inner.__code__) == cand:
                return cand
        return classify(func.__code__)

    def defined(namespace: Any, name: Any) -> int | None:
        for value in namespace.values():
            if type_(value) is function_type and (name is None or value.__module__ == name):
                return of_function(value)
        return None

    def module_kind(module: Any) -> int:
        namespace = module_dict.__get__(module)
        name = namespace.get("__name__")
        found = defined(namespace, name)
        if found is not None:
            return found
        if "__file__" not in namespace and name in builtin_names:  # _thread, sys, ...
            return lib
        return classify(namespace.get("__file__"))

    def origin(obj: Any) -> int:
        kind = type_(obj)
        if kind is function_type:
            return of_function(obj)
        if kind is module_type:
            return module_kind(obj)
        cls = obj if issubclass_(kind, type_) else kind
        if static.get(id_(cls)) is cls:  # str, int, tuple...: no one's function in them
            return lib
        namespace = class_dict(cls)
        found = defined(namespace, None)  # a class is whose its methods are
        if found is not None:
            return found
        name = namespace.get("__module__")
        if type_(name) is not str_ or name == "builtins":  # C types: a descriptor, or none
            return lib
        module = modules.get(name)
        return module_kind(module) if type_(module) is module_type else classify(None)

    return origin


_CODE_TYPE = type(_is_function.__code__)
_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE


def _cell_filled(cell: Any, empty: type = ValueError) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (an empty cell raises)
    except empty:
        return False
    return True


def _spoofs(
    classify: Any, rest: tuple, code_type: type = _CODE_TYPE, type_: type = type, cand: int = 2
) -> bool:
    """A __code__ assignment whose new code claims to be library or test code."""
    new = rest[0] if rest else None
    return type_(new) is code_type and classify(new) != cand


def _returner_test():
    """Whether a library frame's code is one of the returners."""
    returners, tails = tuple(_RETURNERS), tuple({tail for tail, _name in _RETURNERS})
    any_ = any

    def returner(code: Any) -> bool:
        name = code.co_filename
        if not name.endswith(tails):
            return False
        qualname = code.co_qualname
        return any_(qualname == wanted and name.endswith(tail) for tail, wanted in returners)

    return returner
