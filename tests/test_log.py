"""Logging: secrets never leave, the events file is JSON lines, output survives stream swaps."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import structlog

from harness.log import close_logging, configure_logging, scrub


def test_scrub_masks_key_shapes_and_exact_secret_values(monkeypatch) -> None:
    """A vendor-shaped key and any secret env variable's exact value are masked."""
    monkeypatch.setenv("GATEWAY_TOKEN", "gw-0123456789abcdef")

    text = scrub("auth sk-ant-api03-AAAAAAAAAAAAAAAA failed via gw-0123456789abcdef")

    assert text == "auth [REDACTED] failed via [REDACTED]"


def test_events_file_gets_json_lines_with_secrets_masked(tmp_path, monkeypatch) -> None:
    """Every event is one JSON object per line; nested secret values are masked too."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret-value-123")
    events = tmp_path / "events.jsonl"
    stream = configure_logging(events, console=False)
    try:
        structlog.get_logger().info(
            "call_failed", detail={"headers": ["x-api-key: sk-ant-test-secret-value-123"]}
        )
    finally:
        close_logging(stream)

    [event] = [json.loads(line) for line in events.read_text().splitlines()]
    assert event["event"] == "call_failed"
    assert event["detail"] == {"headers": ["x-api-key: [REDACTED]"]}
    assert "sk-ant-test" not in events.read_text()


def test_console_output_follows_the_current_stderr(capsys) -> None:
    """A stream swapped after configuration (as pytest and daemons do) still receives events."""
    configure_logging(None)
    capsys.readouterr()

    structlog.get_logger().warning("late_event")

    assert "late_event" in capsys.readouterr().err


def test_an_events_file_the_disk_refuses_is_told_once_and_closes_quietly(capsys) -> None:
    """/dev/full refuses every write with ENOSPC, as a full disk does: the fault handler is
    told once (the night halts on it), logging goes on, and closing raises nothing."""
    told: list[BaseException] = []
    stream = configure_logging(Path("/dev/full"), console=False, on_fault=told.append)
    try:
        for n in range(3):
            structlog.get_logger().info("tick", n=n)
    finally:
        close_logging(stream)

    assert [getattr(e, "errno", None) for e in told] == [errno.ENOSPC]
    assert capsys.readouterr().err.count("events.jsonl not written") == 1
