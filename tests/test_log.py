"""Logging: secrets never leave, the events file is JSON lines, output survives stream swaps."""

from __future__ import annotations

import json

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
