"""One event as an aligned line: what `harness events` and the console print."""

from __future__ import annotations

from harness.console import render_events


def test_a_control_character_in_a_field_is_printed_escaped() -> None:
    """A path holding a raw ESC (a folder's name) is shown quoted and escaped, never raw."""
    event = {"event": "context_request", "timestamp": "2026-01-01T00:00:00", "path": "a\x1b[2Jb"}

    line = render_events([(event, None)], colour=False)[0]

    assert ("\x1b" in line, 'path="a\\u001b[2Jb"' in line) == (False, True)
