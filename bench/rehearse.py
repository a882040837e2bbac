"""`make bench-live` without the keys: the same nights, through the real SDKs, against fake
vendors on 127.0.0.1 (tests/fakeserver.py and tests/fakebatch.py: the vendors' wire formats,
their batch APIs included) with dummy keys. Nothing is spent and nothing is measured: the
replies are scripted. It rehearses what a live run does: every policy night interactively,
the night in batch rounds through both vendors' batch APIs, its fix answered as a
SEARCH/REPLACE edit, every night under its share of the cap, the record in the format of
`make bench`'s."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.policies import POLICIES

__all__ = ["REHEARSAL_OUT", "fake_night_vendors", "rehearsal_tasks"]

REHEARSAL_OUT = Path(__file__).resolve().parent.parent / "runs" / "bench-live-rehearsal.json"
MID, CHEAP = "claude-sonnet-5-5", "gemini-3.8-flash"
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BROKEN = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
EDIT = (
    "The fix:\n\n<<<<<<< SEARCH\ndef add(a, b):\n    return a - b\n=======\n"
    "def add(a, b):\n    return a + b\n>>>>>>> REPLACE\n"
)
TESTS = """\
from calc_service import add, sub


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5


def test_sub():
    assert sub(5, 3) == 2
"""


def rehearsal_tasks(folder: Path) -> Path:
    """One small porting task (a legacy calc module, its tests) and its task list."""
    (folder / "legacy").mkdir(parents=True)
    (folder / "acceptance").mkdir()
    (folder / "legacy" / "calc.py").write_text("def add(a, b):\n    return (200, a + b)\n")
    (folder / "acceptance" / "test_calc.py").write_text(TESTS)
    tasks = folder / "tasks.yaml"
    tasks.write_text(
        textwrap.dedent(
            """\
            tasks:
              - id: calc
                reference: legacy/calc.py
                tests: acceptance/test_calc.py
                output: out/calc_service.py
            """
        )
    )
    return tasks


@dataclass(frozen=True)
class Vendors:
    anthropic: Any
    gemini: Any


def _script(v: Vendors) -> None:
    """Each interactive night: a correct write (Anthropic), a CLEAN review (Gemini) where the
    policy reviews. The night in rounds: a write with a bug (round 1), a CLEAN review (round
    2), a fix as a SEARCH/REPLACE edit (round 3), each a batch of the vendor's."""
    from tests.fakebatch import BatchScript, EntryScript
    from tests.fakeserver import anthropic_sse, gemini_reply

    nights = 1 + len(POLICIES)
    reviews = nights - sum(1 for p in POLICIES.values() if p and "review: false" in p)
    write = f"Here is the port.\n\n```python\n{SOLUTION}```\n"
    v.anthropic.script(
        *[anthropic_sse(write, model=MID, input_tokens=1200, output_tokens=400)] * nights
    )
    clean = gemini_reply("CLEAN", model_version=CHEAP, prompt=900, candidates=2)
    v.gemini.script(*[clean] * reviews)
    broken = f"Here is the port.\n\n```python\n{BROKEN}```\n"
    v.anthropic.batches.script(
        BatchScript(default=EntryScript(text=broken, bill=(1200, 0, 0, 400))),
        BatchScript(default=EntryScript(text=EDIT, bill=(1300, 0, 0, 40))),
    )
    v.gemini.batches.script(BatchScript(default=EntryScript(text="CLEAN", bill=(900, 0, 0, 2))))


@contextlib.contextmanager
def fake_night_vendors() -> Iterator[Vendors]:
    """A fake Anthropic and a fake Gemini, scripted for one rehearsal, reached only through
    the SDKs' base-URL and key variables (dummy keys), the environment restored after."""
    import pytest

    from tests.fakeserver import fake_vendors

    with (
        pytest.MonkeyPatch.context() as env,
        fake_vendors(env, "rehearsal-anthropic-key", "rehearsal-gemini-key") as (a, g),
    ):
        vendors = Vendors(a, g)
        _script(vendors)
        yield vendors
