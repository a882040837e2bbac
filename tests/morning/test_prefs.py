"""`harness export prefs`: preference pairs (best reply vs a worse one) and their sidecar."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness.cli import main
from harness.extract import extract_code
from harness.llm import CallKey, Completion, Prompt, RecordedCall, StopReason, Usage
from harness.morning.prefs import _pair, _Reply
from harness.results import AttemptRecord, Outcome, TestCase, TestResult
from harness.store import StoredAttempt


def export(capsys, out: Path, *argv: str) -> tuple[int, list[dict], list[dict], str]:
    code = main(["export", "prefs", *argv, "--out", str(out)])
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    meta = [
        json.loads(line)
        for line in (out.parent / f"{out.stem}_meta.jsonl").read_text().splitlines()
    ]
    return code, pairs, meta, capsys.readouterr().out


def test_a_reverted_regression_gives_a_pair_preferring_the_best_code(
    example_nights, tmp_path, capsys
):
    """Seed 2: rate_limiter's attempt 3 regressed and was reverted; the pair prefers a reply
    holding the best attempt's code over it, both answering the same fix prompt, and the
    sidecar has the counts and the test deltas."""
    night = example_nights(2)
    summary = json.loads((night / "summary.json").read_text())
    task = next(t for t in summary["tasks"] if t["id"] == "rate_limiter")
    reverted = next(a for a in task["attempts"] if a["regressed"])

    code, pairs, meta, out = export(capsys, tmp_path / "prefs.jsonl", str(night))

    i = next(i for i, m in enumerate(meta) if m["task_id"] == "rate_limiter")
    best = (night / "attempts" / "rate_limiter" / f"{task['best_attempt']}.py").read_text()
    side = meta[i]
    assert (code, len(pairs)) == (0, len(meta))
    assert best == extract_code(pairs[i]["preferred_output"][0]["content"]).code
    assert side["preferred"]["passed"] == task["passed"]
    assert side["non_preferred"]["attempt"] == reverted["n"]
    assert (side["same_prompt"], side["non_preferred"]["regressed"], side["delta_passed"]) == (
        True,
        True,
        task["passed"] - reverted["passed"],
    )
    assert len(side["tests_only_preferred_passes"]) == task["passed"] - reverted["passed"]
    assert f"; {len(summary['tasks']) - len(pairs)} task(s) without a pair" in out


def test_every_line_is_in_the_preference_format(example_nights, tmp_path, capsys):
    """input.messages (system, user), then one assistant message on each side; nothing else."""
    _, pairs, _, _ = export(capsys, tmp_path / "prefs.jsonl", str(example_nights(2)))

    for pair in pairs:
        assert list(pair) == ["input", "preferred_output", "non_preferred_output"]
        assert list(pair["input"]) == ["messages"]
        assert [m["role"] for m in pair["input"]["messages"]] == ["system", "user"]
        for side in ("preferred_output", "non_preferred_output"):
            assert [("assistant", str)] == [(m["role"], type(m["content"])) for m in pair[side]]
        assert pair["preferred_output"] != pair["non_preferred_output"]


def test_several_runs_and_same_prompt_only(example_nights, tmp_path, capsys):
    """Two nights export together; --same-prompt keeps only pairs answering one prompt."""
    nights = [str(example_nights(2)), str(example_nights(3))]  # 3: a pair across prompts

    _, every, every_meta, _ = export(capsys, tmp_path / "all.jsonl", *nights)
    _, strict, strict_meta, _ = export(capsys, tmp_path / "strict.jsonl", *nights, "--same-prompt")

    assert {m["run_id"] for m in every_meta} == {Path(n).name for n in nights}
    assert [m for m in every_meta if m["same_prompt"]] == strict_meta
    assert len(strict) < len(every)


# Choosing the pair.


def reply(
    n: int, passed: int, errors: int, cost: str, prompt: str = "p", regressed=False
) -> _Reply:
    cases = [TestCase(f"t{i}", Outcome.PASSED) for i in range(passed)]
    cases += [TestCase(f"e{i}", Outcome.ERROR) for i in range(errors)]
    cases += [TestCase(f"f{i}", Outcome.FAILED) for i in range(4 - passed - errors)]
    record = AttemptRecord(n, "fix", cost_usd=Decimal(cost), regressed=regressed)
    stored = StoredAttempt("r", record, f"code{n}", TestResult(tuple(cases)))
    completion = Completion(f"reply {n}", Usage(), StopReason.END, "m", "p")
    return _Reply(
        stored, RecordedCall(CallKey("t", "fix", n, prompt), Prompt("", prompt, ""), completion)
    )


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ([reply(1, 3, 0, "0.2"), reply(2, 3, 1, "0.1"), reply(3, 1, 0, "0.1")], (1, 3)),
        ([reply(1, 3, 0, "0.2"), reply(2, 3, 0, "0.1"), reply(3, 1, 0, "0.1")], (2, 3)),
        ([reply(1, 3, 0, "0.1"), reply(2, 0, 0, "0.1", "q"), reply(3, 2, 0, "0.1")], (1, 3)),
        (
            [reply(1, 3, 0, "0.1"), reply(2, 0, 0, "0.1", "q"), reply(3, 2, 0, "0.1", "q", True)],
            (1, 3),
        ),
        (
            [reply(1, 3, 0, "0.1", "a"), reply(2, 0, 0, "0.1", "b"), reply(3, 2, 0, "0.1", "c")],
            (1, 2),
        ),
    ],
)
def test_pair_choice(replies, expected):
    """Preferred: most passes, then fewer errors, then cheaper. Non-preferred: a worse reply
    to the same prompt, else a reverted regression, else the worst."""
    good, bad = _pair(replies)

    assert expected == (good.attempt.record.n, bad.attempt.record.n)


def test_no_contrast_no_pair():
    """One attempt, or attempts all equally good, give no pair."""
    assert (
        _pair([reply(1, 2, 0, "0.1")]),
        _pair([reply(1, 2, 0, "0.1"), reply(2, 2, 0, "0.1")]),
    ) == (None, None)


def test_exporting_again_to_the_same_file_asks_for_force_and_never_says_it_is_not_ours(
    example_nights, tmp_path, capsys
):
    """A second export to the file the first wrote is refused until --force without the
    false claim that the harness did not write it; with --force it is replaced (exit 0)."""
    argv = ["export", "prefs", str(example_nights(2)), "--out", str(tmp_path / "prefs.jsonl")]

    codes = (main(argv), main(argv), main([*argv, "--force"]), main([*argv, "--force"]))

    err = capsys.readouterr().err
    assert codes == (0, 2, 0, 0)
    assert ("pass --force" in err, "did not write" in err) == (True, False)
