"""The simulator's behaviour model: what a prompt contains and which tier answers, turned into
the chances of the walk (bugs in a draft, fixing a shown failure, breaking passing code, an
unusable reply). Every number is data in harness/data/sim_model.yaml, with its source."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from harness.llm import CallRequest

__all__ = ["Features", "SimModel", "read_features"]

TIERS = ("cheap", "mid", "frontier")
# What the prompt templates print; the simulator reads a prompt as a model would see it.
_FOCUSED = re.compile(r"^## Failing tests \((\d+)\)", re.MULTILINE)
_SUMMARY_FAILURE = re.compile(r"^(?:FAILED|ERROR) \S", re.MULTILINE)
# A raw pytest run pasted whole: its closing "N failed, M passed in 0.12s" line, or -v lines.
_RAW_PYTEST = re.compile(r"^=* ?\d+ (?:failed|passed|errors?)\b.* in [\d.]+s", re.MULTILINE)
_WHOLE_RUN = "## Test run (every visible test)"  # the fix template's `fix_failures: full`
_EXAMPLES = "## Gold-standard example"
_CAPABILITIES = "## Platform capabilities"
_EDITS = "Answer with SEARCH/REPLACE blocks"  # the fix template's `fix_format: edits`


@dataclass(frozen=True)
class Features:
    """The causes the model reads from one request."""

    tier: str
    attempt: int
    focused: bool = True  # failures only, not the whole pytest output
    failures_shown: int = 1
    examples: bool = True
    capabilities: bool = True
    edits: bool = False  # the prompt asks for SEARCH/REPLACE blocks


def read_features(request: CallRequest) -> Features:
    """Tier from the route; focus, failure count and context blocks from the prompt text."""
    prompt = request.prompt
    text = prompt.system + prompt.stable + prompt.variable
    tier = request.route.tier if request.route.tier in TIERS else "mid"
    focused, shown = True, 1
    if match := _FOCUSED.search(prompt.variable):
        shown = int(match.group(1))
    elif _WHOLE_RUN in prompt.variable or _whole_dump(prompt.variable):
        focused, shown = False, len(_SUMMARY_FAILURE.findall(prompt.variable)) or 1
    elif listed := _SUMMARY_FAILURE.findall(prompt.variable):  # failed tests' sections only
        shown = len(listed)
    return Features(
        tier=tier,
        attempt=request.attempt,
        focused=focused,
        failures_shown=shown,
        examples=_EXAMPLES in text,
        capabilities=_CAPABILITIES in text,
        edits=_EDITS in prompt.variable,
    )


def _whole_dump(variable: str) -> bool:
    return " PASSED" in variable or _RAW_PYTEST.search(variable) is not None


@dataclass(frozen=True)
class SimModel:
    """The parameters of sim_model.yaml, as the walk asks for them."""

    data: dict[str, Any]

    @classmethod
    def shipped(cls) -> SimModel:
        return _shipped()

    def bug_weights(self, f: Features) -> tuple[float, ...]:
        return tuple(self.data["write"]["bug_weights"][f.tier])

    def missing_context_bugs(self, f: Features) -> tuple[float, ...]:
        """Chance of one extra draft bug for each context block the prompt lacks."""
        missing = self.data["write"]["missing_context_bug"]
        return tuple(
            missing[name]
            for name, present in (("examples", f.examples), ("capabilities", f.capabilities))
            if not present
        )

    def fix_each(self, f: Features) -> float:
        """Chance of fixing each bug whose failure the prompt shows."""
        fix = self.data["fix"]
        p = fix["fix_each"][f.tier]
        extra = max(0, f.failures_shown - fix["focus_limit"])
        p *= max(fix["floor"], 1 - fix["per_extra_failure"] * extra)
        lift = fix["context_lift"]
        p *= 1 + lift["examples"] * f.examples + lift["capabilities"] * f.capabilities
        p *= fix["attempt_decay"] ** max(0, f.attempt - 2)
        return min(p, 0.97)

    def break_nearby(self, f: Features) -> float:
        """Chance the change also breaks passing code beside it: `break_nearby` is the chance
        with the whole test output in the prompt (aider's protocol); a prompt that shows only
        the failures scales it by `focused_break_factor`."""
        fix = self.data["fix"]
        p = fix["break_nearby"][f.tier]
        if f.focused:
            p *= fix["focused_break_factor"]
        return min(p, 0.95)

    def with_values(self, values: dict[str, Any]) -> SimModel:
        """A copy with some parameters set: dotted paths (`fix.break_nearby.mid`) → value."""
        data = copy.deepcopy(self.data)
        for path, value in values.items():
            *parents, leaf = path.split(".")
            node = data
            for key in parents:
                node = node[key]
            if leaf not in node:
                raise KeyError(f"sim_model.yaml has no parameter {path!r}")
            node[leaf] = value
        return SimModel(data)

    def review_lists(self, bugs: int) -> float:
        review = self.data["review"]
        return min(review["cap"], review["base"] + review["per_bug"] * bugs)

    def rewrite_fixes(self, tier: str) -> float:
        return self.data["review"]["rewrite_fixes"].get(
            tier, self.data["review"]["rewrite_fixes"]["mid"]
        )

    def asks_for_context(self) -> float:
        """Chance a step offered context tools asks for a block its prompt lacks."""
        return self.data["reply"]["ask_for_context"]

    def unusable_factor(self, tier: str) -> float:
        return self.data["reply"]["unusable_factor"].get(tier, 1.0)

    def ramble(self) -> float:
        """Chance a review answers neither CLEAN nor a list."""
        return self.data["reply"]["review_ramble"]

    def unusable(self) -> float:
        """The share of whole-file replies that are unusable at unusable_factor 1."""
        return self.data["reply"]["unusable"]

    def edit_malformed(self, tier: str) -> float:
        """Chance an edit reply does not apply (a SEARCH text off the file): 1 - well formed."""
        wf = self.data["reply"]["edit_well_formed"]
        return 1 - wf.get(tier, wf["mid"])

    def judge_chances(self) -> tuple[float, float, float]:
        """The simulated judge's (miss, false_flag, malformed) chances: assumptions."""
        judge = self.data["judge"]
        return judge["miss"], judge["false_flag"], judge["malformed"]


@cache
def _shipped() -> SimModel:
    text = resources.files("harness.data").joinpath("sim_model.yaml").read_text()
    return SimModel(yaml.safe_load(text))
