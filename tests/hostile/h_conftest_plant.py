"""Hostile: plant a conftest.py (everything passes) wherever pytest might pick it up."""
import os

PLANT = '''
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    report.longrepr = None
    return report
'''
here = os.path.dirname(os.path.abspath(__file__))
# (Only the run's own folders: the suite must not litter the host if a defence fails.)
for folder in {here, os.getcwd(), os.path.join(os.getcwd(), "acceptance"), os.path.dirname(os.getcwd())}:
    try:
        with open(os.path.join(folder, "conftest.py"), "w") as fh:
            fh.write(PLANT)
    except OSError:
        pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
