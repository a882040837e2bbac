"""Atomic writes."""

from __future__ import annotations

import contextlib
import os
from decimal import Decimal
from pathlib import Path

import pytest

from harness.fsio import check_target, remove_stale_temps, write_atomic, write_log
from harness.llm import CallRequest, Completion, Prompt, Route, StopReason, Usage
from harness.store import RunDir


@pytest.fixture
def fsyncs(monkeypatch) -> list[int]:
    """Every os.fsync the code under test makes (then made for real)."""
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def test_replaces_content_and_leaves_no_temp_file(tmp_path) -> None:
    """The new text replaces the old one and no temp file stays behind."""
    target = tmp_path / "deep" / "out.py"
    write_atomic(target, "old\n")

    write_atomic(target, "new\n")

    assert target.read_text() == "new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.py"]


def test_keeps_an_existing_files_mode(tmp_path) -> None:
    """Replacing a 0640 file keeps it 0640; a new file gets the umask's default, not 0600."""
    target = tmp_path / "out.py"
    target.write_text("x")
    os.chmod(target, 0o640)

    write_atomic(target, "y")
    write_atomic(tmp_path / "fresh.py", "z")

    assert target.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "fresh.py").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_keeps_the_old_file(tmp_path) -> None:
    """If writing fails midway the old content survives untouched."""
    target = tmp_path / "out.py"
    write_atomic(target, "old")

    with contextlib.suppress(TypeError):
        write_atomic(target, 12345)  # type: ignore[arg-type]

    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.py"]


def test_stale_temps_of_a_killed_write_are_removed(tmp_path) -> None:
    """Only the target's own leftover temp files go; other files stay."""
    target = tmp_path / "out.py"
    target.write_text("shipped")
    leftover = tmp_path / ".out.py.abc123.tmp"
    leftover.write_text("half")
    other = tmp_path / ".other.py.x.tmp"
    other.write_text("x")

    removed = remove_stale_temps(target)

    assert removed == [leftover]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.py.x.tmp", "out.py"]


def test_write_atomic_syncs_the_file_and_its_folder(tmp_path, fsyncs) -> None:
    """What a crash must not lose is synced: the temp file before the rename, the folder after."""
    write_atomic(tmp_path / "summary.json", "{}\n")

    assert len(fsyncs) == 2


def test_write_log_is_atomic_without_a_sync(tmp_path, fsyncs) -> None:
    """A log-like copy replaces the old one whole, leaves no temp file and syncs nothing."""
    target = tmp_path / "calls" / "1-write.reply.md"
    write_log(target, "old")

    write_log(target, "new")

    assert (target.read_text(), fsyncs) == ("new", [])
    assert sorted(p.name for p in target.parent.iterdir()) == ["1-write.reply.md"]


def test_a_calls_prompt_reply_and_record_are_written_without_a_sync(tmp_path, fsyncs) -> None:
    """The run folder's per-call files (the store holds what resume needs) never wait on disk."""
    rundir = RunDir(tmp_path, "r1")
    route = Route("mid", "sim", "sim-mid", 1000)
    request = CallRequest(route, Prompt("s", "st", "v"), "t1", "write", 1)
    completion = Completion("reply", Usage(10, 0, 0, 5), StopReason.END, "sim-mid", "sim")
    fsyncs.clear()  # the run folder's own creation is not a call's

    rundir.record_call(request, completion, Decimal("0.01"))

    names = sorted(p.name for p in (tmp_path / "r1" / "calls" / "t1").iterdir())
    assert (names, fsyncs) == (["1-write.call.json", "1-write.prompt.md", "1-write.reply.md"], [])


def test_check_target_refuses_an_input_even_through_a_symlink(tmp_path: Path) -> None:
    """A write target that resolves to an input names what the input is."""
    (tmp_path / "tasks.yaml").write_text("tasks: []\n")
    (tmp_path / "alias.yaml").symlink_to(tmp_path / "tasks.yaml")

    problem = check_target(tmp_path / "alias.yaml", inputs={tmp_path / "tasks.yaml": "the list"})

    assert "is the list, an input" in (problem or "")


def test_check_target_replaces_only_with_replace_or_its_own_file(tmp_path: Path) -> None:
    """An existing file: refused, unless replace= or ours() says the harness wrote it."""
    path = tmp_path / "x.txt"
    path.write_text("mine")

    found = (
        check_target(path) is not None,
        check_target(path, replace=True),
        check_target(path, ours=lambda p: True),
        check_target(tmp_path / "new.txt"),
    )

    assert found == (True, None, None, None)


def test_check_target_refuses_directories_and_files_as_folders(tmp_path: Path) -> None:
    """A directory where a file goes, or a file where a folder goes, is a problem."""
    (tmp_path / "f").write_text("")

    found = (check_target(tmp_path), check_target(tmp_path / "f" / "x"))

    assert ("is a directory" in found[0], "is a file, not a folder" in found[1]) == (True, True)
