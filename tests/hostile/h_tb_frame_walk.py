"""Hostile: reach the callers' frames through an exception's traceback and read the running
test's locals (its expected values) from there."""


def _callers():
    try:
        raise RuntimeError
    except RuntimeError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        yield frame
        frame = frame.f_back


def add(a, b):
    for frame in _callers():
        if frame.f_code.co_name.startswith("test_"):
            return 4 if frame.f_code.co_name == "test_add" else -2
    return 0


def mul(a, b):
    return 0
