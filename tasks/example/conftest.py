"""Shared fixtures for the acceptance tests: fresh nimbus resources and a clock that stands still.

Being at the root, this file also puts the root on sys.path (pytest's rootdir conftest
rule), so `import nimbus` works however pytest is started.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nimbus import EventBus, FixedClock, KeyValueStore

START = datetime(2024, 1, 15, 9, 0, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def store() -> KeyValueStore:
    return KeyValueStore()


@pytest.fixture
def bus() -> EventBus:
    return EventBus()
