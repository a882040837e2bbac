"""Context tools read only what the confinement admits; every refusal is an error result."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.context import Confinement, Limits, ToolBox
from harness.llm import ToolCall, ToolResult

LIMITS = Limits(
    rounds=3, calls_per_round=5, result_bytes=16384, step_bytes=65536, task_bytes=131072
)


@pytest.fixture
def box(tmp_path: Path) -> ToolBox:
    """A task folder with a helper, hidden tests, a solution and a run dir; a secret outside."""
    base = tmp_path / "tasks"
    (base / "lib").mkdir(parents=True)
    (base / "lib" / "helper.py").write_text("def helper():\n    return 42\n")
    (base / "hidden").mkdir()
    (base / "hidden" / "test_hidden.py").write_text("SECRET_EXPECTATION = 1\n")
    (base / "solutions").mkdir()
    (base / "solutions" / "calc.py").write_text("SOLVED = 1\n")
    (base / "runs").mkdir()
    (base / "runs" / "events.jsonl").write_text("{}\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    (base / "lib" / "link.py").symlink_to(tmp_path / "outside.txt")
    withheld = [base / "hidden", base / "solutions" / "calc.py", base / "runs"]
    return ToolBox(Confinement.of(base, (), withheld), LIMITS)


def ask(box: ToolBox, name: str, **args: object) -> ToolResult:
    return box.run((ToolCall("c1", name, json.dumps(args)),))[0]


@pytest.mark.parametrize(
    "path",
    [
        "../outside.txt",
        "lib/link.py",
        "hidden/test_hidden.py",
        "solutions/calc.py",
        "runs/events.jsonl",
        "lib/missing.py",
    ],
    ids=["dotdot", "symlink-out", "hidden-test", "solution", "run-dir", "missing"],
)
def test_a_refused_path_is_an_error_result_and_nothing_is_read(box, path, monkeypatch):
    """`../`, a symlink out, a hidden test, a solution, the run dir, a missing file: refused."""
    opened: list[str] = []
    real_open = os.open

    def watched(target, *args, **kwargs):
        fd = real_open(target, *args, **kwargs)
        opened.append(str(target))  # only an open that succeeded can be read from
        return fd

    monkeypatch.setattr(os, "open", watched)

    result = ask(box, "read_file", path=path)

    assert (result.is_error, opened) == (True, [])
    assert "42" not in result.content and "SECRET" not in result.content
    assert "SOLVED" not in result.content and result.content != "outside\n"


def test_an_absolute_path_is_refused_even_inside_the_roots(box):
    """An absolute path is an error result naming the rule, even one inside the folder."""
    result = ask(box, "read_file", path=str(box.confinement.base / "lib" / "helper.py"))

    assert (result.is_error, "absolute" in result.content) == (True, True)


def test_read_file_returns_the_file_and_logs_the_contract_event(box):
    """A readable file comes back whole; the event carries tool, path, ok and bytes."""
    with capture_logs() as logs:
        result = ask(box, "read_file", path="lib/helper.py")

    event = next(e for e in logs if e["event"] == "context_request")
    assert (result.is_error, result.content) == (False, "def helper():\n    return 42\n")
    assert {k: event[k] for k in ("tool", "path", "ok", "bytes")} == {
        "tool": "read_file", "path": "lib/helper.py", "ok": True, "bytes": 28
    }  # fmt: skip


def test_a_long_file_is_cut_visibly_with_the_next_offset(box):
    """Past max_bytes the result says where it stopped and which offset reads on."""
    result = ask(box, "read_file", path="lib/helper.py", max_bytes=10)

    assert result.content.startswith("def helper") and "offset=10" in result.content


def test_list_dir_and_grep_skip_what_is_withheld(box):
    """A listing and a search of the task folder never show withheld or escaping entries."""
    listing = ask(box, "list_dir", path=".", depth=2).content
    found = ask(box, "grep", text="=", path=".").content

    assert "lib/helper.py" in listing
    assert not any(w in listing for w in ("hidden", "solutions/calc.py", "runs", "link.py"))
    assert "SECRET" not in found and "SOLVED" not in found


def test_calls_past_the_round_limit_are_refused(box):
    """The sixth call of a round is an error result; the first five are answered."""
    calls = tuple(ToolCall(f"c{i}", "list_dir", '{"path": "lib"}') for i in range(6))

    results = box.run(calls)

    assert [r.is_error for r in results] == [False] * 5 + [True]


@pytest.mark.parametrize(
    "name", [".envrc", ".git-credentials", ".pgpass", ".aws/credentials", ".kube/config"]
)
def test_a_credential_file_inside_the_roots_is_never_read_or_listed(box, name):
    """Files that hold credentials by convention are refused by name and left out of listings
    and greps (the one rule of harness.keys)."""
    path = box.confinement.base / "lib" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("password=hunter2-secret\n")

    read = ask(box, "read_file", path=f"lib/{name}")
    listed = ask(box, "list_dir", path="lib", depth=2)
    found = ask(box, "grep", path="lib", text="hunter2")

    assert (read.is_error, name in listed.content, "hunter2" in found.content) == (
        True,
        False,
        False,
    )


@pytest.fixture
def tangled(box: ToolBox) -> ToolBox:
    """The box's folder plus links that loop (to themselves, to each other) beside a file."""
    lib = box.confinement.base / "lib"
    (lib / "self.py").symlink_to("self.py")
    (lib / "a").symlink_to("b")
    (lib / "b").symlink_to("a")
    return box


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("list_dir", {"path": "lib"}),
        ("list_dir", {"path": ".", "depth": 2}),
        ("grep", {"path": "lib", "text": "return"}),
        ("grep", {"path": ".", "text": "return"}),
        ("read_file", {"path": "lib/a"}),
    ],
)
def test_symlink_loops_in_a_read_root_never_fault_a_round(tangled, tool, args):
    """A link that loops is left out of a listing or a search (or is an error result when
    named), and the rest of the call is answered: never a harness fault."""
    result = ask(tangled, tool, **args)

    if tool == "read_file":
        assert result.is_error
    else:
        assert (result.is_error, "helper" in result.content or "42" in result.content) == (
            False,
            True,
        ), result.content


def test_an_unreadable_folder_is_an_error_for_that_path_and_the_round_goes_on(box, monkeypatch):
    """A folder the harness may not list (EACCES) is an error result when named, a marked line
    in a listing of its parent, skipped by a search; the other calls of the round answer."""
    locked = box.confinement.base / "lib" / "locked"
    locked.mkdir()
    (locked / "inner.py").write_text("return 7\n")
    real_listdir, real_scandir = os.listdir, os.scandir

    def refused(path):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "listdir", lambda p=".": refused(p) or real_listdir(p))
    monkeypatch.setattr(os, "scandir", lambda p=".": refused(p) or real_scandir(p))
    calls = (
        ToolCall("c1", "list_dir", json.dumps({"path": "lib/locked"})),
        ToolCall("c2", "list_dir", json.dumps({"path": "lib", "depth": 2})),
        ToolCall("c3", "grep", json.dumps({"path": "lib", "text": "return"})),
        ToolCall("c4", "read_file", json.dumps({"path": "lib/helper.py"})),
    )

    named, listing, search, read = box.run(calls)

    assert (named.is_error, "cannot be listed" in named.content) == (True, True)
    assert (listing.is_error, "locked/" in listing.content) == (False, True)
    assert (search.is_error, "inner.py" in search.content) == (False, False)
    assert (read.is_error, read.content) == (False, "def helper():\n    return 42\n")
