"""Judge one launch's records against the expected test ids: outcomes, and signs of tampering;
and the tally that folds the launches of one run together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.results import Outcome, TestCase

__all__ = ["CollectError", "Settlement", "Verdict", "judge"]

_PHASES = ("setup", "call", "teardown")
_ALLOWED_AFTER = {None: ("setup",), "setup": ("call", "teardown"), "call": ("teardown",)}


@dataclass(frozen=True)
class CollectError:
    """A test file (or node) pytest could not collect: `id` is empty when it names none."""

    id: str
    msg: str = ""
    details: str = ""

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> CollectError:
        return cls(
            str(rec.get("id") or ""), str(rec.get("msg") or ""), str(rec.get("details") or "")
        )


@dataclass
class Verdict:
    """What a launch established: settled tests, the one in flight, collection and tampering."""

    settled: dict[str, TestCase] = field(default_factory=dict)
    in_flight: str | None = None
    collected: bool = False
    collect_errors: list[CollectError] = field(default_factory=list)
    tamper: list[str] = field(default_factory=list)
    ended: str | None = None  # the bootstrap's status, None if it never got there


@dataclass
class Settlement:
    """The running tally across launches."""

    cases: dict[str, TestCase] = field(default_factory=dict)
    collected: list[str] = field(default_factory=list)  # ids seen by the first collection
    collect_errors: list[CollectError] = field(default_factory=list)
    collected_ok: bool = False  # some launch finished collecting
    tamper: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    timed_out: bool = False
    stop_reason: str = ""
    first_tail: str = ""  # the end of the first launch's output, for tests that never ran
    observed: list[dict[str, Any]] = field(default_factory=list)  # the tests' calls (inputs)


def _message(rec: dict[str, Any], fallback: str) -> tuple[str, str]:
    return str(rec.get("msg") or fallback)[:500], str(rec.get("details") or "")


def _outcome(phases: dict[str, dict[str, Any]]) -> tuple[Outcome, str, str] | str:
    """The test's outcome from its phase records, or a tamper reason."""
    setup, call, teardown = (phases.get(w) for w in _PHASES)
    if setup["outcome"] == "failed":
        return (Outcome.ERROR, *_message(setup, "error in setup"))
    if setup["outcome"] == "skipped":
        return (Outcome.SKIPPED, *_message(setup, "skipped"))
    if call["outcome"] == "failed":
        return (Outcome.FAILED, *_message(call, "failed"))
    if call["outcome"] == "skipped":
        return (Outcome.SKIPPED, *_message(call, "skipped"))
    if teardown["outcome"] == "failed":
        return (Outcome.ERROR, *_message(teardown, "error in teardown"))
    if call["outcome"] == "passed" and call.get("raw") == "ok":
        return (Outcome.PASSED, "", "")
    return f"report says passed but the test body {call.get('raw')!r}: {call['id']}"


_OUTCOMES = ("passed", "failed", "skipped")


def _well_formed(rec: dict[str, Any] | None) -> bool:
    """Only the recorder writes to the channel, so anything oddly shaped is a forgery."""
    if not isinstance(rec, dict) or not isinstance(rec.get("k"), str):
        return False
    kind = rec["k"]
    if kind in ("start", "finish", "phase", "subtest") and not isinstance(rec.get("id"), str):
        return False
    if kind == "phase" and (rec.get("when") not in _PHASES or rec.get("outcome") not in _OUTCOMES):
        return False
    lists = [rec.get("ids"), rec.get("selected")] if kind == "collected" else []
    return all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in lists)


class _Judge:
    def __init__(self, nonce: str, selected: frozenset[str]) -> None:
        self.nonce, self.selected = nonce, selected
        self.verdict = Verdict()
        self.phases: dict[str, dict[str, dict[str, Any]]] = {}
        self.subfailed: dict[str, dict[str, Any]] = {}  # the first failed subtest of a test
        self.seq = 0

    def take(self, rec: dict[str, Any] | None) -> None:
        if not _well_formed(rec) or rec.get("n") != self.nonce or rec.get("s") != self.seq:
            self.verdict.tamper.append("a forged or malformed record reached the channel")
            return
        self.seq += 1
        kind = rec.get("k")
        if self.verdict.ended is not None:
            self.verdict.tamper.append(f"a {kind!r} record arrived after the session ended")
        elif kind == "collected":
            self._collected(rec)
        elif kind == "collect_error":
            self.verdict.collect_errors.append(CollectError.from_record(rec))
        elif kind == "start":
            self._start(rec["id"])
        elif kind == "phase":
            self._phase(rec)
        elif kind == "subtest":
            if rec.get("failed") is True and rec["id"] in self.selected:
                self.subfailed.setdefault(rec["id"], rec)
        elif kind == "finish":
            self._finish(rec.get("id"))
        elif kind == "tamper":
            self.verdict.tamper.append(f"recorder saw tampering: {rec.get('reason')}")
        elif kind == "end":
            self.verdict.ended = str(rec.get("status"))

    def _collected(self, rec: dict[str, Any]) -> None:
        if self.verdict.collected:
            self.verdict.tamper.append("collection reported twice")
        self.verdict.collected = True
        unexpected = sorted(set(rec.get("selected") or ()) - self.selected)
        if unexpected:
            self.verdict.tamper.append(
                f"unexpected test ids {unexpected[:3]} (not in the pristine collection; tests "
                "must not derive their ids from the candidate)"
            )

    def _start(self, nodeid: str) -> None:
        if nodeid not in self.selected or nodeid in self.verdict.settled:
            self.verdict.tamper.append(f"start of an unexpected or settled test {nodeid!r}")
        else:
            self.verdict.in_flight = nodeid

    def _phase(self, rec: dict[str, Any]) -> None:
        nodeid, when = rec.get("id"), rec.get("when")
        phases = self.phases.setdefault(nodeid, {})
        last = next((w for w in reversed(_PHASES) if w in phases), None)
        if nodeid not in self.selected or nodeid in self.verdict.settled:
            self.verdict.tamper.append(f"record for an unexpected or settled test {nodeid!r}")
        elif when not in _ALLOWED_AFTER.get(last, ()):
            self.verdict.tamper.append(f"duplicate or out-of-order {when!r} record for {nodeid!r}")
        else:
            phases[when] = rec

    def _finish(self, nodeid: str | None) -> None:
        phases = self.phases.get(nodeid or "", {})
        complete = "setup" in phases and "teardown" in phases
        if complete and ("call" in phases or phases["setup"]["outcome"] != "passed"):
            judged = _outcome(phases)
            sub = self.subfailed.get(nodeid or "")
            if sub is not None and not isinstance(judged, str) and judged[0] is Outcome.PASSED:
                judged = (Outcome.FAILED, *_message(sub, "a subtest failed"))
            if isinstance(judged, str):
                self.verdict.tamper.append(judged)
            else:
                uncarried = phases.get("call", {}).get("uncarried") is True
                self.verdict.settled[nodeid] = TestCase(nodeid, *judged, uncarried=uncarried)
        self.verdict.in_flight = None


def judge(records: list[dict[str, Any] | None], nonce: str, selected: frozenset[str]) -> Verdict:
    """Replay a launch's records in order; a test is settled only by a complete, clean set."""
    j = _Judge(nonce, selected)
    for rec in records:
        j.take(rec)
    return j.verdict
