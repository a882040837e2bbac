"""The value boundary end to end: what an honest suite needs carries across it."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from harness.results import Outcome
from harness.tasks.spec import TaskSpec
from harness.testrun import TestLimits, isolation_differences, run_tests
from harness.testrun.launch import bwrap_works

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_works(), reason="the boundary needs bubblewrap"),
]

LIMITS = TestLimits(timeout_s=90, per_test_timeout_s=10, collect_timeout_s=20, sandbox="bwrap")


def make_task(base: Path, tests: str, support: dict[str, str] | None = None) -> TaskSpec:
    """A boundary task in `base`: one test file, support files, output out/mod.py."""
    test_file = base / "acceptance" / "test_mod.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text(textwrap.dedent(tests).lstrip())
    paths = []
    for rel, text in (support or {}).items():
        (base / rel).write_text(textwrap.dedent(text).lstrip())
        paths.append(base / rel)
    return TaskSpec(
        id="mod",
        base_dir=base,
        reference=(),
        tests=(test_file,),
        output=base / "out" / "mod.py",
        support=tuple(paths),
        isolation="boundary",
    )


def outcomes(result) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.nodeid.split("::")[-1]: c.outcome.value for c in result.cases}


HYPOTHESIS_TESTS = """
    from hypothesis import given, settings, strategies as st

    from mod import add

    @settings(max_examples=100, deadline=None)
    @given(st.integers(), st.integers())
    def test_add_is_addition(a, b):
        assert add(a, b) == a + b
    """


@pytest.mark.parametrize(
    ("body", "want"),
    [("return a + b", "passed"), ("return a + b if a < 1000 else 0", "failed")],
    ids=["honest", "wrong-for-large"],
)
def test_a_hypothesis_suite_runs_and_scores_honestly(tmp_path: Path, body: str, want: str) -> None:
    """Property tests run behind the boundary: a correct add passes, a wrong one fails."""
    task = make_task(tmp_path, HYPOTHESIS_TESTS)

    slow = replace(LIMITS, per_test_timeout_s=30)  # shrinking makes many crossings
    result = run_tests(task, f"def add(a, b):\n    {body}\n", limits=slow)

    assert (outcomes(result), result.error) == ({"test_add_is_addition": want}, None)


SUPPORT = {
    "kit.py": """
        from dataclasses import dataclass


        class KitError(LookupError):
            pass


        @dataclass(frozen=True)
        class Item:
            name: str
            qty: int


        class Base:
            def hello(self):
                return "base"
        """
}
CARRY_TESTS = """
    import logging
    import warnings
    from unittest import mock

    import pytest

    import mod
    from kit import Base, Item, KitError


    def test_output_reaches_capsys(capsys):
        mod.shout("hi")
        assert capsys.readouterr() == ("hi\\n", "oops\\n")


    def test_logs_reach_caplog(caplog):
        with caplog.at_level(logging.INFO):
            mod.shout("hi")
        assert [(r.name, r.getMessage()) for r in caplog.records] == [("mod", "said hi")]


    def test_warnings_reach_pytest_warns():
        with pytest.warns(DeprecationWarning, match="old"):
            mod.shout("hi")


    def test_monkeypatch_reaches_the_candidate(monkeypatch):
        monkeypatch.setattr(mod, "RATE", 3)
        assert mod.scaled(2) == 6


    def test_the_patch_was_undone():
        assert mod.scaled(2) == 4


    def test_generators_and_context_managers():
        with mod.Counter() as c:
            c.bump()
            assert c.total == 1
        assert list(mod.upto(3)) == [0, 1, 2]


    def test_callbacks_and_mocks_are_handles():
        seen = []
        fake = mock.Mock(return_value=10)
        assert mod.apply(seen.append, 5) is None and seen == [5]
        assert mod.apply(fake, 7) == 10
        fake.assert_called_once_with(7)


    def test_changed_list_dict_and_set_arguments_are_copied_back():
        xs, d, s = [], {}, set()
        mod.fill(xs, d, s)
        assert (xs, d, s) == ([1], {"k": 1}, {1})


    def test_support_errors_records_and_subclasses():
        with pytest.raises(KitError):
            mod.find("nope")
        with pytest.raises(LookupError):
            mod.find("nope")
        assert mod.find("a") == Item("a", 1)
        assert isinstance(mod.make(), Base) and mod.make().hello() == "mine"


    def test_a_candidate_error_class_is_mirrored_with_its_bases():
        with pytest.raises(ValueError) as err:
            mod.bad()
        assert (type(err.value).__name__, err.value.args, err.value.code) == ("Bad", ("b",), 4)


    def test_a_candidate_record_crosses_and_compares_by_its_fields():
        assert mod.spot(1, 2) == mod.spot(1, 2)
        assert (mod.spot(1, 2).x, mod.spot(1, 2).y) == (1, 2)


    def test_an_anchored_match_sees_the_message_only():
        with pytest.raises(ValueError, match="^b$"):
            mod.bad()


    def test_system_exit_is_the_candidates_as_in_plain_python():
        with pytest.raises(SystemExit) as err:
            mod.leave()
        assert err.value.code == 3
    """
CARRY_CANDIDATE = """
import logging
from dataclasses import dataclass
import sys
import warnings

from kit import Base, Item, KitError

RATE = 2
log = logging.getLogger("mod")


def shout(text):
    print(text)
    print("oops", file=sys.stderr)
    log.info("said %s", text)
    warnings.warn("old api", DeprecationWarning)


def scaled(x):
    return x * RATE


class Counter:
    def __init__(self):
        self.total = 0

    def bump(self):
        self.total += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def upto(n):
    yield from range(n)


def apply(fn, x):
    return fn(x)


def fill(xs, d, s):
    xs.append(1)
    d["k"] = 1
    s.add(1)


def find(name):
    if name != "a":
        raise KitError(name)
    return Item(name, 1)


class Mine(Base):
    def hello(self):
        return "mine"


def make():
    return Mine()


class Bad(ValueError):
    def __init__(self, msg):
        super().__init__(msg)
        self.code = 4


def bad():
    raise Bad("b")


def leave():
    sys.exit(3)


@dataclass(frozen=True)
class Spot:
    x: int
    y: int


def spot(x, y):
    return Spot(x, y)
"""


def test_what_an_honest_suite_needs_carries_across(tmp_path: Path) -> None:
    """Output, logs, warnings, monkeypatch, generators, context managers, callbacks, mocks,
    copy-back, support errors, records (the support's and the candidate's own) and
    subclasses, mirrored errors, anchored `match=` patterns: every test passes."""
    task = make_task(tmp_path, CARRY_TESTS, SUPPORT)

    result = run_tests(task, CARRY_CANDIDATE, limits=LIMITS)

    assert ({c.outcome for c in result.cases}, result.total, result.error) == (
        {Outcome.PASSED},
        13,
        None,
    ), result.output[-3000:]


REPLACE_TESTS = """
    from mod import die, hang, ok

    def test_a_hang():
        hang()

    def test_b_ok():
        assert ok() == 1

    def test_c_die():
        die()

    def test_d_ok():
        assert ok() == 1
    """
REPLACE_CANDIDATE = """
import os


def hang():
    while True:
        pass


def die():
    os._exit(1)


def ok():
    return 1
"""


def test_a_candidate_that_hangs_or_dies_is_replaced_for_the_next_test(tmp_path: Path) -> None:
    """The hung and the crashed test fail; the tests after each get a fresh candidate."""
    task = make_task(tmp_path, REPLACE_TESTS)

    result = run_tests(task, REPLACE_CANDIDATE, limits=LIMITS)

    assert outcomes(result) == {
        "test_a_hang": "failed",
        "test_b_ok": "passed",
        "test_c_die": "failed",
        "test_d_ok": "passed",
    }


IDENTITY_TESTS = """
    from mod import cached, double

    def test_double():
        assert double(2) == 4

    def test_the_same_list_every_time():
        assert cached() is cached()
    """
IDENTITY_CANDIDATE = (
    "CACHE = [1]\n\n\ndef cached():\n    return CACHE\n\n\ndef double(x):\n    return 2 * x\n"
)


def test_isolation_differences_name_the_tests_a_boundary_cannot_carry(tmp_path: Path) -> None:
    """Run both ways, only the test relying on the identity of a returned value differs."""
    task = make_task(tmp_path, IDENTITY_TESTS)

    found = isolation_differences(task, IDENTITY_CANDIDATE, LIMITS)

    assert [(d.nodeid.split("::")[-1], d.in_process, d.boundary[:6]) for d in found] == [
        ("test_the_same_list_every_time", "passed", "failed")
    ]


def _named_like_its_package(base: Path, isolation: str) -> TaskSpec:
    """`tool/tool.py` is the output, `tool/__init__.py` (support) re-exports it relatively,
    and the tests (in a folder that is no package) import the package and the module by its
    dotted name, as a library laid out like wcwidth or termcolor does."""
    (base / "tool").mkdir()
    (base / "tool" / "__init__.py").write_text("from .tool import shout\n\n__all__ = ['shout']\n")
    (base / "tests").mkdir()
    test_file = base / "tests" / "test_tool.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import tool
            import tool.tool
            from tool import shout


            def test_the_package_reexports_the_module():
                assert shout("a") == "A!"


            def test_the_module_by_its_dotted_name():
                assert tool.tool.shout("b") == "B!" and tool.shout is not None
            """
        ).lstrip()
    )
    return TaskSpec(
        id="tool",
        base_dir=base,
        reference=(),
        tests=(test_file,),
        output=base / "tool" / "tool.py",
        support=(base / "tool" / "__init__.py",),
        isolation=isolation,
    )


@pytest.mark.parametrize("isolation", ["boundary", "in_process"])
def test_a_module_named_like_its_package_is_imported_as_plain_pytest_does(
    tmp_path: Path, isolation: str
) -> None:
    """The tree's root comes before the module's folder on the path (as `python -m pytest` run
    there puts it), and the candidate's process imports a name as the tests' process resolved
    it: `tool` is the package, `tool.tool` the module, on both sides."""
    task = _named_like_its_package(tmp_path, isolation)
    code = "def shout(text):\n    return text.upper() + '!'\n"

    result = run_tests(task, code, limits=LIMITS)

    assert (result.passed, result.total) == (2, 2), result.output[-2000:]


SUPPORT_READER = {
    "out/helpers.py": "SCALE = 3\n",
    "out/table.txt": "a=1\nb=2\n",
}


@pytest.mark.parametrize("isolation", ["boundary", "in_process"])
def test_the_candidate_reads_support_files_the_tests_did_not_import(
    tmp_path: Path, isolation: str
) -> None:
    """The candidate imports a support module the tests never imported and reads a support
    data file beside it: honest in either mode (in process no longer called tampering)."""
    (tmp_path / "out").mkdir()
    task = replace(
        make_task(
            tmp_path,
            """
            from mod import scaled, table


            def test_scaled():
                assert scaled(2) == 6


            def test_table():
                assert table() == {"a": "1", "b": "2"}
            """,
            SUPPORT_READER,
        ),
        isolation=isolation,
    )
    code = textwrap.dedent(
        """
        import os

        from helpers import SCALE


        def scaled(x):
            return x * SCALE


        def table():
            with open(os.path.join(os.path.dirname(__file__), "table.txt")) as f:
                return dict(line.strip().split("=") for line in f)
        """
    )

    result = run_tests(task, code, limits=LIMITS)

    assert (result.passed, result.total, result.tampered) == (2, 2, False), result.output[-2000:]


def test_in_process_the_candidate_may_not_write_a_support_file(tmp_path: Path) -> None:
    """Reading a support file is granted in process; writing one is still refused."""
    (tmp_path / "out").mkdir()
    task = replace(
        make_task(
            tmp_path,
            """
            from mod import spoil


            def test_spoil():
                assert spoil() == "done"
            """,
            SUPPORT_READER,
        ),
        isolation="in_process",
    )
    code = textwrap.dedent(
        """
        import os


        def spoil():
            with open(os.path.join(os.path.dirname(__file__), "helpers.py"), "a") as f:
                f.write("SCALE = 1\\n")
            return "done"
        """
    )

    result = run_tests(task, code, limits=LIMITS)

    assert result.passed == 0 and result.tampered, result.output[-2000:]


def test_the_environment_the_tests_set_reaches_the_candidate_and_not_back(tmp_path: Path) -> None:
    """`monkeypatch.setenv` and `delenv` in a test are seen by the candidate's next read (as in
    one process); what the candidate sets in its own environment stays in its process."""
    task = make_task(
        tmp_path,
        """
        import os

        from mod import greeting, set_own


        def test_set(monkeypatch):
            monkeypatch.setenv("GREETING", "hi")
            assert greeting() == "hi"


        def test_deleted(monkeypatch):
            monkeypatch.setenv("GREETING", "hi")
            monkeypatch.delenv("GREETING")
            assert greeting() == "none"


        def test_the_candidates_own_stays_its_own():
            set_own()
            assert "CANDIDATE_SET" not in os.environ
        """,
    )
    code = textwrap.dedent(
        """
        import os


        def greeting():
            return os.environ.get("GREETING", "none")


        def set_own():
            os.environ["CANDIDATE_SET"] = "1"
        """
    )

    result = run_tests(task, code, limits=LIMITS)

    assert outcomes(result) == dict.fromkeys(
        ["test_set", "test_deleted", "test_the_candidates_own_stays_its_own"], "passed"
    ), result.output[-2000:]


def test_a_candidate_folder_that_cannot_be_made_is_the_harness_error_not_a_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate's folder is made by its first start, beside the test process's start; a
    full disk there is raised by the run (the harness's failure), never scored as the
    candidate's failing tests."""
    import errno

    from harness.testrun import session

    task = make_task(tmp_path, "from mod import f\n\n\ndef test_f():\n    assert f() == 1\n")

    def full(run: object, uid: object) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(session, "_candidate_folder", full)

    with pytest.raises(OSError, match="No space left"):
        run_tests(task, "def f():\n    return 1\n", limits=LIMITS)
