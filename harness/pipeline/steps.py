"""The paid steps of an attempt: write, review, rewrite and fix.

Each renders its prompt, makes its call through the Caller and extracts code; a reply
that ended badly or holds no usable code becomes a reason, never a file.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import structlog

from harness.budget import BudgetExceeded
from harness.calls import RunStopped
from harness.config import FixFailures
from harness.context import TOOLS, ToolBox
from harness.extract import apply_edits, extract_code, language_named, parse_edits, parse_review
from harness.llm import (
    AuthenticationError,
    CallRequest,
    Completion,
    ProviderError,
    StopReason,
    ToolRound,
    decode_tool_turn,
)
from harness.pipeline.background import Background
from harness.pipeline.env import TaskEnv
from harness.results import AttemptRecord, Outcome, ReviewOutcome, TestResult
from harness.store import TaskFiles
from harness.tasks import TaskSpec
from harness.tracker import BestTracker

__all__ = ["Attempt", "TaskState", "code_from", "fix", "fixed_code", "write"]

log = structlog.get_logger()
FULL = FixFailures.FULL


@dataclass
class Attempt:
    """What one attempt produced before its tests ran."""

    kind: str
    code: str | None = None
    reason: str | None = None
    cost: Decimal = Decimal(0)
    tier: str = ""
    review: ReviewOutcome | None = None
    fallbacks: list[str] = field(default_factory=list)  # "step: wanted → used" per fallback
    too_long: str | None = None  # the model refused the prompt as too long: why, in its words


@dataclass
class TaskState:
    """Per-task state the loop threads through its stages."""

    spec: TaskSpec
    env: TaskEnv
    context: dict[str, Any]
    required: frozenset[str]
    files: TaskFiles
    tracker: BestTracker = field(default_factory=BestTracker)
    records: list[AttemptRecord] = field(default_factory=list)
    non_improving_fixes: int = 0
    since_best: int = 0
    expecting: Background | None = None  # the expected test ids, collected in the background
    tools: ToolBox | None = None  # context tools, when `loop.context_tools` is on
    edit_error: str | None = None  # why the last fix's edits were not applied (shown next)

    @property
    def reference_text(self) -> str:
        """The reference sources as one text (extraction excuses what they also say)."""
        return "\n".join(f.text for f in self.context.get("references", ()))

    def call(self, step: str, attempt: int, extra: dict[str, Any]) -> Priced:
        """One paid step: route it, render its prompt, make the call (in rounds, with tools)."""
        routes = self.env.router.choices(step, self.non_improving_fixes if step == "fix" else 0)
        prompt = self.env.prompts[self.spec.type].render(step, {**self.context, **extra})
        request = CallRequest(routes[0], prompt, self.spec.id, step, attempt, routes[1:])
        if self.tools is not None and step in TOOL_STEPS:
            return self._with_tools(request, self.tools)
        priced = self.env.caller.call(request)
        fallback = None
        if priced.route.tier != routes[0].tier:
            fallback = f"{step}: {routes[0].tier} → {priced.route.tier}"
        return Priced(priced.completion, priced.cost_usd, priced.route.tier, fallback)

    def _with_tools(self, request: CallRequest, box: ToolBox) -> Priced:
        """Rounds of one step: each its own paid call under its own step name (`fix+1`), so
        a resume finds every round recorded. A round that may ask again starts only if the
        budget fits it and the final answer after it; the last one allowed must answer."""
        box.start_step()
        step, cost, fallback = request.step, Decimal(0), None
        request = dataclasses.replace(request, tools=TOOLS)
        for k in range(box.limits.rounds):
            sent = dataclasses.replace(request, step=round_step(step, k), tools_final=True)
            if k < box.limits.rounds - 1:
                after = dataclasses.replace(sent, step=round_step(step, k + 1))
                asking = dataclasses.replace(sent, tools_final=False)
                if self.env.caller.fits(asking, after, grow_tokens=box.round_tokens(sent)):
                    sent = asking
            priced = self.env.caller.call(sent)
            cost += priced.cost_usd
            if priced.route.tier != request.route.tier and fallback is None:
                fallback = f"{step}: {request.route.tier} → {priced.route.tier}"
            completion = priced.completion
            if completion.stop_reason is not StopReason.TOOL_USE or sent.tools_final:
                break
            turn, calls = decode_tool_turn(completion.text)
            done = ToolRound(turn, calls, box.run(calls, sent.attempt, sent.step))
            # The turn is this vendor's: later rounds stay on the route that answered.
            request = dataclasses.replace(
                request, route=priced.route, fallbacks=(), rounds=(*request.rounds, done)
            )
        return Priced(completion, cost, priced.route.tier, fallback)


TOOL_STEPS = ("write", "fix")  # the steps that produce code; review and rewrite have it


def round_step(step: str, k: int) -> str:
    """The step name round `k` is recorded under: the step itself first, then `fix+1`..."""
    return step if k == 0 else f"{step}+{k}"


@dataclass(frozen=True)
class Priced:
    """One paid step's reply, cost and tier; `fallback` says so when the budget could not fit
    the step's tier and a cheaper one answered."""

    completion: Completion
    cost: Decimal
    tier: str
    fallback: str | None = None

    def note(self, attempt: Attempt) -> None:
        attempt.cost += self.cost
        if self.fallback:
            attempt.fallbacks.append(self.fallback)


def code_from(
    completion: Completion, required: frozenset[str], language: str = "python", reference: str = ""
) -> tuple[str | None, str | None]:
    """(code, None) or (None, reason): outcome-like replies never become files; text the
    `reference` has is never a placeholder."""
    if completion.stop_reason is not StopReason.END:
        detail = f": {completion.detail}" if completion.detail else ""
        return None, f"reply ended with {completion.stop_reason.value}{detail}"
    extraction = extract_code(completion.text, required, language, reference)
    return extraction.code, extraction.reason


def fixed_code(
    completion: Completion,
    base: str,
    required: frozenset[str],
    language: str = "python",
    reference: str = "",
) -> tuple[str | None, str | None, bool]:
    """(code, reason, whether the reply was an edit reply). A reply with SEARCH/REPLACE
    blocks is applied to `base` strictly (every block exactly, or none) and the result is
    checked as a whole-file reply would be; a reply without them is read whole."""
    if completion.stop_reason is not StopReason.END:
        return (*code_from(completion, required, language, reference), False)
    parsed = parse_edits(completion.text)
    if parsed is None:
        return (*code_from(completion, required, language, reference), False)
    blocks, problem = parsed
    if problem is None:
        edited, problem = apply_edits(base, blocks)
        if edited is not None:
            fence = language_named(language).fence
            end = "" if edited.endswith("\n") else "\n"  # the file's own last newline, once
            text = f"```{fence}\n{edited}{end}```"
            extraction = extract_code(text, required, language, reference)
            return extraction.code, extraction.reason, True
    return None, problem, True


def write(task: TaskState, n: int, with_review: bool) -> Attempt:
    priced = task.call("write", n, {})
    code, reason = code_from(
        priced.completion, task.required, task.spec.language, task.reference_text
    )
    attempt = Attempt("write", code, reason, tier=priced.tier)
    priced.note(attempt)
    attempt.too_long = _too_long(priced, "write")
    if code is None or not with_review:
        return attempt
    return _review_and_rewrite(task, n, attempt)


def _review_and_rewrite(task: TaskState, n: int, draft: Attempt) -> Attempt:
    """Review is insurance: if it (or the rewrite) cannot be had, the paid draft is tested."""
    try:
        return _reviewed(task, n, draft)
    except AuthenticationError:
        raise
    except (ProviderError, BudgetExceeded, RunStopped) as exc:
        log.warning("review_failed", attempt=n, error=str(exc))
        draft.review = draft.review or ReviewOutcome.FAILED
        return draft


def _reviewed(task: TaskState, n: int, draft: Attempt) -> Attempt:
    priced = task.call("review", n, {"code": draft.code})
    priced.note(draft)
    completion = priced.completion
    if completion.stop_reason is StopReason.CONTEXT_TOO_LONG:  # no review to be had
        log.warning("review_failed", attempt=n, error=completion.detail)
        draft.review = ReviewOutcome.FAILED
        return draft
    review = parse_review(completion.text if completion.stop_reason is StopReason.END else None)
    if not review.parsed:
        log.warning("review_unparseable", attempt=n)
        draft.review = ReviewOutcome.UNPARSEABLE
        return draft
    if review.clean:
        draft.review = ReviewOutcome.CLEAN
        return draft
    draft.review = ReviewOutcome.VIOLATIONS
    log.info("review_violations", attempt=n, count=len(review.violations))
    _rewrite(task, n, draft, review.violations)
    return draft


def _rewrite(task: TaskState, n: int, draft: Attempt, violations: tuple[str, ...]) -> None:
    """Replace the draft with its rewrite, unless the rewrite holds no usable code."""
    priced = task.call("rewrite", n, {"code": draft.code, "violations": list(violations)})
    priced.note(draft)
    code, reason = code_from(
        priced.completion, task.required, task.spec.language, task.reference_text
    )
    if code is None:
        log.warning("rewrite_discarded", attempt=n, reason=reason)
    else:
        draft.code = code


# Run-to-run noise in test output: object addresses (`<Foo object at 0x7f3a...>`, `id()`
# shown in hex) and the sandbox's per-run scratch folder. Normalised out before test output
# enters a prompt, so the same failure gives the same prompt (a strict replay finds it) and
# costs no tokens for digits that mean nothing to the model.
_NOISE = (
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x…"),
    (re.compile(r"harness-test-[A-Za-z0-9_]+"), "harness-test-…"),
)


# A flat set of strings or numbers as repr() prints it: its order follows the string hash.
# The sandbox pins PYTHONHASHSEED=0, but a set's order also follows its insertion history,
# and a recording made before the seed was pinned must still replay; printed sorted.
_ATOM = r"""(?:'[^'\\\n]*'|"[^"\\\n]*"|-?\d+(?:\.\d+)?)"""
_SET = re.compile(rf"\{{({_ATOM}(?:, {_ATOM})+)\}}")
_ITEM = re.compile(_ATOM)


def steady(text: str | None) -> str | None:
    """`text` with run-to-run noise replaced: object addresses, scratch folder names, and the
    hash order of printed sets (their items sorted)."""
    if not text:
        return text
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return _SET.sub(_sorted_set, text)


def _sorted_set(match: re.Match[str]) -> str:
    return "{" + ", ".join(sorted(_ITEM.findall(match[1]))) + "}"


def fix(task: TaskState, n: int) -> Attempt:
    best = task.tracker.best
    current = task.files.read_working()  # the best code, put back on disk after any regression
    failing = [
        {
            "nodeid": c.nodeid,
            "outcome": c.outcome.value,
            "message": steady(c.message),
            "details": steady(c.details),
        }
        for c in best.result.failing()
    ]
    failing += _differences(best.result)
    extra = {
        "code": current,
        "failures": failing,
        "passed": best.result.visible_passed,  # hidden tests are never shown, nor counted
        "total": best.result.visible_total,
        "full_output": steady(_with_differences(full_report(best.result), best.result))
        if task.env.loop.fix_failures is FULL
        else "",
        "fix_format": task.env.loop.fix_format.value,
        "edit_error": task.edit_error,
    }
    priced = task.call("fix", n, extra)
    code, reason, _ = fixed_code(
        priced.completion, current, task.required, task.spec.language, task.reference_text
    )
    attempt = Attempt("fix", code, reason, tier=priced.tier)
    priced.note(attempt)
    attempt.too_long = _too_long(priced, "fix")
    return attempt


def _differences(result: TestResult) -> list[dict[str, str]]:
    """The calls on which the candidate differs from its reference (testrun/differential),
    as focused failing cases: the call, what the reference did, what this code did. Only the
    visible tests' calls and generated ones: a hidden test's inputs are never observed."""
    found = result.differential
    return [
        {
            "nodeid": f"differential: `{d.call}`",
            "outcome": "differs from the reference",
            "message": f"{d.text()} (a {d.source} call)",
            "details": "",
        }
        for d in (found.differences if found is not None else ())
    ]


def _with_differences(report: str, result: TestResult) -> str:
    """`fix_failures: full`: the test run, then the calls that differ from the reference."""
    lines = [f"DIFFERS {d['message']}" for d in _differences(result)]
    return "\n".join([report, *lines])


def full_report(result: TestResult) -> str:
    """Every visible test's outcome in run order, pytest -rA style: what `fix_failures: full`
    shows. Built from the cases, not the raw output, so a hidden test never reaches a model."""
    lines: list[str] = []
    for case in (c for c in result.cases if c.counts and not c.hidden):
        if case.outcome is Outcome.PASSED:
            lines.append(f"{case.nodeid} PASSED")
            continue
        kind = "ERROR" if case.outcome is Outcome.ERROR else "FAILED"
        lines.append(f"{kind} {case.nodeid} - {case.message or ''}".rstrip(" -"))
        if case.details:
            lines.append(case.details)
    failing = result.visible_total - result.visible_passed
    return "\n".join([*lines, f"===== {failing} failed, {result.visible_passed} passed ====="])


def _too_long(priced: Priced, step: str) -> str | None:
    """Why no later attempt should be sent, if the model refused this prompt as too long."""
    completion = priced.completion
    if completion.stop_reason is not StopReason.CONTEXT_TOO_LONG:
        return None
    return (
        f"prompt too long: the {step} prompt does not fit {completion.model}'s context "
        f"({completion.detail or 'context window exceeded'}); it is not sent again. Shorten "
        f"the reference, tests or examples, split the task, or route {step} (steps: in "
        "harness.yaml) to a model with a longer context"
    )
