"""The parity corpus: real libraries' own suites, each library served as its own port.

A library is downloaded as its published source distribution (`pip download --no-binary
:all: --no-deps NAME==VERSION`, pinned), unpacked into a cache folder git ignores, and laid
out as a task list: each module under test is a task's output (the model's reply is that
module's own text), its test files are the task's tests, the package's other modules and the
suite's helpers are support files. Nothing of a library is committed.

Two answers per test are compared: plain `python -m pytest` on the original files (the module
at its place, the same folders on the path as the harness puts there), and a `harness run
--provider live` night against a fake vendor that replies with the module. Parity means the
same outcome per test (passed, failed, error, skipped), not that every test passes.

QuixBugs (not on PyPI) is read from a git checkout or git directory named by HARNESS_QUIXBUGS:
its 40 correct programs are the replies, its own `python_testcases` the tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("HARNESS_PARITY_CACHE") or REPO / ".parity-cache")
# Each checkout's own, even when checkouts share the download cache.
REPORTS = REPO / ".parity-cache" / "reports"


class Unavailable(Exception):
    """A library's source could not be had (no index, no snapshot): the test skips, saying so."""


@dataclass(frozen=True)
class Library:
    """One pinned sdist laid out as a task list.

    `files`: layout path → path in the unpacked sdist (a folder maps a folder). `tasks`: task
    id → (the module under test, its test files), layout paths. `support`: the suite's own
    helpers; every other module of `modules` is support too. `modules`: the folders or files
    whose .py files are the library's code (support for every task but the module's own).
    """

    name: str
    version: str
    files: Mapping[str, str]
    modules: tuple[str, ...]
    tasks: Mapping[str, tuple[str, tuple[str, ...]]]
    support: tuple[str, ...] = ()
    shapes: str = ""  # what the suite exercises, for the docs and the report

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


LIBRARIES: tuple[Library, ...] = (
    Library(
        "inflection",
        "0.5.1",
        {
            "inflection/__init__.py": "inflection/__init__.py",
            "test_inflection.py": "test_inflection.py",
        },
        ("inflection",),
        {"inflection": ("inflection/__init__.py", ("test_inflection.py",))},
        shapes="module-level mutable containers (UNCOUNTABLES, PLURALS), parametrized tables",
    ),
    Library(
        "parse",
        "1.20.2",
        {"parse.py": "parse.py", "tests": "tests"},
        ("parse.py",),
        {
            "parse": (
                "parse.py",
                tuple(
                    f"tests/test_{n}.py"
                    for n in (
                        "bugs",
                        "findall",
                        "parse",
                        "parsetype",
                        "pattern",
                        "result",
                        "search",
                    )
                ),
            )
        },
        shapes="custom tzinfo (FixedTzOffset), result objects, slices, own exceptions",
    ),
    Library(
        "semver",
        "2.13.0",
        {
            "semver.py": "semver.py",
            "test_semver.py": "test_semver.py",
            "test_typeerror-274.py": "test_typeerror-274.py",
            "conftest.py": "conftest.py",
            "docs/coerce.py": "docs/coerce.py",
            "docs/semverwithvprefix.py": "docs/semverwithvprefix.py",
        },
        ("semver.py",),
        {"semver": ("semver.py", ("test_semver.py", "test_typeerror-274.py"))},
        support=("conftest.py", "docs/coerce.py", "docs/semverwithvprefix.py"),
        shapes="a value class with __eq__ and ordering (VersionInfo), subclassing, deprecations",
    ),
    Library(
        "six",
        "1.16.0",
        {"six.py": "six.py", "test_six.py": "test_six.py"},
        ("six.py",),
        {"six": ("six.py", ("test_six.py",))},
        shapes="module attributes and lazy moves, metaclasses, decorators, exception re-raising",
    ),
    Library(
        "more-itertools",
        "10.5.0",
        {
            "more_itertools/__init__.py": "more_itertools/__init__.py",
            "more_itertools/more.py": "more_itertools/more.py",
            "more_itertools/recipes.py": "more_itertools/recipes.py",
            "tests/__init__.py": "tests/__init__.py",
            "tests/test_more.py": "tests/test_more.py",
            "tests/test_recipes.py": "tests/test_recipes.py",
        },
        ("more_itertools",),
        {
            "more": ("more_itertools/more.py", ("tests/test_more.py",)),
            "recipes": ("more_itertools/recipes.py", ("tests/test_recipes.py",)),
        },
        support=("tests/__init__.py",),
        shapes="iterators and generators crossing, classes with slices (islice_extended, "
        "seekable), callbacks, own exceptions, subtests",
    ),
    Library(
        "isodate",
        "0.7.2",
        {"isodate": "src/isodate", "tests": "tests"},
        ("isodate",),
        {
            "isodates": ("isodate/isodates.py", ("tests/test_date.py",)),
            "isotime": ("isodate/isotime.py", ("tests/test_time.py",)),
            "isodatetime": ("isodate/isodatetime.py", ("tests/test_datetime.py",)),
            "duration": ("isodate/duration.py", ("tests/test_duration.py",)),
            "isostrf": ("isodate/isostrf.py", ("tests/test_strf.py",)),
            "tzinfo": ("isodate/tzinfo.py", ("tests/test_pickle.py",)),
        },
        shapes="custom tzinfo (Utc, FixedOffset, LocalTimezone), a value class with __eq__ "
        "(Duration), pickling, own exceptions (ISO8601Error)",
    ),
    Library(
        "toolz",
        "0.12.1",
        {"toolz": "toolz", "tlz": "tlz"},
        ("toolz", "tlz"),
        {
            "itertoolz": ("toolz/itertoolz.py", ("toolz/tests/test_itertoolz.py",)),
            "functoolz": (
                "toolz/functoolz.py",
                (
                    "toolz/tests/test_functoolz.py",
                    "toolz/tests/test_inspect_args.py",
                    "toolz/tests/test_signatures.py",
                    "toolz/tests/test_serialization.py",
                ),
            ),
            "dicttoolz": ("toolz/dicttoolz.py", ("toolz/tests/test_dicttoolz.py",)),
            "recipes": ("toolz/recipes.py", ("toolz/tests/test_recipes.py",)),
            "utils": ("toolz/utils.py", ("toolz/tests/test_utils.py",)),
        },
        shapes="inspect.signature, pickling of curried functions, classes with __eq__ "
        "(curry), callables passed in, module-level registries",
    ),
    Library(
        "tabulate",
        "0.9.0",
        {"tabulate": "tabulate", "test": "test"},
        ("tabulate",),
        {
            "tabulate": (
                "tabulate/__init__.py",
                tuple(
                    f"test/test_{n}.py"
                    for n in (
                        "api",
                        "cli",
                        "input",
                        "internal",
                        "output",
                        "regression",
                        "textwrapper",
                    )
                ),
            )
        },
        support=("test/common.py",),
        shapes="namedtuples (TableFormat, Line), module-level mutable registries "
        "(tabulate_formats, MIN_PADDING), dataclasses passed in, a script run as a subprocess",
    ),
    Library(
        "schema",
        "0.7.7",
        {"schema.py": "schema.py", "test_schema.py": "test_schema.py"},
        ("schema.py",),
        {"schema": ("schema.py", ("test_schema.py",))},
        shapes="own exception classes with attributes (SchemaError.autos), classes with "
        "methods (Schema, And, Or, Use, Optional), the tests' callables validated against",
    ),
    Library(
        "cachetools",
        "5.5.0",
        {"cachetools": "src/cachetools", "tests": "tests"},
        ("cachetools",),
        {
            "cachetools": (
                "cachetools/__init__.py",
                tuple(
                    f"tests/test_{n}.py"
                    for n in (
                        "cache",
                        "fifo",
                        "lfu",
                        "lru",
                        "mru",
                        "rr",
                        "tlru",
                        "ttl",
                        "cached",
                        "cachedmethod",
                    )
                ),
            ),
            "func": ("cachetools/func.py", ("tests/test_func.py",)),
            "keys": ("cachetools/keys.py", ("tests/test_keys.py",)),
        },
        support=("tests/__init__.py",),
        shapes="mutable mapping classes the tests subclass and fill, decorators over the "
        "tests' functions, callbacks (key, getsizeof, timer), locks passed in",
    ),
    Library(
        "text-unidecode",
        "1.3",
        {"text_unidecode": "src/text_unidecode", "test_unidecode.py": "test_unidecode.py"},
        ("text_unidecode",),
        {"text_unidecode": ("text_unidecode/__init__.py", ("test_unidecode.py",))},
        support=("text_unidecode/data.bin",),
        shapes="module state loaded from a package data file at import, parametrized tables",
    ),
    Library(
        "wcwidth",
        "0.2.13",
        {"wcwidth": "wcwidth", "tests": "tests"},
        ("wcwidth",),
        {
            "wcwidth": (
                "wcwidth/wcwidth.py",
                ("tests/test_core.py", "tests/test_emojis.py", "tests/test_ucslevel.py"),
            )
        },
        support=(
            "tests/__init__.py",
            "tests/emoji-variation-sequences.txt",
            "tests/emoji-zwj-sequences.txt",
        ),
        shapes="lru-cached functions over module-level tables, the tests' own data files",
    ),
    Library(
        "ordered-set",
        "4.1.0",
        {"ordered_set": "ordered_set", "test": "test"},
        ("ordered_set",),
        {"ordered_set": ("ordered_set/__init__.py", ("test/test_ordered_set.py",))},
        shapes="a MutableSet class with indexing, slicing, set operators, __eq__ and pickling",
    ),
    Library(
        "voluptuous",
        "0.15.2",
        {"voluptuous": "voluptuous"},
        ("voluptuous",),
        {"schema_builder": ("voluptuous/schema_builder.py", ("voluptuous/tests/tests.py",))},
        support=("voluptuous/tests/__init__.py",),
        shapes="own exception hierarchy (Invalid, MultipleInvalid), marker classes, the "
        "tests' validators called back, enums",
    ),
    Library(
        "idna",
        "3.10",
        {"idna": "idna", "tests": "tests"},
        ("idna",),
        {
            # The codec's tests import the core's (`from tests.test_idna import ...`): both
            # files are the codec task's (where the core module is support).
            "core": ("idna/core.py", ("tests/test_idna_other.py", "tests/test_idna_uts46.py")),
            "codec": ("idna/codec.py", ("tests/test_idna_codec.py", "tests/test_idna.py")),
            "intranges": ("idna/intranges.py", ("tests/test_intranges.py",)),
        },
        support=("tests/__init__.py", "tests/IdnaTestV2.txt"),
        shapes="own exception hierarchy (IDNAError, InvalidCodepoint), a codecs registration "
        "(codec classes the stdlib calls back), module-level data tables",
    ),
    Library(
        "webcolors",
        "24.11.1",
        {"webcolors": "src/webcolors", "tests": "tests"},
        ("webcolors",),
        {
            "conversion": (
                "webcolors/_conversion.py",
                ("tests/test_conversion.py", "tests/test_conformance.py"),
            ),
            "html5": ("webcolors/_html5.py", ("tests/test_html5.py",)),
            "normalization": ("webcolors/_normalization.py", ("tests/test_normalization.py",)),
        },
        shapes="named tuples returned (IntegerRGB, HTML5SimpleColor), module-level mappings, "
        "own ValueError messages, unittest subTest",
    ),
    Library(
        "jsonpointer",
        "3.0.0",
        {"jsonpointer.py": "jsonpointer.py", "tests.py": "tests.py"},
        ("jsonpointer.py",),
        {"jsonpointer": ("jsonpointer.py", ("tests.py",))},
        shapes="a value class with __eq__ and __hash__ (JsonPointer), own exceptions, a "
        "sentinel class (EndOfList), the tests' documents changed in place",
    ),
    Library(
        "titlecase",
        "2.4.1",
        # The suite's file sits inside the package it tests (titlecase/tests.py); served
        # beside it, as a port's tests are (docs/parity.md).
        {
            "titlecase/__init__.py": "titlecase/__init__.py",
            "test_titlecase.py": "titlecase/tests.py",
        },
        ("titlecase",),
        {"titlecase": ("titlecase/__init__.py", ("test_titlecase.py",))},
        shapes="the tests' callbacks called per word, module state the tests change "
        "(set_small_word_list), a word list read from a file the tests write",
    ),
    Library(
        "xmltodict",
        "0.13.0",
        {"xmltodict.py": "xmltodict.py", "tests": "tests"},
        ("xmltodict.py",),
        {"xmltodict": ("xmltodict.py", ("tests/test_xmltodict.py", "tests/test_dicttoxml.py"))},
        shapes="the tests' callbacks (item_callback, postprocessor, preprocessor), an own "
        "exception raised through them, the tests' streams and generators read",
    ),
    Library(
        "termcolor",
        "2.5.0",
        {"termcolor": "src/termcolor", "tests": "tests"},
        ("termcolor",),
        {"termcolor": ("termcolor/termcolor.py", ("tests/test_termcolor.py",))},
        shapes="module-level dicts, environment variables set by the tests (monkeypatch), "
        "output to the tests' streams",
    ),
)


# --- sources ---------------------------------------------------------------------------


def sdist(lib: Library, cache: Path = CACHE) -> Path:
    """The unpacked sdist of `lib` in the cache, downloaded with pip on first use."""
    unpacked = cache / "src" / lib.key
    if (unpacked / ".complete").is_file():
        return unpacked
    archives = cache / "sdists"
    archives.mkdir(parents=True, exist_ok=True)
    found = _archive(archives, lib)
    if found is None:
        if os.environ.get("HARNESS_PARITY_OFFLINE"):
            raise Unavailable(f"{lib.key}: not in {archives} and HARNESS_PARITY_OFFLINE is set")
        argv = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
        argv += [
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(archives),
            f"{lib.name}=={lib.version}",
        ]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired as exc:
            raise Unavailable(
                f"{lib.key}: pip download took over 300 s (index unreachable?)"
            ) from exc
        found = _archive(archives, lib)
        if done.returncode != 0 or found is None:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"{lib.key}: pip download failed (index unreachable?): {last}")
    shutil.rmtree(unpacked, ignore_errors=True)
    staging = cache / "src" / f".{lib.key}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(found) as tar:
        tar.extractall(staging, filter="data")
    [top] = [p for p in staging.iterdir() if p.is_dir()]
    top.rename(unpacked)
    shutil.rmtree(staging)
    (unpacked / ".complete").write_text(found.name + "\n")
    return unpacked


def _archive(folder: Path, lib: Library) -> Path | None:
    stems = {f"{lib.name}-{lib.version}", f"{lib.name.replace('-', '_')}-{lib.version}"}
    for path in sorted(folder.glob("*.tar.gz")):
        if path.name.removesuffix(".tar.gz") in stems:
            return path
    return None


# --- layout ----------------------------------------------------------------------------


@dataclass
class Corpus:
    """A laid-out library: `plain` holds the original files; each task list in `lists` is a
    night (one per module of a package: a module is another task's support, so it cannot be
    a task's output in the same list). `replies`: task id → the module's text;
    `outputs`/`tests`: per task, paths from the tree's root (as pytest names them)."""

    name: str
    plain: Path
    lists: list[Path] = field(default_factory=list)
    replies: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    tests: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _py_files(root: Path, rels: Iterable[str]) -> list[str]:
    found: list[str] = []
    for rel in rels:
        path = root / rel
        if path.is_file():
            found.append(rel)
        else:
            found += sorted(str(p.relative_to(root)) for p in path.rglob("*.py"))
    return found


def build(
    lib: Library,
    where: Path,
    cache: Path = CACHE,
    isolation: str | None = None,
    source: Path | None = None,
) -> Corpus:
    """Lay `lib` out under `where`: the plain tree, and per task a folder with the library's
    files (its module absent, the original as the reference) and a one-task list. `source`:
    an unpacked tree to use instead of the library's sdist."""
    source = source or sdist(lib, cache)
    corpus = Corpus(lib.key, where / "plain")
    shutil.rmtree(where, ignore_errors=True)
    for dst, src in lib.files.items():
        _copy(source / src, corpus.plain / dst)
    tests = {t for _, ts in lib.tasks.values() for t in ts}
    code = _py_files(corpus.plain, lib.modules)
    code = [p for p in code if p not in tests and "/tests/" not in p]
    for task_id, (output, task_tests) in lib.tasks.items():
        night = where / "night" / task_id
        shutil.copytree(corpus.plain, night)
        text = (night / output).read_text(encoding="utf-8")
        ref = f"reference/{output}"
        (night / ref).parent.mkdir(parents=True, exist_ok=True)
        (night / output).rename(night / ref)
        corpus.replies[task_id] = text
        corpus.outputs[task_id] = output
        corpus.tests[task_id] = task_tests
        support = [p for p in code if p != output] + list(lib.support)
        entry = _task(task_id, ref, task_tests, output, support)
        corpus.lists.append(_write_list(night, [entry], isolation))
    return corpus


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copyfile(src, dst)


def _task(task_id: str, ref: str, tests: Iterable[str], output: str, support: list[str]) -> dict:
    entry = {"id": task_id, "reference": ref, "tests": list(tests), "output": output}
    if support:
        entry["support"] = support
    return entry


def _write_list(folder: Path, entries: list[dict], isolation: str | None = None) -> Path:
    defaults = {"max_attempts": 1, "type": "module_port"}
    if isolation:  # the default (boundary) is what the corpus holds to plain pytest
        defaults["isolation"] = isolation
    body = {"defaults": defaults, "tasks": entries}
    path = folder / "tasks.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


QUIXBUGS_ENV = "HARNESS_QUIXBUGS"


def quixbugs_source(cache: Path = CACHE) -> Path:
    """A work tree of the QuixBugs checkout or git directory named by HARNESS_QUIXBUGS."""
    named = os.environ.get(QUIXBUGS_ENV)
    if not named:
        raise Unavailable(
            f"{QUIXBUGS_ENV} is not set: name a QuixBugs checkout or git directory "
            "(github.com/jkoppel/QuixBugs) to run its 40 correct programs"
        )
    path = Path(named)
    if (path / "python_testcases").is_dir():
        return path
    if not (path / "HEAD").is_file():
        raise Unavailable(f"{QUIXBUGS_ENV}={named}: neither a QuixBugs checkout nor a git dir")
    head = subprocess.run(
        ["git", "--git-dir", str(path), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    tree = cache / "src" / f"QuixBugs-{head[:12]}"
    if not (tree / ".complete").is_file():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "--git-dir", str(path), "archive", "--format=tar", head],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        (tree / ".complete").write_text(head + "\n")
    return tree


def quixbugs(where: Path, cache: Path = CACHE, isolation: str | None = None) -> Corpus:
    """QuixBugs as a task list: each correct program served at `python_programs/NAME.py`,
    where the suite's own tests import it (without `--correct`); the buggy program is the
    reference."""
    source = quixbugs_source(cache)
    corpus = Corpus("QuixBugs", where / "plain")
    night = where / "night"
    names = sorted(
        p.stem.removeprefix("test_")
        for p in (source / "python_testcases").glob("test_*.py")
        if (source / "correct_python_programs" / f"{p.stem.removeprefix('test_')}.py").is_file()
    )
    shared = ["conftest.py", "python_testcases/load_testdata.py", "python_testcases/node.py"]
    entries = []
    for tree in (night, corpus.plain):
        shutil.rmtree(tree, ignore_errors=True)
        for rel in [*shared, "correct_python_programs/node.py"]:
            _copy(source / rel, tree / rel.replace("correct_python_programs", "python_programs"))
    for name in names:
        test = f"python_testcases/test_{name}.py"
        output = f"python_programs/{name}.py"
        ref = f"buggy/{name}.py"
        data = f"json_testcases/{name}.json"
        correct = (source / "correct_python_programs" / f"{name}.py").read_text(encoding="utf-8")
        for tree in (night, corpus.plain):
            _copy(source / test, tree / test)
            if (source / data).is_file():
                _copy(source / data, tree / data)
        _copy(source / "python_programs" / f"{name}.py", night / ref)
        (corpus.plain / output).write_text(correct, encoding="utf-8")
        support = [*shared, "python_programs/node.py"]
        if (source / data).is_file():
            support.append(data)
        corpus.replies[name] = correct
        corpus.outputs[name] = output
        corpus.tests[name] = (test,)
        entries.append(_task(name, ref, [test], output, support))
    corpus.lists.append(_write_list(night, entries, isolation))
    return corpus


# --- plain pytest ----------------------------------------------------------------------

# Loaded into the plain run with -p: each test's phases, judged as the harness's scorer judges
# them (setup failed: error; setup skipped: skipped; call failed: failed; call skipped:
# skipped; teardown failed: error). A failed subtest fails its test.
PLUGIN = """\
import json
import os

_phases = {}
_broken = []


def pytest_collectreport(report):
    if report.failed:
        _broken.append(report.nodeid)


def pytest_runtest_logreport(report):
    phases = _phases.setdefault(report.nodeid, {})
    if type(report).__name__ != "TestReport":  # a subtest: only its failure counts
        if report.failed:
            phases["subtest"] = "failed"
        return
    phases.setdefault(report.when, report.outcome)


def _outcome(p):
    if p.get("setup") == "failed":
        return "error"
    if p.get("setup") == "skipped":
        return "skipped"
    if p.get("call") == "failed" or p.get("subtest") == "failed":
        return "failed"
    if p.get("call") == "skipped":
        return "skipped"
    if p.get("teardown") == "failed":
        return "error"
    return "passed"


def pytest_sessionfinish(session):
    out = {"outcomes": {k: _outcome(p) for k, p in _phases.items()}, "broken": _broken}
    with open(os.environ["PARITY_OUTCOMES"], "w") as f:
        json.dump(out, f)
"""


@dataclass(frozen=True)
class Outcomes:
    """Per test id (pytest's node id from the tree's root): passed|failed|error|skipped.
    `broken`: test files whose collection failed (they have no test ids at all)."""

    by_test: dict[str, str]
    broken: tuple[str, ...] = ()
    note: str = ""  # why the night gave no per-test answer (extraction, a halt, ...)
    messages: dict[str, str] = field(default_factory=dict)  # the night's, per failing test


def plain_pytest(corpus: Corpus, scratch: Path) -> dict[str, Outcomes]:
    """Per task, plain `python -m pytest` outcomes of its tests in the plain tree: the module's
    folder and the tree's root on the path (as the harness's launch puts them), no ini file
    of the library's. Tasks whose modules share a folder share one pytest process."""
    groups: dict[Path, list[str]] = {}
    for task_id, output in corpus.outputs.items():
        groups.setdefault((corpus.plain / output).parent, []).append(task_id)
    found: dict[str, Outcomes] = {}
    for n, (folder, task_ids) in enumerate(groups.items()):
        tests = [t for task_id in task_ids for t in corpus.tests[task_id]]
        ran = _plain_run(corpus.plain, folder, tests, scratch / str(n))
        for task_id in task_ids:
            mine = corpus.tests[task_id]
            by_test = {k: v for k, v in ran.by_test.items() if k.split("::")[0] in mine}
            broken = tuple(b for b in ran.broken if b in mine)
            found[task_id] = Outcomes(by_test, broken)
    return found


def _plain_run(root: Path, folder: Path, tests: list[str], scratch: Path) -> Outcomes:
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "_parity_outcomes.py").write_text(PLUGIN)
    (scratch / "pytest.ini").write_text("[pytest]\n")
    report = scratch / "outcomes.json"
    paths = dict.fromkeys([str(root), str(folder), str(scratch)])  # as the launch orders them
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PARITY_OUTCOMES": str(report)}
    env.pop("PYTEST_ADDOPTS", None)
    # As the sandbox pins them (launch.base_env): a set's order, local time, the text encoding.
    env.update(PYTHONHASHSEED="0", TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    argv = [sys.executable, "-m", "pytest", *tests, "-c", str(scratch / "pytest.ini")]
    argv += ["--rootdir", str(root), "--confcutdir", str(root), "-p", "no:cacheprovider"]
    argv += ["-p", "_parity_outcomes", "--continue-on-collection-errors", "-q", "--color=no"]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    if not report.is_file():
        raise AssertionError(f"plain pytest wrote no outcomes in {root}:\n{done.stdout[-3000:]}")
    data = json.loads(report.read_text())
    return Outcomes(data["outcomes"], tuple(data["broken"]))


# --- the night -------------------------------------------------------------------------

CONFIG = """\
loop: {review: false}
batch: {enabled: false}
concurrency: {tasks: 2}
tests: {timeout_s: 600, per_test_timeout_s: 60}
"""


def fence(text: str) -> str:
    """The module as a model's reply: one python block, fenced longer than any backtick run."""
    ticks = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
    body = text if text.endswith("\n") else text + "\n"
    return f"Here is the port.\n\n{ticks}python\n{body}{ticks}\n"


def night_outcomes(run_root: Path) -> tuple[dict[str, Outcomes], dict]:
    """Per task, each test's outcome in the night's first attempt (read from the run store),
    and summary.json."""
    from harness.store.runs import RunFolder

    run = RunFolder(run_root)
    summary = run.require_summary()
    found: dict[str, Outcomes] = {}
    for task in summary["tasks"]:
        attempts = run.attempts(task["id"])
        if not attempts or attempts[0].result is None:
            first = attempts[0].record if attempts else None
            why = (
                ((first.extraction_error or first.test_error) if first else None)
                or task.get("reason")
                or "no attempt recorded"
            )
            found[task["id"]] = Outcomes({}, note=f"no test result: {why}")
            continue
        result = attempts[0].result
        note = f"run error: {result.error}" if result.error else ""
        if not result.cases:
            note += f" no test cases recorded ({result.passed}/{result.total} passed)"
        outcomes = {c.nodeid: c.outcome.value for c in result.cases}
        messages = {c.nodeid: c.message for c in result.cases if c.message}
        found[task["id"]] = Outcomes(outcomes, note=note, messages=messages)
    return found, summary


@dataclass(frozen=True)
class Difference:
    task: str
    test: str
    plain: str
    night: str
    message: str = ""  # what the night said about the test


# pytest's generated id part for a value it cannot print (`expected12`, `dt0`): its number is
# the value's position in the parameter list, and a list drawn from a set of tuples holding
# None is ordered by address on Python 3.11 (hash(None) is id-based before 3.12), so the
# number differs between processes. Tests are matched on ids with that number masked, and
# compared as the multiset of outcomes under each masked id.
_GENERATED = re.compile(r"(?<=[\[-])([A-Za-z_]+)\d+(?=[-\]])")


def _masked(test_id: str) -> str:
    return _GENERATED.sub(r"\1#", test_id)


def compare(plain: Outcomes, night: Outcomes, task: str) -> list[Difference]:
    """Every test whose outcome differs; a test one side never ran reads `absent`. Ids are
    matched with pytest's generated parameter numbers masked (see `_GENERATED`)."""
    from harness.results import safe_id

    expected = {safe_id(k): v for k, v in plain.by_test.items()}
    sides: dict[str, tuple[list[str], list[str]]] = {}
    for side, tests in enumerate((expected, night.by_test)):
        for test_id in tests:
            sides.setdefault(_masked(test_id), ([], []))[side].append(test_id)
    diffs: list[Difference] = []
    for _, (mine, theirs) in sorted(sides.items()):
        if sorted(expected[t] for t in mine) == sorted(night.by_test[t] for t in theirs):
            continue
        for t in sorted(set(mine) | set(theirs)):
            was, now = expected.get(t, "absent"), night.by_test.get(t, "absent")
            if was != now:
                diffs.append(Difference(task, t, was, now, night.messages.get(t, "")))
    return diffs


def report(
    name: str,
    diffs: list[Difference],
    notes: Mapping[str, str],
    total: int,
    shown: int | None = 40,
) -> str:
    """A readable account of a library's differences: per task, plain → night per test
    (the first `shown` of each task's; None: every one)."""
    lines = [f"{name}: {len(diffs)} of {total} tests differ from plain pytest"]
    for task, note in notes.items():
        if note:
            lines.append(f"  [{task}] {note}")
    by_task: dict[str, list[Difference]] = {}
    for d in diffs:
        by_task.setdefault(d.task, []).append(d)
    for task, items in by_task.items():
        lines.append(f"  task {task}: {len(items)} differ")
        if all(d.night == "absent" for d in items) and notes.get(task):
            continue  # the task's note says why the night has no test of it
        for d in items[:shown]:
            lines.append(f"    {d.plain:>7} -> {d.night:<7} {d.test}")
            if d.message:
                lines.append(f"{'':22}{d.message[:300]}")
        if shown is not None and len(items) > shown:
            lines.append(f"    ... and {len(items) - shown} more")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.parity.corpus OUT [--only NAME ...] [--plain] [--isolation I]`: lay
    the corpus out under OUT (QuixBugs too when HARNESS_QUIXBUGS is set) and print each task
    list; --plain also prints plain pytest's outcome counts; --isolation writes that isolation
    into the lists (the test holds the default, boundary, to plain pytest). On the simulator
    (`harness run LIST --provider sim`) a task with no solution is answered with its
    reference, the module itself: the same night without a fake vendor."""
    import argparse
    from collections import Counter

    parser = argparse.ArgumentParser(prog="python -m tests.parity.corpus")
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", default=None, help="library names (or QuixBugs)")
    parser.add_argument("--plain", action="store_true", help="run plain pytest and count")
    parser.add_argument("--isolation", choices=["boundary", "in_process"], default=None)
    ns = parser.parse_args(argv)
    wanted = [lib for lib in LIBRARIES if ns.only is None or lib.name in ns.only]
    jobs: list[tuple[str, Library | None]] = [(lib.key, lib) for lib in wanted]
    if ns.only is None or "QuixBugs" in ns.only:
        jobs.append(("QuixBugs", None))
    for key, lib in jobs:
        try:
            where = ns.out / key
            built = (
                build(lib, where, isolation=ns.isolation)
                if lib
                else quixbugs(where, isolation=ns.isolation)
            )
        except Unavailable as exc:
            print(f"{key}: skipped: {exc}")
            continue
        print(f"{key}: {len(built.outputs)} task(s)")
        for task_list in built.lists:
            print(f"  {task_list}")
        if ns.plain:
            plain = plain_pytest(built, ns.out / key / "plain-run")
            counts = Counter(v for o in plain.values() for v in o.by_test.values())
            print(f"  plain pytest: {sum(counts.values())} tests {dict(counts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
