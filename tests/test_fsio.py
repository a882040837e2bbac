"""Atomic writes."""

from __future__ import annotations

import contextlib
import os

from harness.fsio import remove_stale_temps, write_atomic


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
