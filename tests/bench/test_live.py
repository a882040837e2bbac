"""`make bench-live`: skipped without keys (exit 0); with keys, every policy night runs through
the real SDKs (here against the fake servers, dummy keys) and the whole under its hard cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.__main__ import main as bench_main
from bench.live import NIGHTS, missing_keys
from bench.policies import NIGHT, POLICIES
from harness.config import load_config
from tests.e2e.test_providers_wire import (  # noqa: F401 - fixtures
    CHEAP,
    MID,
    WRITE_REPLY,
    restore_logging,
    servers,
    task_list,
)
from tests.fakebatch import BatchScript, EntryScript
from tests.fakeserver import anthropic_sse, gemini_reply

BROKEN = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
BROKEN_REPLY = f"Here is the port.\n\n```python\n{BROKEN}```\n"
EDIT_REPLY = (
    "The fix:\n\n<<<<<<< SEARCH\ndef add(a, b):\n    return a - b\n=======\n"
    "def add(a, b):\n    return a + b\n>>>>>>> REPLACE\n"
)

KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
# The simulated comparison's record, whose format the live one shares.
SIMULATED = json.loads(
    (Path(__file__).resolve().parents[2] / "bench" / "results" / "latest.json").read_text()
)


@pytest.mark.slow
def test_without_keys_it_rehearses_every_night_against_the_fake_vendors(
    monkeypatch, capsys, tmp_path
) -> None:
    """No key: a message naming the variables, then every night through the real SDKs
    against fake vendors (the night in rounds through both batch APIs, its fix an edit),
    within the cap, exit 0; the record written where --out says, never bench/results/."""
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "rehearsal.json"

    code = bench_main(["--live", "--cap-usd", "3", "--out", str(out)])

    err = capsys.readouterr().err
    results = json.loads(out.read_text())
    night = next(n for n in results["nights"] if n["variant"] == NIGHT)
    assert code == 0
    assert "ANTHROPIC_API_KEY" in err and "GEMINI_API_KEY or GOOGLE_API_KEY" in err
    assert "rehearsal" in err and "1 Gemini batches" in err and "SEARCH/REPLACE edits: True" in err
    assert results["provider"].startswith("rehearsal") and results["checks"]["within_cap"]
    assert set(results["figures"]["policies"]["policies"]) == {"baseline", *POLICIES, NIGHT}
    assert [t["shipped_passed"] for t in night["tasks"]] == [night["tasks"][0]["total"]]


def test_either_gemini_variable_will_do() -> None:
    """GOOGLE_API_KEY stands in for GEMINI_API_KEY, as the SDK reads either."""
    config = load_config()

    missing = missing_keys(config, {"ANTHROPIC_API_KEY": "a", "GOOGLE_API_KEY": "g"})

    assert missing == []


@pytest.mark.slow
def test_every_policy_night_runs_through_the_real_sdks_under_the_cap(
    servers,  # noqa: F811
    task_list,  # noqa: F811
    tmp_path,
    monkeypatch,
) -> None:
    """The published loop and each policy pass the task through the fake Anthropic and
    Gemini servers, and the night in batch rounds through their batch APIs (its fix an
    edit); the record has every key of the simulated one (the committed
    bench/results/latest.json), renders with the same tables and spends within the cap."""
    anthropic, gemini = servers
    nights = 1 + len(POLICIES)  # interactive; the night in rounds goes through the batches
    reviews = nights - sum(1 for p in POLICIES.values() if p and "review: false" in p)
    write = anthropic_sse(WRITE_REPLY, model=MID, input_tokens=1200, output_tokens=400)
    anthropic.script(*[write] * nights)
    gemini.script(*[gemini_reply("CLEAN", model_version=CHEAP, prompt=900, candidates=2)] * reviews)
    # The night in rounds: a write with a bug (round 1), a CLEAN review (round 2), a fix as
    # a SEARCH/REPLACE block (round 3), each a batch of the vendor's.
    anthropic.batches.script(
        BatchScript(default=EntryScript(text=BROKEN_REPLY, bill=(1200, 0, 0, 400))),
        BatchScript(default=EntryScript(text=EDIT_REPLY, bill=(1300, 0, 0, 40))),
    )
    gemini.batches.script(BatchScript(default=EntryScript(text="CLEAN", bill=(900, 0, 0, 2))))
    monkeypatch.setattr("bench.live.ROUNDS_POLL_S", 0.05)
    out = tmp_path / "live.json"

    code = bench_main(
        ["--live", "--tasks-yaml", str(task_list), "--cap-usd", "3", "--out", str(out)]
    )

    results = json.loads(out.read_text())
    table = results["figures"]["policies"]["policies"]
    assert code == 0
    missing = (set(SIMULATED) - set(results), set(SIMULATED["figures"]) - set(results["figures"]))
    assert missing == (set(), set())
    # The live record prices no night it did not run: no same-billing row, no sweep.
    only_simulated = {"meets_target_across_range", "same_billing"}
    assert set(SIMULATED["headline"]) - set(results["headline"]) <= only_simulated
    assert set(table) == {"baseline", *POLICIES, NIGHT}
    assert {v: t["pass_rate"] for v, t in table.items()} == {v: 1.0 for v in table}
    assert results["headline"]["pass_rate_ratio"] == 1.0
    assert 0 < results["spent_usd"] <= 3 and all(v is not False for v in results["checks"].values())
    assert "### Loop policies" in out.with_suffix(".md").read_text()
    assert (anthropic.batches.creates["anthropic"], gemini.batches.creates["gemini"]) == (2, 1)
    fix = next(r for r in anthropic.batches.batches.values() if "fix" in str(r.requests))
    assert "SEARCH/REPLACE" in json.dumps(fix.requests)  # the fix asked for edits
    night = next(n for n in results["nights"] if n["variant"] == NIGHT)
    assert [t["shipped_passed"] for t in night["tasks"]] == [night["tasks"][0]["total"]]


def test_a_cap_too_small_to_start_the_nights_is_refused_before_any_call(
    servers,  # noqa: F811
    task_list,  # noqa: F811
    tmp_path,
    capsys,
) -> None:
    """A cap that cannot hold a few calls a night says how much to give; nothing is sent."""
    anthropic, gemini = servers
    out = tmp_path / "live.json"

    code = bench_main(
        ["--live", "--tasks-yaml", str(task_list), "--cap-usd", "0.05", "--out", str(out)]
    )

    err = capsys.readouterr().err
    assert (code, out.exists()) == (2, False)
    assert "--cap-usd 0.05" in err and "give at least" in err
    assert (len(anthropic.requests), len(gemini.requests)) == (0, 0)


@pytest.mark.slow
def test_bench_live_runs_its_nights_on_openai_compatible_endpoints(
    tmp_path,
    monkeypatch,
    task_list,  # noqa: F811
    restore_logging,  # noqa: F811
) -> None:
    """`--config` routes every night to named endpoints (writes on one, reviews on another,
    one of them key-less): each night's calls reach them through the real openai SDK and are
    priced by the endpoints' own prices, within the cap."""
    from tests.fakeserver import FakeLLMServer, openai_base, openai_reply, openai_sse

    for key in (*KEYS, "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("WRITER_KEY", "writer-key-0123456789")
    nights = NIGHTS  # a named endpoint has no batch API: the night in rounds is interactive
    with FakeLLMServer() as writer, FakeLLMServer() as reviewer:
        writer.script(*[openai_sse(WRITE_REPLY, model="coder", prompt=900, completion=300)] * 20)
        reviewer.script(*[openai_reply("CLEAN", model="coder", prompt=900, completion=2)] * 20)
        config = tmp_path / "endpoints.yaml"
        config.write_text(
            "endpoints:\n"
            f"  w: {{api: openai, base_url: '{openai_base(writer)}', api_key_env: WRITER_KEY,\n"
            "      models: {coder: {input_usd_per_mtok: 1, output_usd_per_mtok: 2}}}\n"
            f"  r: {{api: openai, base_url: '{openai_base(reviewer)}',\n"
            "      models: {coder: {input_usd_per_mtok: 0, output_usd_per_mtok: 0}}}\n"
            "routes:\n"
            "  cheap: {provider: r, model: coder, max_tokens: 4096}\n"
            "  mid: {provider: w, model: coder, max_tokens: 32000}\n"
            "  frontier: {provider: w, model: coder, max_tokens: 32000}\n"
        )
        out = tmp_path / "live.json"

        code = bench_main(
            ["--live", "--tasks-yaml", str(task_list), "--cap-usd", "3", "--out", str(out),
             "--config", str(config)]
        )  # fmt: skip

    results = json.loads(out.read_text())
    table = results["figures"]["policies"]["policies"]
    per_write = (900 * 1 + 300 * 2) / 1_000_000
    assert code == 0
    assert {v: t["pass_rate"] for v, t in table.items()} == {v: 1.0 for v in table}
    assert len(writer.requests) == nights
    assert {r.headers["authorization"] for r in writer.requests} == {"Bearer writer-key-0123456789"}
    assert results["spent_usd"] == pytest.approx(nights * per_write)
