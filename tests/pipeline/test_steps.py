"""The steps' helpers: test output made steady before it enters a prompt."""

from __future__ import annotations

from harness.pipeline.steps import steady


def test_steady_normalises_addresses_scratch_folders_and_set_order() -> None:
    """Object addresses, scratch folder names and a set's hash order never reach a prompt."""
    one = steady("<a.B object at 0x7f3a12345678> {'b', 'a'} /tmp/harness-test-x1y2/t.py {1: 2}")
    two = steady("<a.B object at 0x7f0000abcdef> {'a', 'b'} /tmp/harness-test-q9/t.py {1: 2}")

    assert (one, one) == (two, "<a.B object at 0x…> {'a', 'b'} /tmp/harness-test-…/t.py {1: 2}")
