"""End to end: `harness run` on the third vendor, the real `openai` SDK against fake
OpenAI-compatible servers reached through a named endpoint's base_url (or OPENAI_BASE_URL)."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest
import structlog

from harness.cli import main
from harness.keys import MASK, scrub
from harness.llm import Usage
from harness.pricing import Price, cost, load_prices
from harness.results import usd
from tests.conftest import write
from tests.fakebatch import BatchScript, EntryScript
from tests.fakeserver import FakeLLMServer, openai_base, openai_error, openai_reply, openai_sse

pytestmark = pytest.mark.slow

# A key variable whose name does not look secret: only declaring it gets it scrubbed.
KEY_VAR, KEY = "GW_AUTH", "gw-live-9f8e7d6c5b4a39281706"
LOCAL_KEY_VAR, LOCAL_KEY = "LOCAL_AUTH", "local-live-0a1b2c3d4e5f60718293"
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
WRITE_REPLY = f"Here is the port.\n\n```python\n{SOLUTION}```\n"
BIG, SMALL = "coder-large", "coder-small"


def endpoint_yaml(name: str, url: str, key_var: str | None, models: dict) -> str:
    key = f"    api_key_env: {key_var}\n" if key_var else ""
    rows = "".join(
        f"      {m}: {{input_usd_per_mtok: {i}, output_usd_per_mtok: {o}"
        + (f", cache_read_usd_per_mtok: {c}" if c is not None else "")
        + "}\n"
        for m, (i, o, c) in models.items()
    )
    return f"  {name}:\n    api: openai\n    base_url: {url}\n{key}    models:\n{rows}"


def config(endpoints: str, cheap: tuple[str, str], mid: tuple[str, str], extra: str = "") -> str:
    return (
        "endpoints:\n"
        + endpoints
        + textwrap.dedent(f"""\
        routes:
          cheap: {{provider: {cheap[0]}, model: {cheap[1]}, max_tokens: 4096}}
          mid: {{provider: {mid[0]}, model: {mid[1]}, max_tokens: 32000}}
          frontier: {{provider: {mid[0]}, model: {mid[1]}, max_tokens: 32000}}
        provider_timeout_s: 30
        """)
        + extra
    )


GW_PRICES = {BIG: ("3", "15", None), SMALL: ("0.5", "1.5", "0.05")}


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def gw(monkeypatch: pytest.MonkeyPatch):
    """A fake OpenAI-compatible gateway, its key in a variable named by the config."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv(KEY_VAR, KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def task_list(task_dir: Path, gw: FakeLLMServer) -> Path:
    """The calc task, its night routed wholly to the endpoint `gw`."""
    endpoints = endpoint_yaml("gw", openai_base(gw), KEY_VAR, GW_PRICES)
    write(task_dir / "harness.yaml", config(endpoints, ("gw", SMALL), ("gw", BIG)))
    return write(
        task_dir / "tasks.yaml",
        """
        tasks:
          - id: calc
            reference: legacy/calc.py
            tests: acceptance/test_calc.py
            output: out/calc_service.py
        """,
    )


def run(task_list: Path, *extra: str) -> tuple[int, dict, list[dict]]:
    runs = task_list.parent / "runs"
    argv = ["run", str(task_list), "--run-dir", str(runs), "--concurrency", "1"]
    argv += ["--config", str(task_list.parent / "harness.yaml"), *extra]
    code = main(argv if "--provider" in extra else [*argv, "--provider", "live"])
    root = (runs / "latest").resolve()
    summary = json.loads((root / "summary.json").read_text())
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    return code, summary, events


def price(model: str, i: str, o: str, c: str | None = None) -> Price:
    rate = Decimal(i)
    return Price(model, "gw", rate, Decimal(o), rate, Decimal(c) if c else rate)


def calls_cost(events: list[dict]) -> dict[str, Decimal]:
    return {e["model"]: Decimal(e["cost_usd"]) for e in events if e["event"] == "call_finished"}


def test_a_night_on_a_named_endpoint_passes_and_spends_its_usage_at_its_prices(gw, task_list):
    """Write (streamed) and review (plain) both go to the endpoint, each with its model and
    the endpoint's key; summary.json's spend is the usage priced by the endpoint's prices."""
    gw.script(
        openai_sse(WRITE_REPLY, model=BIG, prompt=1200, completion=400),
        openai_reply("CLEAN", model=SMALL, prompt=2000, cached=500, completion=3),
    )
    expected = {
        BIG: cost(Usage(1200, 0, 0, 400), price(BIG, *GW_PRICES[BIG])),
        SMALL: cost(Usage(1500, 0, 500, 3), price(SMALL, *GW_PRICES[SMALL])),
    }

    code, summary, events = run(task_list)

    task = summary["tasks"][0]
    sent = [(r.path, r.json["model"], r.headers["authorization"]) for r in gw.requests]
    assert (code, task["status"]) == (0, "passed")
    assert sent == [
        ("/openai/v1/chat/completions", BIG, f"Bearer {KEY}"),
        ("/openai/v1/chat/completions", SMALL, f"Bearer {KEY}"),
    ]
    assert calls_cost(events) == expected
    assert usd(sum(expected.values())) == summary["budget"]["spent_usd"]
    assert Path(task["output"]).read_text() == SOLUTION


def test_the_endpoint_key_never_reaches_the_run_folder_and_is_scrubbed(gw, task_list):
    """The key, even in a variable whose name does not look secret, is in no file of the run
    and is masked by scrub once the night has read it; the prompts never carry it."""
    gw.script(
        openai_error(500, f"upstream refused key {KEY}", error_type="server_error"),
        openai_sse(WRITE_REPLY, model=BIG),
        openai_reply("CLEAN", model=SMALL),
    )

    code, _, _ = run(task_list)

    files = [p for p in (task_list.parent / "runs").rglob("*") if p.is_file()]
    leaked = [p for p in files if KEY.encode() in p.read_bytes()]
    bodies = [r.body for r in gw.requests]
    assert (code, leaked) == (0, [])
    assert scrub(f"key {KEY}") == f"key {MASK}"
    assert not any(KEY.encode() in b for b in bodies)


def test_prices_of_zero_spend_nothing(gw, task_dir, task_list):
    """A local model priced at 0 runs the night for $0, every call recorded at $0."""
    zero = {BIG: ("0", "0", None), SMALL: ("0", "0", None)}
    endpoints = endpoint_yaml("gw", openai_base(gw), None, zero)
    write(task_dir / "harness.yaml", config(endpoints, ("gw", SMALL), ("gw", BIG)))
    gw.script(
        openai_sse(WRITE_REPLY, model=BIG, prompt=1200, completion=400),
        openai_reply("CLEAN", model=SMALL, prompt=2000, completion=3),
    )

    code, summary, events = run(task_list)

    assert (code, summary["budget"]["spent_usd"]) == (0, 0)
    assert set(calls_cost(events).values()) == {Decimal(0)}


def test_a_model_with_no_price_anywhere_is_refused_at_start(gw, task_dir, task_list, capsys):
    """A route to a model neither the endpoint nor the price table prices: exit 2, no call."""
    endpoints = endpoint_yaml("gw", openai_base(gw), KEY_VAR, GW_PRICES)
    write(task_dir / "harness.yaml", config(endpoints, ("gw", SMALL), ("gw", "mystery-model")))

    code = main(["run", str(task_list), "--provider", "live", "--run-dir",
                 str(task_dir / "runs"), "--config", str(task_dir / "harness.yaml")])  # fmt: skip

    err = capsys.readouterr().err
    assert (code, len(gw.requests)) == (2, 0)
    assert "mystery-model" in err and "endpoints.gw.models" in err


def test_a_refused_key_halts_after_exactly_one_request(gw, task_list):
    """A 401 from the endpoint halts the night (exit 4) before any other request goes."""
    extra = "".join(
        f"  - id: calc_{n}\n    reference: legacy/calc.py\n    tests: acceptance/test_calc.py\n"
        f"    output: out{n}/calc_service.py\n"
        for n in (2, 3)
    )
    task_list.write_text(task_list.read_text() + extra)
    gw.script(openai_error(401, "Incorrect API key provided", code="invalid_api_key"))

    code, summary, _ = run(task_list, "--concurrency", "3")

    assert (code, summary["status"], len(gw.requests)) == (4, "halted", 1)


def test_a_rate_limit_then_an_answer_is_one_retry(gw, task_list):
    """A 429 with retry-after-ms, then 200: one retry, logged, and the task passes."""
    gw.script(
        openai_error(429, "Rate limit reached", error_type="requests",
                     code="rate_limit_exceeded", headers={"retry-after-ms": "1"}),
        openai_sse(WRITE_REPLY, model=BIG),
        openai_reply("CLEAN", model=SMALL),
    )  # fmt: skip

    code, _, events = run(task_list)

    retries = [(e["reason"], e["status"]) for e in events if e["event"] == "call_retry"]
    assert (code, len(gw.requests), retries) == (0, 3, [("rate_limit", 429)])


def test_a_night_mixing_endpoints_prices_each_call_on_its_own(gw, task_dir, task_list, monkeypatch):
    """Write on one endpoint, review on another serving the same model id at other prices:
    each call goes to its own server with its own key and is priced by its own endpoint."""
    monkeypatch.setenv(LOCAL_KEY_VAR, LOCAL_KEY)
    with FakeLLMServer() as local:
        endpoints = endpoint_yaml("gw", openai_base(gw), KEY_VAR, {"coder": ("3", "15", None)})
        endpoints += endpoint_yaml(
            "local", openai_base(local), LOCAL_KEY_VAR, {"coder": ("0.1", "0.2", None)}
        )
        write(task_dir / "harness.yaml", config(endpoints, ("local", "coder"), ("gw", "coder")))
        gw.script(openai_sse(WRITE_REPLY, model="coder", prompt=1000, completion=400))
        local.script(openai_reply("CLEAN", model="coder", prompt=3000, completion=2))

        code, summary, events = run(task_list)

    spent = [
        (e["provider"], Decimal(e["cost_usd"])) for e in events if e["event"] == "call_finished"
    ]
    write_cost = cost(Usage(1000, 0, 0, 400), price("coder", "3", "15"))
    review_cost = cost(Usage(3000, 0, 0, 2), price("coder", "0.1", "0.2"))
    assert (code, summary["tasks"][0]["status"]) == (0, "passed")
    assert spent == [("gw", write_cost), ("local", review_cost)]
    assert gw.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert local.requests[0].headers["authorization"] == f"Bearer {LOCAL_KEY}"


def test_resume_and_replay_buy_nothing_twice(gw, task_list):
    """A night halted at its review resumes without buying its write again; a replay of the
    finished night sends nothing and spends nothing."""
    gw.script(
        openai_sse(WRITE_REPLY, model=BIG, prompt=1200, completion=400),
        openai_error(401, "Incorrect API key provided", code="invalid_api_key"),
    )
    first, _, _ = run(task_list)
    gw.script(openai_reply("CLEAN", model=SMALL, prompt=2000, completion=3))

    resumed, summary, events = run(task_list, "--resume")
    replayed, again, _ = run(task_list, "--provider", "replay", "--replay-from", summary["run_id"])

    expected = cost(Usage(1200, 0, 0, 400), price(BIG, *GW_PRICES[BIG])) + cost(
        Usage(2000, 0, 0, 3), price(SMALL, *GW_PRICES[SMALL])
    )
    models = [r.json["model"] for r in gw.requests]
    assert (first, resumed, replayed) == (4, 0, 0)
    assert models == [BIG, SMALL, SMALL]  # the write once; the refused review, then its retry
    assert [e["step"] for e in events if e["event"] == "call_reused"] == ["write"]
    assert summary["budget"]["spent_usd"] == usd(expected)
    assert (again["tasks"][0]["status"], again["budget"]["spent_usd"]) == ("passed", 0)


def test_batch_mode_sends_the_writes_through_openais_batch_api(task_dir, monkeypatch):
    """On the built-in `openai` (OPENAI_BASE_URL), batch mode uploads the first writes as one
    batch: no interactive write, each write priced at half the list price."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openaibatchfakekey000000000000")
    with FakeLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", openai_base(server))
        server.batches.script(BatchScript(polls=1, default=EntryScript(text=WRITE_REPLY)))
        server.script(*[openai_reply("CLEAN", model="gpt-5-mini") for _ in range(2)])
        write(task_dir / "harness.yaml", textwrap.dedent("""\
            routes:
              cheap: {provider: openai, model: gpt-5-mini, max_tokens: 4096}
              mid: {provider: openai, model: gpt-5.2, max_tokens: 32000}
              frontier: {provider: openai, model: gpt-5.5, max_tokens: 32000}
            provider_timeout_s: 30
            batch: {enabled: true, steps: [write], deadline: "10m", poll_s: 0.05, max_poll_s: 0.2}
            """))  # fmt: skip
        tasks = write(task_dir / "tasks.yaml", "tasks:\n" + "".join(
            f"  - {{id: t{n}, reference: legacy/calc.py, tests: acceptance/test_calc.py, "
            f"output: out{n}/calc_service.py}}\n" for n in range(2)))  # fmt: skip

        code, summary, _ = run(tasks)

    interactive = [r for r in server.requests if r.path.endswith("/chat/completions")]
    db = sqlite3.connect(task_dir / "runs" / "harness.db")
    writes = [Decimal(c) for (c,) in db.execute("SELECT cost_usd FROM calls WHERE step='write'")]
    full = cost(Usage(100, 0, 0, 50), load_prices().get("gpt-5.2"))
    assert (code, server.batches.creates["openai"]) == (0, 1)
    assert [r.json["model"] for r in interactive] == ["gpt-5-mini"] * 2  # the reviews only
    assert writes == [full / 2] * 2
    assert [t["status"] for t in summary["tasks"]] == ["passed"] * 2


def test_a_simulated_night_prices_openai_and_endpoint_models(task_dir):
    """`--provider sim` on routes to the built-in openai and to a named endpoint: each model
    is priced as its configured provider prices it (the table, the endpoint's own rows)."""
    endpoints = endpoint_yaml("gw", "http://127.0.0.1:9/v1", None, {SMALL: ("0", "0", None)})
    write(task_dir / "harness.yaml", config(endpoints, ("gw", SMALL), ("openai", "gpt-5.2")))
    tasks = write(task_dir / "tasks.yaml", textwrap.dedent("""\
        tasks:
          - id: calc
            reference: legacy/calc.py
            tests: acceptance/test_calc.py
            output: out/calc_service.py
            solution: solutions/calc_service.py
        """))  # fmt: skip

    code, summary, events = run(tasks, "--provider", "sim", "--seed", "1")

    spent = {e["model"]: Decimal(e["cost_usd"]) for e in events if e["event"] == "call_finished"}
    assert (code, summary["status"]) == (0, "completed")
    assert spent[SMALL] == 0 < spent["gpt-5.2"]


def test_the_five_line_local_server_config_of_the_docs_runs_a_night(task_dir, monkeypatch):
    """docs/providers.md's local-server config, as printed (five lines), runs a whole night
    on the local server with no key at all, for $0."""
    docs = (Path(__file__).parents[2] / "docs" / "providers.md").read_text()
    block = docs.split("in five lines of config:\n\n```yaml\n")[1].split("```")[0]
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with FakeLLMServer() as local:
        write(
            task_dir / "harness.yaml",
            block.replace("http://localhost:11434/v1", openai_base(local)),
        )
        local.script(
            openai_sse(WRITE_REPLY, model="qwen2.5-coder"),
            openai_reply("CLEAN", model="qwen2.5-coder"),
        )
        tasks = write(task_dir / "tasks.yaml", textwrap.dedent("""\
            tasks:
              - id: calc
                reference: legacy/calc.py
                tests: acceptance/test_calc.py
                output: out/calc_service.py
            """))  # fmt: skip

        code, summary, _ = run(tasks)

    assert len(block.strip().splitlines()) == 5
    assert (code, summary["tasks"][0]["status"], summary["budget"]["spent_usd"]) == (0, "passed", 0)
    assert [r.json["model"] for r in local.requests] == ["qwen2.5-coder"] * 2


HELPER = "def helper():\n    return 'the sibling module the task list forgot'\n"
BROKEN = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"


def test_a_fix_on_an_endpoint_reads_a_file_through_native_tool_calls(gw, task_dir, task_list):
    """With context tools on, the fix asks for a file by a native tool call (streamed), gets
    its content back as a `tool` message answering the call's id, then answers with code."""
    write(task_dir / "lib" / "helper.py", HELPER)
    endpoints = endpoint_yaml("gw", openai_base(gw), KEY_VAR, GW_PRICES)
    loop = "loop: {review: false, context_tools: {enabled: true}}\n"
    write(task_dir / "harness.yaml", config(endpoints, ("gw", SMALL), ("gw", BIG), loop))
    gw.script(
        openai_sse(f"```python\n{BROKEN}```\n", model=BIG, prompt=900, completion=60),
        openai_sse("", model=BIG, calls=[("call_7", "read_file", {"path": "lib/helper.py"})],
                   finish="tool_calls", prompt=1100, completion=40),
        openai_sse(WRITE_REPLY, model=BIG, prompt=1300, completion=70),
    )  # fmt: skip

    code, summary, events = run(task_list)

    write_body, ask_body, answer_body = (r.json for r in gw.requests)
    turn, result = answer_body["messages"][2], answer_body["messages"][3]
    expected = sum(
        (cost(Usage(i, 0, 0, o), price(BIG, *GW_PRICES[BIG])) for i, o in
         ((900, 60), (1100, 40), (1300, 70))), Decimal(0),
    )  # fmt: skip
    assert (code, summary["tasks"][0]["status"]) == (0, "passed")
    assert turn["tool_calls"][0]["id"] == result["tool_call_id"] == "call_7"
    assert result == {"role": "tool", "tool_call_id": "call_7", "content": HELPER}
    assert write_body["tools"] == ask_body["tools"] == answer_body["tools"]
    assert [e["ok"] for e in events if e["event"] == "context_request"] == [True]
    assert summary["budget"]["spent_usd"] == usd(expected)
