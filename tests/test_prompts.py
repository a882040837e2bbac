"""Prompt templates: strict rendering, cacheable prefix first."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.prompts import (
    PromptError,
    PromptSet,
    default_prompts_dir,
    known_types,
    read_principles,
    task_context,
)
from harness.tasks.spec import TaskSpec


@pytest.fixture
def prompts() -> PromptSet:
    return PromptSet(default_prompts_dir(), "service_port")


def test_every_shipped_prompt_set_is_complete() -> None:
    """Every folder under prompts/ has every step's template with the three blocks, so each
    is a known type; service_port, language_port and module_port among them."""
    root = default_prompts_dir()
    folders = {d.name for d in root.iterdir() if d.is_dir()}

    for task_type in folders:
        PromptSet(root, task_type)  # raises on a missing template or block
    assert known_types(root) == frozenset(folders)
    assert {"service_port", "language_port", "module_port"} <= folders


def test_write_carries_reference_tests_and_instructions(spec: TaskSpec, prompts: PromptSet) -> None:
    """The write prompt's stable part holds the inputs; the job description comes last."""
    prompt = prompts.render("write", task_context(spec, ("add", "sub")))

    assert "return (200, a + b)" in prompt.stable
    assert "def test_sub_zero" in prompt.stable
    assert "Keep the public names." in prompt.stable
    assert "It must define\nadd, sub." in prompt.variable
    assert "Your job now" not in prompt.stable


def test_every_step_shares_the_cacheable_prefix(spec: TaskSpec, prompts: PromptSet) -> None:
    """write, rewrite and fix send the same system and stable text, so retries hit the cache."""
    ctx = task_context(spec)
    extra = {"code": "x = 1", "violations": ["v"], "failures": [], "passed": 0, "total": 4}

    rendered = [prompts.render(step, {**ctx, **extra}) for step in ("write", "rewrite", "fix")]

    assert len({(p.system, p.stable) for p in rendered}) == 1
    assert len({p.variable for p in rendered}) == 3


def test_fix_shows_best_code_and_only_the_failures_given(
    spec: TaskSpec, prompts: PromptSet
) -> None:
    """The fix prompt lists the failures it is handed and the read-only rule."""
    failure = {
        "nodeid": "acceptance/test_calc.py::test_sub",
        "outcome": "failed",
        "message": "AssertionError: assert 8 == 2",
        "details": "E   assert 8 == 2",
    }
    ctx = {
        **task_context(spec),
        "code": "BEST_CODE",
        "failures": [failure],
        "passed": 3,
        "total": 4,
    }

    prompt = prompts.render("fix", ctx)

    assert "```python\nBEST_CODE\n```" in prompt.variable
    assert "### acceptance/test_calc.py::test_sub (failed)" in prompt.variable
    assert "passes 3 of 4 tests" in prompt.variable
    assert "Do NOT change the tests" in prompt.variable


def test_a_missing_variable_is_an_error(spec: TaskSpec, prompts: PromptSet) -> None:
    """Strict rendering: a template variable nobody supplied stops the render."""
    with pytest.raises(PromptError, match=r"fix\.md: 'code' is undefined"):
        prompts.render("fix", {**task_context(spec), "failures": [], "passed": 0, "total": 1})


def test_a_template_without_the_three_blocks_is_refused(tmp_path: Path) -> None:
    """Every step template must define system, stable and variable."""
    folder = tmp_path / "t"
    folder.mkdir()
    for step in ("write", "review", "rewrite", "fix"):
        (folder / f"{step}.md").write_text("{% block system %}s{% endblock %}")

    with pytest.raises(PromptError, match="add block\\(s\\) stable, variable"):
        PromptSet(tmp_path, "t")


def test_check_catches_a_template_typo_before_anything_is_spent(
    spec: TaskSpec, tmp_path: Path
) -> None:
    """A fix template naming an unknown variable fails the start-up check, not attempt 2."""
    import shutil

    shutil.copytree(default_prompts_dir() / "service_port", tmp_path / "service_port")
    fix = tmp_path / "service_port" / "fix.md"
    fix.write_text(fix.read_text().replace("{{ passed }}", "{{ passd }}"))
    prompts = PromptSet(tmp_path, "service_port")

    with pytest.raises(PromptError, match="'passd' is undefined"):
        prompts.check(task_context(spec))
    PromptSet(default_prompts_dir(), "service_port").check(task_context(spec))


def test_every_prompt_type_is_installed_with_the_package() -> None:
    """pyproject ships each prompts/<type>/ folder, so an installed harness finds its prompts."""
    import tomllib

    root = default_prompts_dir()
    pyproject = tomllib.loads((root.parent / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["data-files"]

    for task_type in known_types(root):
        assert shipped[f"share/harness/prompts/{task_type}"] == [f"prompts/{task_type}/*.md"]


def _go_spec() -> TaskSpec:
    from harness.runner import load_task_list

    root = default_prompts_dir().parent / "tasks" / "go_example" / "tasks.yaml"
    return next(s for s in load_task_list(root) if s.id == "bank")


def test_language_port_shows_both_languages_and_fences_each_file() -> None:
    """A Python → Go port names both languages; the reference is fenced python, the tests
    and the code asked for are fenced go, and the file asked for is the .go output."""
    spec = _go_spec()
    prompts = PromptSet(default_prompts_dir(), "language_port")

    prompt = prompts.render("write", task_context(spec, ("NewAccount",)))

    assert "porting code from Python to Go" in prompt.system
    assert "# Porting task bank: Python → Go" in prompt.stable
    assert "## Python code to port: `reference/bank.py`\n```python\n" in prompt.stable
    assert "`bank/bank_test.go`\n```go\npackage bank" in prompt.stable
    assert "Write `bank.go`, the complete Go file. It must define\nNewAccount." in prompt.variable
    assert "one ```go fenced block" in prompt.variable
    assert "python" not in prompt.variable


def test_language_port_renders_every_step_strictly_for_both_examples() -> None:
    """Every step of language_port renders with the examples' contexts (no missing variable)."""
    from harness.runner import load_task_list

    prompts = PromptSet(default_prompts_dir(), "language_port")
    for example in ("go_example", "js_example"):
        for spec in load_task_list(default_prompts_dir().parent / "tasks" / example / "tasks.yaml"):
            prompts.check(task_context(spec))


def test_service_port_for_python_still_asks_for_a_python_module(spec: TaskSpec) -> None:
    """The language variables render the Python prompt as before: python fences, .py file."""
    prompt = PromptSet(default_prompts_dir(), "service_port").render("write", task_context(spec))

    assert "working Python modules that pass" in prompt.system
    assert "```python\n" in prompt.stable
    assert "Write `calc_service.py`, the complete ported module." in prompt.variable
    assert "one ```python fenced block" in prompt.variable


MODULE_PORT = default_prompts_dir().parent / "tasks" / "module_port_example" / "tasks.yaml"


def _module_spec() -> TaskSpec:
    from harness.runner import load_task_list

    [spec] = load_task_list(MODULE_PORT)
    return spec


def test_module_port_asks_to_keep_the_api_and_replace_the_dependency() -> None:
    """A same-language library port: one language named, the public API kept, the old
    dependency replaced as the instructions say, and none of service_port's platform rules."""
    spec = _module_spec()
    prompts = PromptSet(default_prompts_dir(), "module_port")

    prompt = prompts.render("write", task_context(spec, ("parse_args",)))

    assert spec.type == "module_port"
    assert "from one library or framework to another, in the\nsame language" in prompt.system
    assert "# Porting task report_args: the same Python module on a new dependency" in prompt.stable
    assert "## Code to port (its public API is the contract): `legacy/report_args.py`" in (
        prompt.stable
    )
    assert "Replace optparse with argparse" in prompt.stable
    assert "It must define\nparse_args, and every other public name" in prompt.variable
    assert "do not import the old one" in prompt.variable
    assert "platform's logger" not in prompt.system + prompt.stable + prompt.variable


def test_module_port_review_sees_the_original_api_and_the_instructions() -> None:
    """The reviewer checks the public API against the original and the dependency against
    the instructions, so both are in its stable part; the code under review comes last."""
    prompts = PromptSet(default_prompts_dir(), "module_port")
    ctx = {**task_context(_module_spec()), "code": "REVIEWED = 1"}

    prompt = prompts.render("review", ctx)

    assert "def parse_args(argv: list[str]) -> Options:" in prompt.stable
    assert "Replace optparse with argparse" in prompt.stable
    assert "1. The old dependency is gone" in prompt.stable
    assert "```python\nREVIEWED = 1\n```" in prompt.variable


def test_module_port_renders_every_step_and_shares_the_prefix() -> None:
    """Every step of module_port renders strictly; write, rewrite and fix share the cacheable
    prefix; fix honours `fix_failures: full` as service_port does."""
    prompts = PromptSet(default_prompts_dir(), "module_port")
    ctx = task_context(_module_spec())
    prompts.check(ctx)
    extra = {"code": "x = 1", "violations": ["v"], "failures": [], "passed": 0, "total": 18}

    rendered = [prompts.render(step, {**ctx, **extra}) for step in ("write", "rewrite", "fix")]
    full = prompts.render("fix", {**ctx, **extra, "full_output": "FAILED t::x - boom"})

    assert len({(p.system, p.stable) for p in rendered}) == 1
    assert "## Test run (every visible test)\n```\nFAILED t::x - boom" in full.variable


def test_every_type_lists_numbered_principles_and_renders_a_judge_prompt(spec: TaskSpec) -> None:
    """Each shipped type has principles 1..n and a judge prompt showing them, the code under
    review and a calibration example of each score."""
    for task_type in sorted(known_types(default_prompts_dir())):
        prompts = PromptSet(default_prompts_dir(), task_type)
        prompt = prompts.render("judge", {**task_context(spec), "code": "def add(): pass"})

        assert [p.number for p in prompts.principles] == list(range(1, 5))
        assert all(f"**{p.slug}**" in prompt.stable for p in prompts.principles)
        assert ("fail, evidence" in prompt.stable, "pass" in prompt.stable) == (True, True)
        assert "def add(): pass" in prompt.variable


def test_a_badly_numbered_principle_names_its_line(tmp_path: Path) -> None:
    """A principle out of order or without a short name is an error at its line."""
    path = tmp_path / "principles.md"
    path.write_text("1. **one**: first\n\n3. **three**: skipped two\n")

    with pytest.raises(PromptError) as info:
        read_principles(path)

    assert str(info.value).startswith(f"{path}:3: write principle 2 as")


def test_a_judge_turned_on_without_its_files_is_refused_at_start_up(
    tmp_path: Path, spec: TaskSpec
) -> None:
    """A type without judge.md or principles.md is fine until loop.judge is on; then it is
    a start-up error naming the missing file."""
    folder = tmp_path / "service_port"
    folder.mkdir()
    for step in ("write", "review", "rewrite", "fix"):
        source = default_prompts_dir() / "service_port" / f"{step}.md"
        (folder / f"{step}.md").write_text(source.read_text())
    for name in ("_context.md", "_system.md"):
        (folder / name).write_text((default_prompts_dir() / "service_port" / name).read_text())
    prompts = PromptSet(tmp_path, "service_port")
    prompts.check(task_context(spec))

    with pytest.raises(PromptError) as info:
        prompts.check(task_context(spec), judge=True)

    assert f"{folder / 'judge.md'} is missing" in str(info.value)


def test_a_broken_principles_file_refuses_only_a_judged_night(
    tmp_path: Path, spec: TaskSpec
) -> None:
    """With the judge off principles.md is never read; on, its bad line is a start-up error."""
    folder = tmp_path / "service_port"
    folder.mkdir()
    for source in (default_prompts_dir() / "service_port").glob("*.md"):
        (folder / source.name).write_text(source.read_text())
    (folder / "principles.md").write_text("- keep the names\n")
    prompts = PromptSet(tmp_path, "service_port")
    prompts.check(task_context(spec))

    with pytest.raises(PromptError) as info:
        prompts.check(task_context(spec), judge=True)

    assert str(info.value).startswith(f"{folder / 'principles.md'}:1: write principle 1 as")
