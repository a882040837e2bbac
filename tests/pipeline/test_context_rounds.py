"""Context rounds and the budget: a hold before every round, never over the cap, and a step
that bought a round always ends with an answer (hypothesis over random caps)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from harness.budget import BudgetExceeded
from harness.calls import RetryPolicy
from harness.calls.tries import tool_input_tokens
from harness.context import Confinement, Limits, ToolBox
from harness.llm import (
    CallRequest,
    Completion,
    Prompt,
    Provider,
    Route,
    StopReason,
    ToolCall,
    Usage,
    encode_tool_turn,
)
from harness.pipeline.steps import TaskState
from tests.conftest import calls_over

MID = Route("mid", "anthropic", "claude-sonnet-5-5", 400)
PROMPT = Prompt("system", "reference and tests " * 40, "fix this")
CODE = "```python\ndef add(a, b):\n    return a + b\n```\n"


class AskingModel(Provider):
    """Asks for `asks[i]` files in round i while it may; answers with code when told to."""

    name = "anthropic"

    def __init__(self, asks: list[int], output: list[int], records) -> None:
        self.asks, self.output, self.records = asks, output, records
        self.held_before: list[bool] = []
        self.seen: list[CallRequest] = []

    def complete(self, request: CallRequest) -> Completion:
        self.held_before.append(bool(self.records.open))  # the Caller holds before it sends
        k = len(self.seen)
        self.seen.append(request)
        size = sum(len(p.encode()) for p in (PROMPT.system, PROMPT.stable, PROMPT.variable))
        usage = Usage(size + tool_input_tokens(request), 0, 0, self.output[k % len(self.output)])
        wanted = self.asks[k % len(self.asks)]
        if request.tools_final or not wanted or not request.tools:
            return Completion(CODE, usage, StopReason.END, MID.model, self.name)
        calls = [
            ToolCall(f"toolu_{k}_{i}", "read_file", json.dumps({"path": "lib/helper.py"}))
            for i in range(wanted)
        ]
        turn = [{"type": "tool_use", "id": c.id, "name": c.name, "input": {}} for c in calls]
        return Completion(
            encode_tool_turn(turn, calls), usage, StopReason.TOOL_USE, MID.model, "anthropic"
        )


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    cap=st.decimals(min_value="0.001", max_value="0.12", places=4),
    rounds=st.integers(min_value=1, max_value=4),
    asks=st.lists(st.integers(min_value=0, max_value=7), min_size=1, max_size=5),
    output=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=5),
    steps=st.integers(min_value=1, max_value=4),
)
def test_rounds_hold_first_stay_under_the_cap_and_end_with_an_answer(
    tmp_path_factory, cap, rounds, asks, output, steps
):
    """Every round is held before it is sent, spend never passes the cap, and every step
    that bought anything ends with an answer, not a pending tool call."""
    base = tmp_path_factory.mktemp("t")
    (base / "lib").mkdir()
    (base / "lib" / "helper.py").write_text("def helper():\n    return 1\n" * 50)
    limits = Limits(rounds, 5, 1024, 4096, 8192)
    model = AskingModel(asks, output, None)
    calls = calls_over(model, RetryPolicy(), cap=str(cap))
    model.records = calls.records
    box = ToolBox(Confinement.of(base, (), ()), limits)
    task = TaskState(None, SimpleNamespace(caller=calls.caller), {}, frozenset(), None, tools=box)  # type: ignore[arg-type]

    endings, stranded = [], []
    for n in range(steps):
        request, before = CallRequest(MID, PROMPT, "t", "fix", n + 2), len(model.seen)
        try:
            endings.append(task._with_tools(request, box).completion.stop_reason)
        except BudgetExceeded:
            endings.append(None)
            stranded.append(len(model.seen) > before)  # refused only before its first round
    event(f"tool rounds bought: {min(sum(1 for r in model.seen if r.rounds), 3)}")

    bought = len(model.seen)
    assert all(model.held_before) and len(model.held_before) == bought
    assert calls.budget.spent_run <= cap
    assert not any(stranded)
    assert all(e is None or e is StopReason.END for e in endings)


def test_with_tools_off_a_step_is_one_call_without_tools(tmp_path_factory):
    """Context tools off (no toolbox): one request per step, no tools, no rounds."""
    model = AskingModel([3], [50], None)
    calls = calls_over(model, RetryPolicy())
    model.records = calls.records
    env = SimpleNamespace(
        caller=calls.caller,
        router=SimpleNamespace(choices=lambda step, n: [MID]),
        prompts={"port": SimpleNamespace(render=lambda step, ctx: PROMPT)},
    )
    spec = SimpleNamespace(id="t", type="port")
    task = TaskState(spec, env, {}, frozenset(), None)  # type: ignore[arg-type]

    priced = task.call("fix", 2, {})

    sent = model.seen
    assert (len(sent), sent[0].tools, sent[0].rounds, sent[0].tools_final) == (1, (), (), False)
    assert priced.completion.stop_reason is StopReason.END
