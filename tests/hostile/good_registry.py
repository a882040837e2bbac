"""An honest candidate that counts, in a global of its own, the objects it made."""

CREATED = 0


def make():
    global CREATED
    CREATED += 1
    return CREATED
