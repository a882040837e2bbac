"""The fallback's sweep of a run's uid from the host's shared folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.testrun.litter import after_run, sweep_uid

UID = 0x7E123456  # a throwaway uid's range: no account has it

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give files away")


def owned(path: Path, uid: int = UID) -> Path:
    os.lchown(path, uid, uid)
    return path


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A shared folder holding the uid's file, folder and link, another user's file, and a
    folder anyone may write to with the uid's file inside."""
    top = tmp_path / "shared"
    (top / "open").mkdir(parents=True)
    os.chmod(top / "open", 0o1777)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (top / "mine.bin").write_bytes(b"x")
    owned(top / "mine.bin")
    (top / "mine" / "deep").mkdir(parents=True)
    (top / "mine" / "deep" / "blob").write_bytes(b"x")
    owned(top / "mine")
    (top / "link").symlink_to(outside)
    owned(top / "link")
    (top / "theirs.txt").write_text("theirs")
    owned(top / "theirs.txt", UID + 1)
    (top / "open" / "mine.txt").write_text("x")
    owned(top / "open" / "mine.txt")
    return top


def test_every_entry_of_the_uid_goes_and_nothing_else(shared: Path) -> None:
    """Its file, folder (whole) and link go, the link's target and another uid's file stay."""
    removed = sweep_uid(UID, [str(shared)])

    assert removed == 4
    assert sorted(p.name for p in shared.rglob("*")) == ["open", "theirs.txt"]
    assert (shared.parent / "outside" / "keep.txt").read_text() == "keep"


def test_only_a_fallback_run_with_a_uid_is_swept(
    shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under bubblewrap the shared folders are the sandbox's own, and without a uid nothing is
    the run's: both sweep nothing; a fallback run with its uid sweeps."""
    monkeypatch.setattr("harness.testrun.litter.SHARED_FOLDERS", (str(shared),))
    after_run("bwrap", UID)
    after_run("rlimits", None)
    kept = (shared / "mine.bin").exists()
    after_run("rlimits", UID)

    assert (kept, (shared / "mine.bin").exists()) == (True, False)
