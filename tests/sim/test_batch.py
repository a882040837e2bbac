"""The simulator's batch API: same replies as interactive, scriptable timing and outcomes."""

from __future__ import annotations

from pathlib import Path

from harness.llm import (
    BatchItem,
    BatchProvider,
    BatchState,
    BatchStatus,
    CallRequest,
    EntryOutcome,
    Prompt,
    Route,
    ServiceTier,
)
from harness.sim import SimBatch, SimBatchScript
from harness.sim.provider import SimProvider
from harness.tasks.spec import TaskSpec

FIXTURE = Path(__file__).parents[1] / "fixtures" / "simtask"
MID = Route("mid", "sim", "claude-sonnet-5-5", 8192)


def _spec(task_id: str) -> TaskSpec:
    return TaskSpec(
        id=task_id,
        base_dir=FIXTURE,
        reference=(FIXTURE / "legacy" / "carts.py",),
        tests=(FIXTURE / "acceptance" / "check_carts.py",),
        output=FIXTURE / "out" / "carts_service.py",
        solution=FIXTURE / "solution" / "carts_service.py",
    )


def _sim(*ids: str) -> SimProvider:
    return SimProvider({i: _spec(i) for i in ids}, seed=5)


def _item(task_id: str) -> BatchItem:
    prompt = Prompt("system for write", f"context of {task_id}\n", "\n# Your job now\n")
    return BatchItem(task_id, CallRequest(MID, prompt, task_id, "write", 1))


def test_sim_batch_is_a_batch_provider() -> None:
    """It implements the protocol the runner speaks to every vendor."""
    assert isinstance(SimBatch(_sim("a")), BatchProvider)


def test_entries_get_the_interactive_reply_at_the_batch_tier() -> None:
    """A batch and an interactive night differ only in price and timing: same text, same usage."""
    items = [_item("a"), _item("b")]
    batch = SimBatch(_sim("a", "b"), SimBatchScript(polls_to_end=1))
    handle = batch.submit(items, display_name="night")
    batch.status(handle)

    got = {e.custom_id: e.completion for e in batch.results(handle)}

    alone = _sim("a", "b")
    for item in items:
        expected = alone.complete(item.request)
        assert (got[item.custom_id].text, got[item.custom_id].usage) == (
            expected.text,
            expected.usage,
        )
        assert got[item.custom_id].service_tier is ServiceTier.BATCH


def test_counts_stay_zero_until_the_batch_ends() -> None:
    """Vendors report counts only once ended; the script decides when that is."""
    batch = SimBatch(_sim("a"), SimBatchScript(polls_to_end=3))
    handle = batch.submit([_item("a")], display_name="n")

    seen = [batch.status(handle) for _ in range(3)]

    assert seen == [
        BatchStatus(BatchState.RUNNING),
        BatchStatus(BatchState.RUNNING),
        BatchStatus(BatchState.ENDED, succeeded=1),
    ]


def test_a_never_ending_batch_ends_one_poll_after_its_cancel() -> None:
    """Canceled entries that had not run come back CANCELED; done ones keep their outcome."""
    script = SimBatchScript(polls_to_end=None, ready_after={"a": 1})
    batch = SimBatch(_sim("a", "b"), script)
    handle = batch.submit([_item("a"), _item("b")], display_name="n")
    states = [batch.status(handle).state for _ in range(3)]
    batch.cancel(handle)

    after = [batch.status(handle) for _ in range(2)]
    outcomes = {e.custom_id: e.outcome for e in batch.results(handle)}

    assert states == [BatchState.RUNNING] * 3
    assert [s.state for s in after] == [BatchState.CANCELING, BatchState.ENDED]
    assert outcomes == {"a": EntryOutcome.SUCCEEDED, "b": EntryOutcome.CANCELED}


def test_scripted_entries_error_or_expire() -> None:
    """Per-entry outcomes come from the script; such entries carry no completion."""
    script = SimBatchScript(outcomes={"a": EntryOutcome.ERRORED, "b": EntryOutcome.EXPIRED})
    batch = SimBatch(_sim("a", "b", "c"), script)
    handle = batch.submit([_item("a"), _item("b"), _item("c")], display_name="n")
    status = batch.status(handle)

    got = {e.custom_id: (e.outcome, e.completion is None) for e in batch.results(handle)}

    assert (status.errored, status.expired, status.succeeded) == (1, 1, 1)
    assert got == {
        "a": (EntryOutcome.ERRORED, True),
        "b": (EntryOutcome.EXPIRED, True),
        "c": (EntryOutcome.SUCCEEDED, False),
    }


def test_find_and_state_file_are_shared_between_processes(tmp_path: Path) -> None:
    """With a state file a second instance (another process) finds and polls the same batch."""
    state = tmp_path / "sim-batches.json"
    first = SimBatch(_sim("a"), SimBatchScript(polls_to_end=2), state=state)
    handle = first.submit([_item("a")], display_name="harness r1 sim/m #1")
    first.status(handle)
    second = SimBatch(_sim("a"), SimBatchScript(polls_to_end=2), state=state)

    found = second.find("harness r1 sim/m #1")

    assert found == [handle]
    assert second.find("harness r2 sim/m #1") == []
    assert second.status(handle).state is BatchState.ENDED


def test_the_script_can_live_in_the_state_file(tmp_path: Path) -> None:
    """A test steers a CLI night's simulated vendor by writing its script into the file."""
    state = tmp_path / "sim-batches.json"
    state.write_text('{"script": {"polls_to_end": null}, "batches": {}}')
    batch = SimBatch(_sim("a"), state=state)
    handle = batch.submit([_item("a")], display_name="n")

    assert [batch.status(handle).state for _ in range(4)] == [BatchState.RUNNING] * 4


def test_a_batch_ready_after_seconds_ends_by_its_clock_not_its_polls() -> None:
    """With ready_after_s the batch runs until its clock passes submission + that many seconds."""
    now = [1000.0]
    batch = SimBatch(_sim("a"), SimBatchScript(ready_after_s=8 * 3600), clock=lambda: now[0])
    handle = batch.submit([_item("a")], display_name="n")
    early = [batch.status(handle).state for _ in range(5)]
    now[0] += 8 * 3600

    late = batch.status(handle)

    assert (early, late) == ([BatchState.RUNNING] * 5, BatchStatus(BatchState.ENDED, succeeded=1))


def test_a_clock_batch_canceled_before_it_is_ready_comes_back_canceled() -> None:
    """A cancel freezes the clock the batch is judged by: later time does not make it ready."""
    now = [0.0]
    batch = SimBatch(_sim("a"), SimBatchScript(ready_after_s=60), clock=lambda: now[0])
    handle = batch.submit([_item("a")], display_name="n")
    batch.cancel(handle)
    now[0] = 120.0
    states = [batch.status(handle).state for _ in range(2)]

    outcomes = [e.outcome for e in batch.results(handle)]

    assert (states, outcomes) == (
        [BatchState.CANCELING, BatchState.ENDED],
        [EntryOutcome.CANCELED],
    )
