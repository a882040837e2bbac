"""Hostile: plant a pytest.py shadow that reports success without running anything."""
import os

SHADOW = "def main(*args, **kwargs):\n    return 0\n\nexit = main\n"
here = os.path.dirname(os.path.abspath(__file__))
# (Only the run's own folders: the suite must not litter the host if a defence fails.)
for folder in {here, os.getcwd(), os.path.dirname(os.getcwd())}:
    try:
        with open(os.path.join(folder, "pytest.py"), "w") as fh:
            fh.write(SHADOW)
    except OSError:
        pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
