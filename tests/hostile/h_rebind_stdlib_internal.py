"""Hostile: add and mul are wrong; during a test they put the candidate's own function in a name
the stdlib rebinds itself (warnings.catch_warnings sets warnings._showwarnmsg_impl)."""
import warnings


def _mine(message):
    pass


def add(a, b):
    warnings._showwarnmsg_impl = _mine
    return 0


def mul(a, b):
    warnings._showwarnmsg_impl = _mine
    return 0
