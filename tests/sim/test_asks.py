"""The simulator with context tools: it asks for a block its prompt lacks, seeded, and knows
only what the tool results showed."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from harness.context import TOOLS
from harness.llm import (
    CallRequest,
    Prompt,
    Route,
    StopReason,
    ToolResult,
    ToolRound,
    decode_tool_turn,
)
from harness.sim import SimModel
from harness.sim.asks import Wants, ask, seen
from harness.sim.model import Features
from harness.sim.provider import SimProvider
from harness.tasks.spec import TaskSpec
from tests.conftest import write

MID = Route("mid", "sim", "sim-mid", 8192)
BARE = Prompt("system", "## Reference\n\nlegacy", "write it")
FULL = Prompt("system", "## Platform capabilities\n\n## Gold-standard example\n", "write it")
STUB = "def double(x: int) -> int: ...\n"
ALWAYS = SimModel.shipped().with_values({"reply.ask_for_context": 1.0})
EXAMPLE = "from plat import double\n\n\ndef price(x):\n    return double(x)\n"


def spec(base: Path) -> TaskSpec:
    """A task whose solution imports `plat`, a folder beside the list holding a stub."""
    write(base / "plat" / "__init__.py", "def double(x):\n    return 2 * x\n")
    write(base / "plat" / "caps.pyi", STUB)
    write(base / "solutions" / "calc_service.py", "from plat import double\n\nX = double(2)\n")
    write(base / "legacy" / "calc.py", "X = 4\n")
    return TaskSpec(
        id="calc",
        base_dir=base,
        reference=(base / "legacy" / "calc.py",),
        tests=(),
        output=base / "out" / "calc_service.py",
        solution=base / "solutions" / "calc_service.py",
    )


def request(prompt: Prompt, **tools: object) -> CallRequest:
    return CallRequest(MID, prompt, "calc", "write", 1, **tools)


def answered(first: CallRequest, text: str, *contents: tuple[str, bool]) -> CallRequest:
    """The next round of `first`: its turn, each call answered with (content, is_error)."""
    turn, calls = decode_tool_turn(text)
    results = tuple(
        ToolResult(c.id, c.name, t, e) for c, (t, e) in zip(calls, contents, strict=True)
    )
    done = ToolRound(turn, calls, results)
    return dataclasses.replace(first, step="write+1", rounds=(*first.rounds, done))


def test_wants_finds_the_platform_and_its_stub_from_the_solution(tmp_path: Path):
    """The platform is the solution's import that is a folder of the task's; its stub the
    first .pyi in it; every output's folder is excluded from examples."""
    wants = Wants.of(spec(tmp_path), [tmp_path / "out" / "calc_service.py"])

    assert wants == Wants("plat", "plat/caps.pyi", ("out", "out/calc_service.py"))


def test_a_prompt_without_the_blocks_asks_for_the_stub_and_an_example(tmp_path: Path):
    """Round 0 reads the stub and greps for the platform's import; round 1 reads the first
    grep hit that may be an example (not a test, not an output); then it answers."""
    sim = SimProvider({"calc": spec(tmp_path)}, seed=0, model=ALWAYS)
    first = request(BARE, tools=TOOLS)

    one = sim.complete(first)
    hits = "tests/test_x.py:1: from plat import double\ngold/p.py:1: from plat import double"
    second = answered(first, one.text, (STUB, False), (hits, False))
    two = sim.complete(second)
    third = dataclasses.replace(
        answered(second, two.text, (EXAMPLE, False)), step="write+2", tools_final=True
    )
    final = sim.complete(third)

    asked = [(c.name, c.arguments) for c in decode_tool_turn(one.text)[1]]
    assert (one.stop_reason, two.stop_reason) == (StopReason.TOOL_USE, StopReason.TOOL_USE)
    assert final.stop_reason is not StopReason.TOOL_USE
    assert asked == [
        ("read_file", {"path": "plat/caps.pyi"}),
        ("grep", {"max_hits": 20, "path": ".", "text": "from plat import"}),
    ]
    assert [c.arguments for c in decode_tool_turn(two.text)[1]] == [{"path": "gold/p.py"}]


def test_without_tools_or_with_the_blocks_in_the_prompt_it_answers(tmp_path: Path):
    """No tools offered, the last round, or a prompt holding both blocks: no tool call."""
    sim = SimProvider({"calc": spec(tmp_path)}, seed=0, model=ALWAYS)

    replies = [
        sim.complete(request(BARE)).stop_reason,
        sim.complete(request(BARE, tools=TOOLS, tools_final=True)).stop_reason,
        sim.complete(request(FULL, tools=TOOLS)).stop_reason,
    ]

    assert StopReason.TOOL_USE not in replies


def test_a_block_counts_as_seen_only_from_a_successful_result(tmp_path: Path):
    """A refused read of the stub teaches nothing; a read one marks capabilities, a read
    example marks examples."""
    wants = Wants("plat", "plat/caps.pyi")
    bare = Features("mid", 1, examples=False, capabilities=False)
    text = ask(request(BARE, tools=TOOLS), bare, wants, random.Random(0), 1.0)
    assert text is not None
    turn, calls = decode_tool_turn(text)

    def after(*contents: tuple[str, bool]) -> Features:
        results = tuple(
            ToolResult(c.id, c.name, t, e) for c, (t, e) in zip(calls, contents, strict=True)
        )
        return seen(bare, (ToolRound(turn, calls, results),), wants)

    refused = after(("'plat/caps.pyi' is withheld", True), ("no match", False))
    stub = after((STUB, False), ("no match", False))
    assert (refused.capabilities, stub.capabilities, stub.examples) == (False, True, False)


def test_the_same_seed_asks_the_same_and_the_chance_is_seeded(tmp_path: Path):
    """Two simulators with one seed send the same turn; across seeds the shipped chance
    (0.9) leaves some steps answering without asking."""
    task = spec(tmp_path)
    turns = [SimProvider({"calc": task}, seed=0).complete(request(BARE, tools=TOOLS)).text]
    turns.append(SimProvider({"calc": task}, seed=0).complete(request(BARE, tools=TOOLS)).text)
    stops = [
        SimProvider({"calc": task}, seed=s).complete(request(BARE, tools=TOOLS)).stop_reason
        for s in range(40)
    ]

    assert turns[0] == turns[1]
    assert 0 < stops.count(StopReason.TOOL_USE) < 40
