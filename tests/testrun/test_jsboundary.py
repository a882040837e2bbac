"""The JavaScript value boundary on honest code: a candidate whose exports use every kind of
value the codec carries (numbers with NaN and -0, bigints, Map, Set, Date, typed arrays,
Buffer, RegExp, boxed strings, built-in and candidate error classes, class instances, callbacks
both ways, promises, a default export) and CommonJS modules (a function module, named exports
imported by an ES module test), a TypeScript module loaded through the suite's own loader and
a suite that loads the pipes (six test processes, values past a pipe's buffer both ways,
bursts of settlements) score per test exactly what `node --test` says on the same code.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.results import Outcome
from harness.tasks.spec import TaskSpec
from harness.testrun import TestLimits, jsrun, run_tests
from harness.testrun.jsexports import guess_exports, module_format
from harness.testrun.jsrun import stand_in
from harness.testrun.launch import bwrap_works
from tests._foreign import FOREIGN, needs_node
from tests._jsparity import direct_outcomes, harness_outcomes

CODEC = FOREIGN / "jscodec"
LIMITS = TestLimits(timeout_s=180)
NODE_TEST = ("node", "--test", "--test-reporter=junit", "--test-reporter-destination={results}")
needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="the JavaScript boundary needs bwrap")


def _task(task_id: str, tests: str, output: str) -> TaskSpec:
    return TaskSpec(
        id=task_id,
        base_dir=CODEC,
        reference=(),
        tests=(CODEC / tests,),
        output=CODEC / output,
        language="javascript",
        test_command=(*NODE_TEST, "{tests}"),
        results="junit",
    )


TS = FOREIGN / "jsts"
WIRE = FOREIGN / "jswire"
TASKS = {
    "codec": _task("codec", "tests/codec.test.mjs", "codec.mjs"),
    "cjs-function-module": _task("calc", "cjs/calc.test.js", "cjs/calc.js"),
    "cjs-named-exports": _task("names", "cjs/names.test.mjs", "cjs/names.js"),
    # TypeScript through the suite's own loader (--require): the candidate's node gets it too.
    "typescript-with-a-loader": TaskSpec(
        id="calc_ts",
        base_dir=TS,
        reference=(),
        tests=(TS / "calc.test.ts",),
        output=TS / "calc.ts",
        support=(TS / "strip.cjs",),
        language="typescript",
        test_command=("node", "--require", "./strip.cjs", *NODE_TEST[1:], "{tests}"),
        results="junit",
    ),
    # The pipes: six test processes (more than the tickets issued before the first asks),
    # values past a pipe's buffer both ways, bursts of settlements during calls.
    "pipes-under-load": TaskSpec(
        id="wire",
        base_dir=WIRE,
        reference=(),
        tests=tuple(sorted((WIRE / "tests").glob("part*.test.mjs"))),
        output=WIRE / "wire.mjs",
        language="javascript",
        test_command=(*NODE_TEST, "{tests}"),
        results="junit",
    ),
}


@pytest.mark.slow
@needs_node
@needs_bwrap
@pytest.mark.parametrize("name", sorted(TASKS))
def test_honest_modules_score_per_test_what_node_test_says(name: str, tmp_path: Path) -> None:
    """Every test's outcome behind the boundary is the outcome of `node --test` run directly
    on the same files, and all of them pass."""
    task = TASKS[name]
    code = task.output.read_text()

    result = run_tests(task, code, limits=LIMITS)

    direct = direct_outcomes(task, code, tmp_path)
    assert harness_outcomes(result) == direct, result.output[-3000:]
    assert set(direct.values()) == {Outcome.PASSED} and result.error is None


@pytest.mark.slow
@needs_node
@needs_bwrap
def test_a_wrong_candidate_fails_behind_the_boundary_as_node_test_says(tmp_path: Path) -> None:
    """The parity holds for failures too: a codec candidate with three wrong exports fails
    the same tests behind the boundary as under `node --test`."""
    task = TASKS["codec"]
    code = (
        task.output.read_text()
        .replace("return `hello ${name}`", "return `hi ${name}`")
        .replace(
            "if (kind === 'range') throw new RangeError", "if (kind === 'range') throw new Error"
        )
        .replace("items.push(x); return items.length;", "return items.length;")
    )

    result = run_tests(task, code, limits=LIMITS)

    direct = direct_outcomes(task, code, tmp_path)
    assert harness_outcomes(result) == direct
    assert sum(o is Outcome.FAILED for o in direct.values()) == 3


def test_the_export_names_are_read_from_es_modules_and_common_js() -> None:
    """The stand-in's names, guessed from the code (the candidate's own answer checks them):
    declarations, export lists with aliases, default; exports.x and module.exports = {...}."""
    esm = (
        "export function a() {}\nexport const b = 1, c = 2;\nconst d = 3;\n"
        "export { d as e };\nexport default 4;\nexport class F {}\n"
    )
    cjs = "exports.a = 1;\nmodule.exports.b = 2;\nmodule.exports = { c, d: 1, e() {} };\n"

    assert guess_exports(esm, "esm", "javascript") == ["F", "a", "b", "c", "default", "e"]
    assert guess_exports("export * from './x.js';\n", "esm", "javascript") is None
    assert guess_exports(cjs, "cjs", "javascript") == ["a", "b", "c", "d", "e"]


def test_the_module_format_is_node_s_rule() -> None:
    """.mjs and .cjs by extension; .js by the nearest package.json's type, else CommonJS."""
    files = {"pkg/package.json": b'{"type": "module"}', "package.json": b"{}"}

    assert [module_format(p, files) for p in ("a.mjs", "a.cjs", "pkg/lib/a.js", "a.js")] == [
        "esm",
        "cjs",
        "esm",
        "cjs",
    ]


def test_the_stand_in_holds_no_candidate_code_only_names() -> None:
    """The module the tests import: a connection and the export names, in the module's format;
    a name that is not an identifier is exported by string."""
    esm = stand_in({"format": "esm", "names": ["slug", "default", "a-b"]}, "/b/tests.cjs", "/b/s")
    cjs = stand_in({"format": "cjs", "names": ["add", "not ok"]}, "/b/tests.cjs", "/b/s")

    assert 'import { connect } from "/b/tests.cjs";' in esm
    assert "export { _0 as slug };" in esm and "export { _1 as default };" in esm
    assert 'export { _2 as "a-b" };' in esm
    assert "0 && (module.exports = { add });" in cjs


@needs_node
def test_the_tests_side_decodes_what_the_candidate_sends_strictly() -> None:
    """tests/testrun/js/decode.test.cjs under `node --test`: malformed or hostile messages
    (Object.prototype keys as names, unknown tags and kinds, a __proto__ key, references to
    objects never given, values past the depth cap) are refused or kept inert."""
    script = Path(__file__).parent / "js" / "decode.test.cjs"
    channel = Path(jsrun.__file__).parent / "jsnode" / "channel.cjs"
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "JSNODE_CHANNEL": str(channel)}

    done = subprocess.run(
        ["node", "--test", "--test-reporter=tap", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout[-3000:]
    assert "# fail 0" in done.stdout and "# pass 20" in done.stdout
