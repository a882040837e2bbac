"""The start-of-night check that the write step's first call fits under the caps reserves
what the router will: the route's output cap, or the step's own when smaller."""

from __future__ import annotations

from pathlib import Path

from tests._night import Task, run_cli, write_tasks


def test_a_small_step_max_tokens_for_write_fits_a_cap_its_route_would_not(
    tmp_path: Path, capsys
) -> None:
    """`step_max_tokens: {write: 1000}` under a $0.05 cap: the night runs and passes (1,000
    output tokens of the mid tier cost $0.01), where the route's own 32,000 would cost $0.32
    and be refused at start."""
    tasks = write_tasks(tmp_path / "tasks", [Task("t0", solved=True)])
    config = tmp_path / "harness.yaml"
    config.write_text("step_max_tokens: {review: 1000, write: 1000}\n")

    code, summary, _ = run_cli(
        tasks, tmp_path / "runs", "--config", str(config), "--budget-usd", "0.05"
    )

    assert "may cost" not in capsys.readouterr().err
    assert (code, summary["tasks"][0]["status"]) == (0, "passed")


def test_a_step_max_tokens_still_over_the_cap_is_refused_naming_it(tmp_path: Path, capsys) -> None:
    """`write: 2000` under a $0.015 cap still cannot start: exit 2 naming the step's own cap
    and what it costs."""
    from harness.cli import main

    tasks = write_tasks(tmp_path / "tasks", [Task("t0", solved=True)])
    config = tmp_path / "harness.yaml"
    config.write_text("step_max_tokens: {write: 2000}\n")
    argv = ["run", str(tasks), "--provider", "sim", "--run-dir", str(tmp_path / "runs")]

    code = main([*argv, "--config", str(config), "--budget-usd", "0.015"])
    err = capsys.readouterr().err

    assert code == 2
    assert "may cost $0.02 per call (2000 output tokens" in err
    assert "step_max_tokens.write" in err
