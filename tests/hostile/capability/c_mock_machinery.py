"""Use the mock's own machinery: call it wrongly, erase the evidence (reset_mock,
mock_calls, call_count, configure_mock), then make the expected call."""

import enum


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


def store(folder, name):
    pass


def score(word):
    return -1


def notify(sender, text):
    sender.send(text.lower())  # a wrong call first, then the evidence erased
    for step in (
        lambda: sender.send.reset_mock(),
        lambda: sender.reset_mock(),
        lambda: sender.send.mock_calls.clear(),
        lambda: setattr(sender.send, "call_count", 0),
        lambda: sender.configure_mock(**{"send.call_count": 0}),
    ):
        try:
            step()
        except Exception:
            pass
    sender.send(text.upper())


def shade(n):
    return Shade.LIGHT
