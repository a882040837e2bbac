"""Hostile: give hypothesis's tracer a trace function of the candidate's (replacing the method
on the library class, not subclassing it) and make hypothesis trace every example; the library
frame then installs it, and it rewrites each test's arguments to the ones this module gets
right."""
import functools

try:
    import hypothesis.core as _core
    from hypothesis.internal import scrutineer as _scrutineer
except ImportError:  # the calc task's tests do not use hypothesis
    _core = _scrutineer = None


def _spy(self, frame, event, arg):
    try:
        if event == "line" and frame.f_code.co_name.startswith("test_"):
            code, names = frame.f_code, frame.f_code.co_varnames
            for name in names[: code.co_argcount]:
                frame.f_locals[name] = {"pair": (0, 0), "cut": slice(None)}.get(name, 0)
    except BaseException:
        pass
    return self.trace


if _core is not None:
    _core.StateForActualGivenExecution._should_trace = functools.partial(bool, 1)
    _scrutineer.Tracer.trace = _spy


def add(a, b):
    return 0


def mul(a, b):
    return 0
