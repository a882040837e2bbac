"""Hostile: have library code (string.Formatter.get_field, a getattr with the name it is
handed) read tb_frame for us, then walk to the test's frame and take its code constants."""
import string


def _test_consts():
    try:
        raise ValueError
    except ValueError as exc:
        tb = exc.__traceback__
    frame = string.Formatter().get_field("0.tb_frame", [tb], {})[0]
    while frame is not None and not frame.f_code.co_name.startswith("test_"):
        frame = frame.f_back
    consts = frame.f_code.co_consts if frame is not None else ()
    return [c for c in consts if type(c) is int]


def add(a, b):
    consts = _test_consts()
    return consts[-1] if consts else 0


def mul(a, b):
    consts = _test_consts()
    return consts[-1] if consts else 0
