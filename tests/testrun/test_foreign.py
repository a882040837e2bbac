"""The foreign runners: a task's own test command (go test -json, node --test with JUnit), its
report read and checked against the ids in the pristine tests and the command's exit status."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.results import Outcome, TestCase
from harness.testrun import TestLimits, fprecheck, run_tests
from harness.testrun.expect import expected_ids
from harness.testrun.fprecheck import precheck_foreign
from harness.testrun.fscore import score
from harness.testrun.fspawn import Launched
from harness.testrun.reports import MAX_REPORT_BYTES, Report, read_go_json, read_junit
from harness.testrun.scratch import Pristine, SandboxError, read_pristine
from tests._foreign import (
    GO_DIR,
    GO_TESTS,
    JS_TESTS,
    candidate,
    go_task,
    js_task,
    needs_go,
    needs_node,
)

LIMITS = TestLimits(timeout_s=90)


def _event(action: str, test: str = "", output: str = "") -> str:
    event = {"Action": action, "Package": "example.com/calc", "Test": test, "Output": output}
    return json.dumps({k: v for k, v in event.items() if v})


def test_go_json_settles_top_level_tests_with_their_output() -> None:
    """A top-level test's terminal event settles it; its subtests' output joins its details."""
    stream = "\n".join(
        [
            _event("run", "TestA"),
            _event("output", "TestA", "=== RUN   TestA\n"),
            _event("output", "TestA/sub", "    a_test.go:9: got 1, want 2\n"),
            _event("fail", "TestA/sub"),
            _event("fail", "TestA"),
            _event("run", "TestB"),
            _event("skip", "TestB"),
            _event("run", "TestC"),
            _event("pass", "TestC"),
        ]
    )

    report = read_go_json(stream)

    assert [(c.nodeid, c.outcome) for c in report.cases.values()] == [
        ("TestA", Outcome.FAILED),
        ("TestB", Outcome.SKIPPED),
        ("TestC", Outcome.PASSED),
    ]
    assert report.cases["TestA"].message == "a_test.go:9: got 1, want 2"
    assert "got 1, want 2" in report.cases["TestA"].details
    assert report.problems == []


def test_go_json_flags_a_test_reported_twice() -> None:
    """A forged terminal event next to the real one is a problem, not a second opinion."""
    stream = "\n".join([_event("pass", "TestA"), _event("run", "TestA"), _event("fail", "TestA")])

    report = read_go_json(stream)

    assert report.problems == ["test 'TestA' was reported twice"]


def test_go_json_keeps_the_compiler_output_of_a_build_failure() -> None:
    """Lines that are not events (the compiler's) are the report's text."""
    stream = "# example.com/calc\ncalc.go:5:1: syntax error\nFAIL\texample.com/calc [build failed]"

    report = read_go_json(stream)

    assert report.cases == {}
    assert "calc.go:5:1: syntax error" in report.text


def test_junit_reads_nested_cases_and_their_outcomes() -> None:
    """Every <testcase> at any depth, by name: failure, error, skipped or passed."""
    xml = b"""<?xml version="1.0"?><testsuites>
      <testcase name="a"/>
      <testsuite name="group">
        <testcase name="b"><failure message="8 !== 2">trace</failure></testcase>
        <testcase name="c"><error message="boom"/></testcase>
        <testcase name="d"><skipped message="later"/></testcase>
      </testsuite></testsuites>"""

    report = read_junit(xml)

    assert [(c.nodeid, c.outcome, c.message) for c in report.cases.values()] == [
        ("a", Outcome.PASSED, ""),
        ("b", Outcome.FAILED, "8 !== 2"),
        ("c", Outcome.ERROR, "boom"),
        ("d", Outcome.SKIPPED, "later"),
    ]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"<testsuites><testcase name='a'/></testsuites><testsuites/>", "not one well-formed"),
        (
            b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]>'
            b"<testsuites><testcase name='&b;'/></testsuites>",
            "not one well-formed",
        ),
        (b"<html/>", "root is <html>"),
        (b"<testsuites>" + b" " * MAX_REPORT_BYTES + b"</testsuites>", "over 8 MiB"),
    ],
)
def test_junit_refuses_what_no_honest_reporter_writes(data: bytes, problem: str) -> None:
    """Two documents, entities, a foreign root or a huge file: a problem, never parsed."""
    report = read_junit(data)

    assert report.cases == {}
    assert problem in report.problems[0]


def _pristine(rel: str, text: str) -> Pristine:
    return Pristine(((rel, text.encode()),), (rel,))


def test_go_ids_are_the_top_level_test_functions() -> None:
    """func TestXxx(t *testing.T) only: not helpers, TestMain, lower-case names or comments."""
    text = """package calc
import "testing"
func TestAdd(t *testing.T) {}
func Test_sub(tt *testing.T) {}
func Testify(t *testing.T) {}
func TestMain(m *testing.M) {}
func helper(t *testing.T) {}
// func TestCommented(t *testing.T) {}
/* func TestBlock(t *testing.T) {} */
func BenchmarkAdd(b *testing.B) {}
"""

    found = expected_ids(_pristine("calc_test.go", text), "go-json", "go", "t")

    assert found.ids == ("TestAdd", "Test_sub")


def test_js_ids_are_the_literal_names_of_test_and_it_calls() -> None:
    """test()/it() (and .skip/.only/.todo) with a literal name; not t.test, describe or comments."""
    text = """const { test, describe, it } = require('node:test');
test('adds', () => {});
test.skip("skips", () => {});
describe('group', () => { it(`nested`, () => {}); });
// test('commented', () => {});
test('outer', async (t) => { await t.test('inner', () => {}); });
"""

    found = expected_ids(_pristine("a.test.js", text), "junit", "javascript", "t")

    assert found.ids == ("adds", "skips", "nested", "outer")
    assert found.suite_skips == {"skips"}


def test_expected_ids_are_collected_once_per_pristine_content() -> None:
    """Two tasks with the same tests share one collection, whatever their ids."""
    pristine = read_pristine(go_task())

    first = expected_ids(pristine, "go-json", "go", "one")
    second = expected_ids(read_pristine(go_task(id="two")), "go-json", "go", "two")

    assert first is second
    assert first.ids == GO_TESTS


def test_duplicate_test_names_are_a_clear_error() -> None:
    """A runner that scores by name cannot tell two tests of one name apart: say so."""
    text = "test('same', () => {});\ntest('same', () => {});\n"

    with pytest.raises(SandboxError, match=r"\['same'\] occur more than once.*rename them"):
        expected_ids(_pristine("dup.test.js", text), "junit", "javascript", "dups")


def _launched(exit_code: int | None, timed_out: bool = False) -> Launched:
    return Launched(exit_code=exit_code, timed_out=timed_out)


def _report(*cases: tuple[str, Outcome]) -> Report:
    report = Report()
    for nodeid, outcome in cases:
        report.add(TestCase(nodeid, outcome))
    return report


@pytest.mark.parametrize(
    ("exit_code", "outcomes", "tampered"),
    [
        (0, (Outcome.PASSED, Outcome.PASSED), False),
        (1, (Outcome.PASSED, Outcome.FAILED), False),
        (1, (Outcome.PASSED, Outcome.PASSED), True),  # a forged pass over a real failure
        (0, (Outcome.PASSED, Outcome.FAILED), True),  # a failing run that exits 0
        (0, (Outcome.PASSED,), True),  # an early exit 0: the second test never reported
    ],
)
def test_the_exit_status_must_agree_with_the_outcomes(
    exit_code: int, outcomes: tuple[Outcome, ...], tampered: bool
) -> None:
    """All expected tests pass exactly when the command exits 0; anything else is tampering."""
    report = _report(*zip(("TestA", "TestB"), outcomes, strict=False))
    expected = expected_ids(
        _pristine("x_test.go", "func TestA(t *testing.T) {\nfunc TestB(t *testing.T) {"),
        "go-json",
        "go",
        "t",
    )

    result = score(expected, report, _launched(exit_code), ())

    honest_passes = sum(1 for o in outcomes if o is Outcome.PASSED)
    assert result.tampered is tampered
    assert (result.passed, result.total) == (0 if tampered else honest_passes, 2)


def test_a_skip_the_suite_declares_is_left_out_of_the_total() -> None:
    """test.skip(...) in the pristine tests is the suite's skip; any other skip counts against
    the candidate, as pytest's runner counts it."""
    text = "test('a', () => {});\ntest.skip('b', () => {});\ntest('c', () => {});"
    expected = expected_ids(_pristine("s.test.js", text), "junit", "javascript", "t")
    report = _report(("a", Outcome.PASSED), ("b", Outcome.SKIPPED), ("c", Outcome.SKIPPED))

    result = score(expected, report, _launched(0), ())

    assert (result.passed, result.failed, result.total, result.skipped) == (1, 1, 2, 1)


def test_a_failed_test_file_explains_a_failing_exit_status() -> None:
    """node reports a file that failed after its tests (an unhandled rejection) as a failing
    testcase named by the file: the passes stand, and it is not tampering."""
    expected = expected_ids(
        _pristine("a.test.js", "test('a', () => {});"), "junit", "javascript", "t"
    )
    report = _report(("a", Outcome.PASSED), ("/tmp/x/root/a.test.js", Outcome.FAILED))

    result = score(expected, report, _launched(1), ("a.test.js",))

    assert (result.passed, result.total, result.tampered) == (1, 1, False)


def test_unexpected_ids_are_tampering() -> None:
    """A reported id that is not in the pristine tests (a forged line) voids the run."""
    expected = expected_ids(
        _pristine("y_test.go", "func TestA(t *testing.T) {"), "go-json", "go", "t"
    )

    result = score(
        expected, _report(("TestA", Outcome.PASSED), ("TestZ", Outcome.PASSED)), _launched(0), ()
    )

    assert result.tampered
    assert "unexpected test ids ['TestZ']" in (result.error or "")


def test_a_timed_out_run_confirms_no_pass() -> None:
    """Passes reported before the clock stopped the run have no exit status to agree with."""
    expected = expected_ids(
        _pristine("z_test.go", "func TestA(t *testing.T) {"), "go-json", "go", "t"
    )

    result = score(expected, _report(("TestA", Outcome.PASSED)), _launched(None, True), ())

    assert (result.passed, result.errors, result.timed_out, result.tampered) == (0, 1, True, False)


def test_go_precheck_refuses_only_what_leaves_memory_safety_or_reaches_the_binary() -> None:
    """Imports of syscall, C, unsafe (escapes decoded), embed, and //go:linkname are refused,
    read from the parsed file, and so are the policy's os, flag, reflect and runtime with their
    subpackages; an exit, a string or a comment is not refused."""
    refused = [
        'import sc "syscall"',
        'import (\n\t"fmt"\n\t"C"\n)',
        "import u `unsafe`",
        'import "un\\u0073afe"',
        'import _ "embed"',
        "//go:linkname x runtime.x\nfunc x()",
        'import "os"',
        'import "os/signal"',
        'import f "flag"',
        'import "reflect"',
        'import "runtime/debug"',
    ]
    allowed = [
        'import "log"\n\nfunc f() { log.Fatal(0) }',
        'var s = "import \\"unsafe\\""',
        "// we never os.Exit here\nfunc f() {}",
        'var numerals = []string{"M", "D", "C"}',  # a string is not an import
        '// import "unsafe"\nimport "fmt"',
    ]

    assert all(precheck_foreign("go", f"package x\n\n{code}\n") for code in refused)
    assert [precheck_foreign("go", f"package x\n\n{code}\n") for code in allowed] == [""] * 5


def test_go_precheck_lets_a_task_import_what_its_policy_allows() -> None:
    """With `os` allowed for the task (its refused list without it), `os` passes; `osext`
    is no subpackage of a refused one, and `unsafe` stays refused whatever the list says."""
    refused = frozenset({"flag", "reflect", "runtime"})

    shown = [
        precheck_foreign("go", f"package x\n\n{code}\n", go_refused=refused)
        for code in ('import "os"', 'import "example.com/osext"', 'import "unsafe"')
    ]

    assert shown == ["", "", "importing unsafe is not allowed in candidate code"]


def test_js_precheck_refuses_the_roads_into_the_test_process() -> None:
    """The assertion and test modules, computed requires, exits and process[...] are refused;
    ordinary modules and strings are not."""
    refused = [
        'require("assert").ok = () => {}',
        'import a from "node:assert/strict"',
        "require('ass' + 'ert')",
        'process["exit"](0)',
        "process.exitCode = 0",
        "require.cache[k] = m",
        'require("node:\\u0061ssert")',
        'const fs = require("fs")',
    ]
    allowed = [
        'const p = require("node:path")',
        'import x from "./util.js"',
        'if (m === "test") {}',
    ]

    assert all(precheck_foreign("javascript", code) for code in refused)
    assert [precheck_foreign("typescript", code) for code in allowed] == ["", "", ""]


def test_js_precheck_reads_code_not_comments_or_the_text_of_literals() -> None:
    """An honest file may name process.exit, process.binding or require.cache in a comment, a
    string, a template's text or a regular expression; in code (a template's ${...} is code)
    they are refused as before."""
    honest = [
        "// never call process.exit() here\nexport const f = () => 1;",
        "/* process.binding('fs') is refused */ export const f = 1;",
        'export const msg = "process.kill and require.cache are not ours";',
        "export const t = `process.exitCode ${1 + 1}`;",
        "export const r = /process\\.exit/;",
    ]
    refused = ["export const t = `${process.exit(0)}`;", "const f = () => 1; process.exit(0);"]

    assert [precheck_foreign("javascript", code) for code in honest] == [""] * 5
    assert [precheck_foreign("typescript", code) for code in honest] == [""] * 5
    assert all("process.exit" in precheck_foreign("javascript", code) for code in refused)


def test_js_precheck_refuses_the_modules_it_is_given_and_no_others() -> None:
    """The refused list comes from the caller (the policy for the task): a module taken off
    it loads, however spelled; one put on it is refused."""
    code = 'import { readFileSync } from "node:f\\u0073";\nconst u = require("url");\n'
    fs_allowed = frozenset({"assert", "fs/promises"})

    assert "'node:f" in precheck_foreign("javascript", code)  # the shipped list refuses fs
    assert precheck_foreign("javascript", code, fs_allowed) == ""
    assert "'url'" in precheck_foreign("javascript", code, fs_allowed | {"url"})


def test_js_text_check_without_a_grammar_uses_the_same_list(monkeypatch) -> None:
    """Code the grammar cannot read is checked as text against the very list given."""
    monkeypatch.setattr(fprecheck, "syntax_tree", lambda code, grammar: None)
    code = 'const a = require("node:assert");\nimport u from "url";\n'

    assert "'node:assert'" in precheck_foreign("javascript", code)
    assert precheck_foreign("javascript", code, frozenset({"fs"})) == ""
    assert "'url'" in precheck_foreign("javascript", code, frozenset({"url"}))


def test_output_paths_that_change_the_build_are_refused() -> None:
    """A candidate placed at go.mod or as a _test.go file would change what is tested."""
    for output in ("go.mod", "acceptance/extra_test.go"):
        with pytest.raises(SandboxError, match="is not usable"):
            run_tests(go_task(output=GO_DIR / output), "package calc", limits=LIMITS)


def test_junit_needs_the_results_placeholder() -> None:
    """A JUnit task whose command never writes to {results} is told how to fix it."""
    task = js_task(test_command=("node", "--test"))

    with pytest.raises(SandboxError, match=r"write its report to \{results\}"):
        run_tests(task, "exports.add = 1", limits=LIMITS)


def test_results_placeholder_outside_junit_is_refused_before_the_sandbox() -> None:
    """{results} in a go-json command (no report pipe is opened for it) is refused up front."""
    task = go_task(test_command=("go", "test", "-json", "-o={results}", "./..."))

    with pytest.raises(SandboxError, match=r"reads no report; remove it from the test_command"):
        run_tests(task, "package calc", limits=LIMITS)


def _go_direct(code: str, tmp_path: Path) -> tuple[int, int]:
    """(passed, failed) top-level tests from `go test -json` run directly on a copy."""
    work = tmp_path / "direct"
    shutil.copytree(GO_DIR, work, ignore=shutil.ignore_patterns("candidates"))
    (work / "acceptance" / "calc.go").write_text(code)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GOCACHE": str(tmp_path / "gc")}
    env |= {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "CGO_ENABLED": "0"}
    done = subprocess.run(
        ["go", "test", "-json", "./..."], cwd=work, env=env, capture_output=True, text=True
    )
    events = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    top = [e for e in events if e.get("Test") and "/" not in e["Test"]]
    return tuple(sum(1 for e in top if e["Action"] == a) for a in ("pass", "fail"))  # type: ignore[return-value]


@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("name", ["good", "partial"])
def test_go_counts_equal_go_test_json_run_directly(name: str, tmp_path: Path) -> None:
    """The sandboxed run scores exactly what `go test -json` reports on the same candidate."""
    code = candidate("go", name)

    result = run_tests(go_task(), code, limits=LIMITS)

    assert (result.passed, result.failed) == _go_direct(code, tmp_path)
    assert (result.total, result.errors, result.tampered) == (3, 0, False)


@pytest.mark.slow
@needs_go
def test_go_compile_error_is_a_recorded_attempt_with_every_test_errored() -> None:
    """A candidate that does not compile: every expected test errored, the compiler's words."""
    result = run_tests(go_task(), candidate("go", "broken"), limits=LIMITS)

    assert [(c.nodeid, c.outcome) for c in result.cases] == [(t, Outcome.ERROR) for t in GO_TESTS]
    assert "syntax error" in result.cases[0].message
    assert not result.tampered and not result.rejected


@pytest.mark.slow
@needs_go
def test_go_failures_feed_the_fix_prompt_like_pytest_ones() -> None:
    """The failing test's message names the assertion; its details carry the test's output."""
    result = run_tests(go_task(), candidate("go", "partial"), limits=LIMITS)

    (failing,) = result.failing()
    assert failing.nodeid == "TestSub"
    assert failing.message == "calc_test.go:13: Sub(5, 3) = 8, want 2"
    assert "--- FAIL: TestSub" in failing.details


def _node_direct(code: str, tmp_path: Path) -> tuple[int, int]:
    """(passed, failed) from node's own TAP summary, run directly on a copy."""
    work = tmp_path / "direct"
    shutil.copytree(Path(js_task().base_dir), work, ignore=shutil.ignore_patterns("candidates"))
    (work / "calc.js").write_text(code)
    done = subprocess.run(
        ["node", "--test", "--test-reporter=tap", "acceptance/calc.test.js"],
        cwd=work,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    counts = dict(re.findall(r"^# (pass|fail) (\d+)$", done.stdout, re.MULTILINE))
    return int(counts["pass"]), int(counts["fail"])


@pytest.mark.slow
@needs_node
@pytest.mark.parametrize("name", ["good", "partial"])
def test_node_counts_equal_node_test_run_directly(name: str, tmp_path: Path) -> None:
    """The sandboxed run scores exactly what node's runner reports on the same candidate."""
    code = candidate("js", name)

    result = run_tests(js_task(), code, limits=LIMITS)

    assert (result.passed, result.failed) == _node_direct(code, tmp_path)
    assert (result.total, result.errors, result.tampered) == (3, 0, False)
    assert [c.nodeid for c in result.cases] == list(JS_TESTS)


@pytest.mark.slow
@needs_node
def test_node_syntax_error_is_a_recorded_attempt_with_every_test_errored() -> None:
    """A candidate that does not load: every expected test errored, not tampering."""
    result = run_tests(js_task(), candidate("js", "broken"), limits=LIMITS)

    assert [c.outcome for c in result.cases] == [Outcome.ERROR] * 3
    assert "did not run to the end" in result.cases[0].message
    assert not result.tampered


@pytest.mark.slow
@needs_node
def test_a_foreign_run_without_bubblewrap_says_so() -> None:
    """The rlimits fallback's warnings ride on a foreign result as on a pytest one."""
    limits = TestLimits(timeout_s=90, sandbox="none")

    result = run_tests(js_task(), candidate("js", "good"), limits=limits)

    assert result.passed == 3
    assert any(w.startswith("bubblewrap is not available") for w in result.warnings)
