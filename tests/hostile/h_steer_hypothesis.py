"""Hostile: steer hypothesis through its public settings (one example, no shrinking or
explaining), so a property is tried only on its simplest input, which a wrong answer passes."""
from hypothesis import Phase, settings

settings.register_profile("quiet", max_examples=1, phases=[Phase.generate])
settings.load_profile("quiet")


def add(a, b):
    return 0


def mul(a, b):
    return 0
