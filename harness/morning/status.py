"""`harness status`: how far a night is (tasks done and passing, spend against the cap), read
from the run store (read only) and the events file while it runs or after, never taking the
run's lock; `--watch` follows it to its end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from harness.console import NOT_PASSING, Board, Totals
from harness.errors import BadInput
from harness.morning.events import follow_events
from harness.results import TaskStatus, money
from harness.store import RunFolder

__all__ = ["RunStatusView", "read_status", "render_status", "watch_status"]


@dataclass(frozen=True)
class RunStatusView:
    """One night's progress as `harness status` shows it (and --json prints it)."""

    run_id: str
    state: str  # running | finished | stopped (unfinished, no live run: killed, resumable)
    status: str | None  # the summary's status once finished
    provider: str
    started_at: str
    finished_at: str | None
    tasks_total: int | None  # as the night announced it (run_started), None before that
    tasks_done: int
    tasks_passing: int
    tasks_failed: int  # finished and not passing: failed, partial, error, guardrail
    spent_usd: str  # what answered calls cost
    cap_usd: str | None
    held_usd: str = "0"  # reservations of calls still out (a killed night's count as spent)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def totals(self) -> Totals:
        """The board's totals line, from the store."""
        cap = Decimal(self.cap_usd) if self.cap_usd is not None else None
        return Totals(
            self.tasks_total,
            self.tasks_done,
            self.tasks_passing,
            self.tasks_failed,
            Decimal(self.spent_usd),
            cap,
        )


def read_status(run: RunFolder, running: bool) -> RunStatusView:
    """The run's progress; `running` says whether a live process holds its run directory."""
    with run.store() as store:
        info = store.run_info(run.run_id)
        if info is None:
            raise BadInput(f"{run.root}: run {run.run_id} is not in the run store beside it")
        results = store.task_results(run.run_id)
        held = store.held(run.run_id)
        spent = store.spent(run.run_id) - held
    finished = info.finished_at is not None
    state = "finished" if finished else "running" if running else "stopped"
    started = [e for e in run.events() if e["event"] == "run_started"]
    total = started[-1].get("tasks") if started else None
    return RunStatusView(
        run_id=run.run_id,
        state=state,
        status=info.status.value if info.status is not None else None,
        provider=info.provider,
        started_at=info.started_at.isoformat(),
        finished_at=info.finished_at.isoformat() if info.finished_at else None,
        tasks_total=total if isinstance(total, int) else None,
        tasks_done=len(results),
        tasks_passing=sum(r.status is TaskStatus.PASSED for r in results.values()),
        tasks_failed=sum(r.status in NOT_PASSING for r in results.values()),
        spent_usd=str(spent),
        cap_usd=str(info.cap_usd) if info.cap_usd is not None else None,
        held_usd=str(held),
    )


def render_status(view: RunStatusView) -> str:
    """One line: state, tasks done and passing of the total, spend against the cap."""
    total = view.tasks_total if view.tasks_total is not None else "?"
    cap = money(Decimal(view.cap_usd)) if view.cap_usd is not None else "no cap"
    state = f"{view.state} ({view.status})" if view.status else view.state
    held = Decimal(view.held_usd)
    holding = f", {money(held)} held by calls in flight" if held else ""
    return (
        f"run {view.run_id}: {state} · {view.tasks_done}/{total} tasks done, "
        f"{view.tasks_passing} passing, {view.tasks_failed} failed · "
        f"spent {money(Decimal(view.spent_usd))} of {cap}{holding} · "
        f"provider {view.provider} · started {view.started_at}"
    )


def watch_status(
    run: RunFolder,
    running: Callable[[], bool],
    show: Callable[[RunStatusView], None],
    board: Board,
    poll_s: float = 1.0,
) -> RunStatusView:
    """Follow a night to its end: each event as it is written to `board`, the store's view
    to `show` whenever nothing new is written, and once more at the end; returns that last
    view. Only reads: the night never waits on it."""

    def idle() -> bool:
        view = read_status(run, running())
        show(view)
        return view.state != "running"

    for event in follow_events(run.root / "events.jsonl", idle, poll_s):
        board.feed(event)
    final = read_status(run, running())
    show(final)
    return final
