"""The simulator's judge: verdicts by construction, seeded, with assumed error chances."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import yaml

from harness.extract import parse_verdict
from harness.llm import CallRequest, Route
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.sim import SimModel, SimProvider
from harness.sim.judge import JudgeCase, detect, verdict_reply
from harness.tasks.spec import TaskSpec

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.judge import SET, _spec  # noqa: E402

SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
EXACT = SimModel.shipped().with_values(
    {"judge.miss": 0, "judge.false_flag": 0, "judge.malformed": 0}
)
ROUTE = Route("cheap", "sim", "gemini-3.8-flash", 4096)


def _payments() -> TaskSpec:
    """The labelled set's task (bench/judge_set/)."""
    return _spec(yaml.safe_load((SET / "labels.yaml").read_text())["task"])


def _request(code: str, attempt: int = 1) -> tuple[CallRequest, list[int]]:
    spec = _payments()
    prompts = PromptSet(default_prompts_dir(), spec.type)
    prompt = prompts.render("judge", {**task_context(spec), "code": code})
    return CallRequest(ROUTE, prompt, spec.id, "judge", attempt), [
        p.number for p in prompts.principles
    ]


def test_each_kind_of_break_is_seen_with_its_line() -> None:
    """An old import, a compared test literal, a dropped public name and a constant body are
    each seen, quoting the candidate's own line; the solution itself breaks nothing."""
    tests = ("def test_add():\n    assert add(12345, 1) == 12346\n",)
    cases = {
        "import legacy_sdk\n" + SOLUTION: {"target-only": "import legacy_sdk"},
        SOLUTION.replace(
            "    return a + b", "    if a == 12345:\n        return 1\n    return a + b"
        ): {"no-special-cases": "if a == 12345:"},
        SOLUTION.replace("def sub", "def minus"): {"public-names": "def add(a, b):"},
        SOLUTION.replace("return a - b", "return 0"): {"honest-results": "def sub(a, b):"},
        SOLUTION: {},
    }

    seen = [detect(JudgeCase(code, SOLUTION, tests=tests)) for code in cases]

    assert seen == list(cases.values())


def test_the_same_seed_gives_the_same_verdict_and_others_may_differ() -> None:
    """A judge call's reply is a function of the seed and the request alone."""
    code = (SET / "candidates" / "special_and_dropped.py").read_text()
    request, _ = _request(code)
    spec = _payments()

    first = [SimProvider({spec.id: spec}, seed=s).complete(request).text for s in range(30)]
    again = [SimProvider({spec.id: spec}, seed=s).complete(request).text for s in range(30)]

    assert (first == again, len(set(first)) > 1) == (True, True)


def test_an_exact_simulated_judge_flags_what_the_label_says() -> None:
    """With no assumed error, the sim's verdict on a labelled candidate parses and flags
    exactly its broken principles."""
    code = (SET / "candidates" / "special_and_dropped.py").read_text()
    request, numbers = _request(code)
    spec = _payments()

    text = SimProvider({spec.id: spec}, seed=0, model=EXACT).complete(request).text
    reading = parse_verdict(text, numbers, code)

    assert ([v.principle for v in reading.broken], reading.problem) == ([2, 3], None)


def test_the_assumed_chances_are_what_errs() -> None:
    """A certain miss passes a real break, a certain false flag flags an honest principle with
    a real line, a certain malformed reply is not a verdict."""
    case = JudgeCase("import legacy_sdk\n" + SOLUTION, SOLUTION)
    principles = [(1, "target-only"), (2, "no-special-cases")]

    def rng(part: object) -> random.Random:
        return random.Random(str(part))

    missed = json.loads(verdict_reply(case, principles, rng, (1.0, 0.0, 0.0)).strip("`json\n"))
    false = json.loads(verdict_reply(case, principles, rng, (0.0, 1.0, 0.0)).strip("`json\n"))
    garbled = verdict_reply(case, principles, rng, (0.0, 0.0, 1.0))

    assert [v["verdict"] for v in missed["verdicts"]] == ["pass", "pass"]
    assert [(v["verdict"], v["evidence"]) for v in false["verdicts"]] == [
        ("fail", "import legacy_sdk"),
        ("fail", "import legacy_sdk"),
    ]
    assert parse_verdict(garbled, [1, 2], case.code).problem is not None
