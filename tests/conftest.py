"""Shared fixtures: small task lists written on the fly; the paid-call path over any provider."""

from __future__ import annotations

import itertools
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from harness.budget import Budget
from harness.calls import RetryPolicy
from harness.calls.caller import Caller
from harness.llm import CallRequest, Completion, Provider
from harness.pricing import PriceTable, load_prices
from harness.tasks.spec import TaskSpec

# Property tests never fail on time (a loaded 2-core machine is slow, not wrong), and draw the
# same examples on every run: a failure they find is reproducible, never a flake.
settings.register_profile(
    "harness", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("harness")


FIXTURE_PRICES = Path(__file__).parent / "fixtures" / "prices.yaml"


def fixture_prices() -> PriceTable:
    """The tests' own price table: the shipped one is dated data that changes on its own."""
    return load_prices(FIXTURE_PRICES)


@pytest.fixture(scope="session")
def _check_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of remembered checks for the session: answers are keyed by content."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _private_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, _check_cache: Path
) -> None:
    """Keep the per-user day ledger and the remembered checks of every test out of the real
    home directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_check_cache))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A folder with one legacy file, one test file and a solution, but no task list yet."""
    write(tmp_path / "legacy" / "calc.py", "def add(a, b):\n    return (200, a + b)\n")
    write(
        tmp_path / "acceptance" / "test_calc.py",
        """
        from calc_service import add, sub

        def test_add():
            assert add(2, 3) == 5

        def test_add_negative():
            assert add(-2, -3) == -5

        def test_sub():
            assert sub(5, 3) == 2

        def test_sub_zero():
            assert sub(0, 0) == 0
        """,
    )
    write(
        tmp_path / "solutions" / "calc_service.py",
        """
        def add(a, b):
            return a + b


        def sub(a, b):
            if a < b:
                return -(b - a)
            return a - b
        """,
    )
    return tmp_path


@pytest.fixture
def spec(task_dir: Path) -> TaskSpec:
    """The calc task in `task_dir` as a validated TaskSpec (five attempts, one instruction)."""
    return TaskSpec(
        id="calc",
        base_dir=task_dir,
        reference=(task_dir / "legacy/calc.py",),
        tests=(task_dir / "acceptance/test_calc.py",),
        output=task_dir / "out/calc_service.py",
        instructions="Keep the public names.",
        max_attempts=5,
    )


class CallRecords:
    """A CallLog that remembers every try: open ones with their reservation, closed ones
    with the completion (a failed try's has StopReason.ERROR and its billed usage) and cost."""

    def __init__(self) -> None:
        self.open: dict[int, Decimal] = {}
        self.closed: list[tuple[Completion, Decimal]] = []
        self._handles = itertools.count()

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> int:
        handle = next(self._handles)
        self.open[handle] = reserved_usd
        return handle

    def close_call(self, handle: int, completion: Completion, cost_usd: Decimal) -> None:
        del self.open[handle]
        self.closed.append((completion, cost_usd))

    def recorded(self, request: CallRequest) -> None:
        return None


@dataclass
class Calls:
    """The production call path (Caller: reserve, send, retry, settle, record) over one
    provider, with the budget, the records and the retry waits (recorded, never slept)."""

    caller: Caller
    budget: Budget
    records: CallRecords
    waits: list[float] = field(default_factory=list)

    def __call__(self, request: CallRequest) -> Completion:
        """One call as a pipeline step makes it; its completion."""
        return self.caller.call(request).completion


def calls_over(provider: Provider, retry: RetryPolicy, *, cap: str = "100", **caller: Any) -> Calls:
    """`provider` behind a Caller with the shipped prices and a run cap of `cap` dollars;
    retry waits are recorded, not slept, unless `sleep=` is given."""
    budget, records, waits = Budget(cap_run=Decimal(cap)), CallRecords(), []
    caller.setdefault("sleep", waits.append)
    call = Caller(
        {provider.name: provider}, fixture_prices(), budget, records, retry=retry, **caller
    )
    return Calls(call, budget, records, waits)


EXAMPLE = Path(__file__).resolve().parent.parent / "tasks" / "example"


@pytest.fixture(scope="session")
def example_nights(tmp_path_factory: pytest.TempPathFactory):
    """Simulated nights of a copy of tasks/example, one per seed, run once per session:
    `example_nights(seed)` → that night's run folder (seed 2 reverts a regression)."""
    import shutil

    import structlog

    from harness.cli import main

    done: dict[int, Path] = {}

    def night(seed: int) -> Path:
        if seed not in done:
            folder = tmp_path_factory.mktemp(f"example-seed{seed}")
            shutil.copytree(EXAMPLE, folder / "example", ignore=shutil.ignore_patterns("out"))
            runs = folder / "runs"
            argv = ["run", str(folder / "example" / "tasks.yaml"), "--provider", "sim"]
            argv += ["--seed", str(seed), "--run-dir", str(runs), "--log-level", "error"]
            saved = structlog.get_config()
            try:
                main(argv)
            finally:
                structlog.configure(**saved)
            done[seed] = (runs / "latest").resolve()
        return done[seed]

    return night


def call_in_thread(call: Callable[[CallRequest], object], request: CallRequest) -> BaseException:
    """What `call(request)` raised, run in a thread that must end: a guard against a call
    that would hang for good (60 s, far past any deadline the tests set), not a timing."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call(request)
        except BaseException as exc:  # handed to the test to judge
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the call hung"
    assert raised, "the call returned instead of failing"
    return raised[0]
