"""The simulator on Go and JavaScript solutions: text-level mutations, fences, determinism,
and mutants that really pass some of their tests and fail others."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from harness.extract import extract_code, required_names_from_tests, syntax_tree
from harness.llm import CallRequest, Prompt, Route, StopReason
from harness.runner import load_task_list
from harness.sim import mutate
from harness.sim.mutate_c import find_c_sites
from harness.sim.provider import SimProvider
from harness.tasks.spec import TaskSpec

REPO = Path(__file__).resolve().parents[2]
MID = Route("mid", "sim", "sim-mid", 8192)


def specs(example: str) -> dict[str, TaskSpec]:
    return {s.id: s for s in load_task_list(REPO / "tasks" / example / "tasks.yaml")}


GO, JS = specs("go_example"), specs("js_example")
ALL = [*GO.values(), *JS.values()]


def ask(provider: SimProvider, spec: TaskSpec, step: str, attempt: int, code: str = ""):
    fence = "go" if spec.language == "go" else "js"
    variable = f"\n# Your job now\n```{fence}\n{code}\n```\n### TestX (failed)\n"
    prompt = Prompt(f"system for {step}", f"context of {spec.id}\n", variable)
    return provider.complete(CallRequest(MID, prompt, spec.id, step, attempt))


def required(spec: TaskSpec) -> frozenset[str]:
    sources = [p.read_text() for p in spec.tests]
    return required_names_from_tests(sources, spec.module_name, spec.language, spec.output_rel)


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.id)
def test_every_single_mutant_of_a_solution_still_parses(spec: TaskSpec) -> None:
    """Each site is a plausible bug, not a syntax error; sites are the same every time."""
    grammar = "go" if spec.language == "go" else "javascript"
    source = spec.solution.read_text()
    sites = find_c_sites(source, grammar)

    assert len(sites) >= 5
    assert sites == find_c_sites(source, grammar)
    for site in sites:
        assert syntax_tree(mutate.render(source, sites, [site.index]), grammar) is not None


def test_the_mutation_kinds_cover_the_c_like_bugs() -> None:
    """Across the examples: flipped comparisons, off-by-ones, swapped +/-, negated ifs,
    dropped statements."""
    kinds = Counter(
        site.kind
        for spec in ALL
        for site in find_c_sites(
            spec.solution.read_text(), "go" if spec.language == "go" else "javascript"
        )
    )

    assert set(kinds) == {
        "flip_comparison",
        "off_by_one",
        "swap_arithmetic",
        "negate_condition",
        "delete_statement",
    }


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.id)
def test_write_replies_extract_as_the_tasks_language(spec: TaskSpec) -> None:
    """Over many seeds most write replies are usable code in the task's language with the
    names the tests need; the fenced ones use the language's fence."""
    usable = 0
    for seed in range(12):
        completion = ask(SimProvider({spec.id: spec}, seed=seed), spec, "write", 1)
        if "```python" in completion.text:
            pytest.fail(f"a python fence in a {spec.language} reply")
        if completion.stop_reason is StopReason.END:
            usable += extract_code(completion.text, required(spec), spec.language).ok

    assert usable >= 6


def test_replies_are_deterministic_by_seed_and_differ_across_seeds() -> None:
    """Same seed, same reply; the walk depends on the seed."""
    spec = GO["wordfreq"]
    first = [ask(SimProvider({spec.id: spec}, seed=s), spec, "write", 1).text for s in range(6)]
    again = [ask(SimProvider({spec.id: spec}, seed=s), spec, "write", 1).text for s in range(6)]

    assert first == again
    assert len(set(first)) > 1


def test_a_fix_starts_from_the_go_code_it_is_given() -> None:
    """The fix step recognises the go-fenced code in its prompt and walks from its mutations."""
    spec = GO["roman"]
    sim = SimProvider({spec.id: spec}, seed=3)
    code = None
    for attempt in range(1, 10):
        code = extract_code(ask(sim, spec, "write", attempt).text, (), "go").code
        if code and sim.known_mutations(spec.id, code):
            break
    assert code is not None
    start = sim.known_mutations(spec.id, code)

    fixed = extract_code(ask(sim, spec, "fix", 2, code).text, (), "go").code

    assert fixed is None or sim.known_mutations(spec.id, fixed) is not None
    assert start


def _go_passes(spec: TaskSpec, code: str, tmp: Path) -> tuple[int, int]:
    """(passed, total) of `go test -json` run by hand on a scratch copy with `code`."""
    shutil.copytree(spec.base_dir, tmp, ignore=shutil.ignore_patterns("_solutions"))
    (tmp / spec.output_rel).write_text(code)
    env = {"PATH": "/usr/bin:/bin:/usr/local/go/bin", "HOME": str(tmp), "GOFLAGS": "-mod=mod"}
    env |= {"GOCACHE": str(tmp.parent / "gocache"), "GOPATH": str(tmp.parent / "gopath")}
    package = "./" + spec.output_rel.parent.as_posix()
    run = subprocess.run(
        ["go", "test", "-json", package],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    tests = [e for e in events if e.get("Test") and e["Action"] in ("pass", "fail")]
    return sum(e["Action"] == "pass" for e in tests), len(tests)


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_go_mutants_pass_some_tests_and_fail_others(tmp_path: Path) -> None:
    """A sim night can show partial passes: real `go test -json` on single mutants of the
    bank solution gives counts strictly between none and all, and the solution passes all."""
    spec = GO["bank"]
    source = spec.solution.read_text()
    sites = find_c_sites(source, "go")

    assert _go_passes(spec, source, tmp_path / "solution") == (5, 5)
    partial = []
    for site in sites[:6]:
        passed, total = _go_passes(
            spec, mutate.render(source, sites, [site.index]), tmp_path / f"m{site.index}"
        )
        partial.append(0 < passed < total)

    assert any(partial)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_js_mutants_pass_some_tests_and_fail_others(tmp_path: Path) -> None:
    """node's own runner on single mutants of the cart solution gives partial passes."""
    spec = JS["cart"]
    source = spec.solution.read_text()
    sites = find_c_sites(source, "javascript")
    results = []
    for site in sites[:6]:
        scratch = tmp_path / f"m{site.index}"
        shutil.copytree(spec.base_dir / "tests", scratch / "tests")
        (scratch / "src").mkdir()
        (scratch / spec.output_rel).write_text(mutate.render(source, sites, [site.index]))
        run = subprocess.run(
            ["node", "--test", "--test-reporter=tap", "tests/cart.test.mjs"],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=120,
        )
        passed = run.stdout.count("\nok ")
        failed = run.stdout.count("\nnot ok ")
        results.append((passed, failed))

    assert any(p > 0 and f > 0 for p, f in results), results
