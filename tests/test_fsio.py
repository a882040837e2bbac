"""Atomic writes."""

from __future__ import annotations

import os

from harness.fsio import write_atomic


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


    try:
        write_atomic(target, 12345)  # type: ignore[arg-type]
    except TypeError:
        pass

    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.py"]
