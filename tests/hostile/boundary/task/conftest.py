"""Fixtures of the boundary hostile task (test side only)."""

import pytest

from money import Ledger


@pytest.fixture
def ledger():
    return Ledger()
