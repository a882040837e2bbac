"""The honest candidate for the capability hostile task."""

import enum


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


def store(folder, name):
    (folder / name).write_text(name)


def score(word):
    return len(word)


def notify(sender, text):
    sender.send(text.upper())


def shade(n):
    return Shade(n)
