"""Hostile: pytest.exit with return code 0, at import and inside a test."""
import pytest


def add(a, b):
    pytest.exit("all tests passed", returncode=0)


def mul(a, b):
    return 0


if __name__ != "__main__":
    pytest.exit("nothing to see", returncode=0)
