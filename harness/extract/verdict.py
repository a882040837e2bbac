"""Parse the principle judge's reply strictly: one JSON object, a verdict per principle, and
a fail kept only when its evidence is a line of the candidate, verbatim."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["MAX_VERDICT_CHARS", "Verdict", "VerdictReading", "parse_verdict"]

MAX_VERDICT_CHARS = 65_536  # a verdict is a short list; a longer reply is not one
_FENCED = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.S)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    principle: Annotated[int, Field(strict=True, ge=1)]
    verdict: Literal["pass", "fail"]
    evidence: Annotated[str, Field(strict=True, max_length=2_000)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verdicts: list[_Entry]


@dataclass(frozen=True)
class Verdict:
    """A principle the judge found broken, with the candidate's line that shows it."""

    principle: int
    evidence: str


@dataclass(frozen=True)
class VerdictReading:
    """What a judge's reply came to: `problem` set means it could not be read at all (fail
    open); otherwise `broken` are the kept fails and `dropped` the principles whose fail
    quoted no line of the candidate (thrown away, logged)."""

    broken: tuple[Verdict, ...] = ()
    dropped: tuple[int, ...] = ()
    problem: str | None = None


def parse_verdict(text: str | None, principles: Collection[int], candidate: str) -> VerdictReading:
    """Read a verdict reply: exactly one JSON object (bare or in one ```json fence) with one
    entry for each of `principles`, none other. Anything else is a problem, never a guess."""
    body = (text or "").strip()
    if len(body) > MAX_VERDICT_CHARS:
        return VerdictReading(problem=f"reply longer than {MAX_VERDICT_CHARS} characters")
    fenced = _FENCED.match(body)
    try:
        reply = _Reply.model_validate(json.loads(fenced[1] if fenced else body))
    except (ValueError, ValidationError) as exc:  # JSONDecodeError is a ValueError
        return VerdictReading(problem=f"not a verdict object: {str(exc).splitlines()[0][:200]}")
    numbers = [e.principle for e in reply.verdicts]
    if sorted(numbers) != sorted(set(principles)):
        return VerdictReading(
            problem=f"verdicts for principles {sorted(numbers)}, expected {sorted(principles)}"
        )
    lines = {line.strip() for line in candidate.splitlines() if line.strip()}
    fails = [e for e in reply.verdicts if e.verdict == "fail"]
    broken = tuple(
        Verdict(e.principle, e.evidence.strip()) for e in fails if e.evidence.strip() in lines
    )
    dropped = tuple(e.principle for e in fails if e.evidence.strip() not in lines)
    return VerdictReading(tuple(sorted(broken, key=lambda v: v.principle)), tuple(sorted(dropped)))
