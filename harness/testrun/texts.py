"""The words of a test run: output tails, reasons for errors, relative paths, redaction.

Everything here may end up in a fix prompt sent to a model, so it is kept short, shows paths
as the tests see them, and never carries one of the harness's own secrets.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.keys import MASK, secret_values
from harness.testrun.channel import Watch
from harness.testrun.score import Settlement, Verdict

__all__ = ["output_tail", "output_text", "relativize", "stop_text", "stuck_reason"]


def relativize(tally: Settlement, root: Path) -> None:
    """Show paths as the tests see them, and redact any secret of ours that got out anyway
    (only possible in the degraded sandbox): all of this text may end up in a prompt."""
    prefix, secrets_ = f"{root}/", secret_values()

    def strip(text: str) -> str:
        text = text.replace(prefix, "")
        for value in secrets_:
            text = text.replace(value, MASK)
        return text

    tally.outputs = [strip(o) for o in tally.outputs]
    tally.first_tail = strip(tally.first_tail)
    tally.cases = {
        k: replace(c, message=strip(c.message), details=strip(c.details))
        for k, c in tally.cases.items()
    }
    tally.collect_errors = [
        replace(e, msg=strip(e.msg), details=strip(e.details)) for e in tally.collect_errors
    ]


def stop_text(ended_by: str) -> str:
    return {
        "deadline": "the run hit its wall-clock timeout",
        "collect_timeout": "collection did not finish in time (a hang at import?)",
    }[ended_by]


def output_tail(seen: Watch, lines: int = 25) -> str:
    text = bytes(seen.output).decode(errors="replace").replace("INTERNALERROR> ", "")
    return "\n".join(text.rstrip().splitlines()[-lines:])


def stuck_reason(seen: Watch, verdict: Verdict) -> tuple[str, str]:
    """Why the test in flight when a launch ended never finished, and the output's tail."""
    if seen.ended_by == "test_timeout":
        reason = "Timeout: the test did not finish and was killed"
    elif seen.ended_by == "deadline":
        reason = "Timeout: the whole run hit its time limit during this test"
    elif verdict.ended is not None:
        reason = (
            "pytest stopped during this test (KeyboardInterrupt, SystemExit, pytest.exit or "
            "an internal error)"
        )
    else:
        reason = f"the test process died during this test (exit status {seen.exit_code})"
    return reason, output_tail(seen)


def output_text(n: int, seen: Watch) -> str:
    text = bytes(seen.output).decode(errors="replace")
    if seen.output_dropped:
        text += f"\n[... {seen.output_dropped} more bytes of output dropped]"
    return text if n == 0 else f"---- relaunch {n} ----\n{text}"
