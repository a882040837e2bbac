"""Tests of the scratch tree: pristine copies, hash checks, read-only lock, safe placement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec
from harness.testrun.scratch import (
    SandboxError,
    build_tree,
    candidate_place,
    read_pristine,
    remove_tree,
    verify_tree,
)


def make(base: Path, output: str = "out/svc.py") -> TaskSpec:
    (base / "tests").mkdir(parents=True)
    (base / "tests" / "test_svc.py").write_text("import svc\n")
    (base / "data" / "__pycache__").mkdir(parents=True)
    (base / "data" / "rows.csv").write_text("a,b\n")
    (base / "data" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    return TaskSpec(
        id="svc",
        base_dir=base,
        reference=(),
        tests=(base / "tests/test_svc.py",),
        output=base / output,
        support=(base / "data",),
    )


def test_pristine_inputs_mirror_the_task_folder(tmp_path: Path) -> None:
    """Tests and support folders keep their place relative to the task list; caches are left out."""
    pristine = read_pristine(make(tmp_path))

    assert [rel for rel, _ in pristine.files] == ["data/rows.csv", "tests/test_svc.py"]
    assert pristine.tests == ("tests/test_svc.py",)


def test_a_credential_file_in_a_support_folder_never_reaches_the_sandbox(tmp_path: Path) -> None:
    """`.envrc`, `.pgpass`, `.git-credentials` and `.aws/credentials` inside a support folder
    are left out of the scratch tree (the one secret-file rule of harness.keys)."""
    task = make(tmp_path)
    for rel in (".envrc", ".pgpass", ".git-credentials", ".aws/credentials"):
        (tmp_path / "data" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / rel).write_text("export TOKEN=sk-live-123\n")

    assert [rel for rel, _ in read_pristine(task).files] == ["data/rows.csv", "tests/test_svc.py"]


def test_digest_changes_with_content(tmp_path: Path) -> None:
    """The inputs' digest (the expected-ids cache key) follows every byte."""
    task = make(tmp_path)
    before = read_pristine(task).digest
    (tmp_path / "data" / "rows.csv").write_text("a,b,c\n")

    assert read_pristine(task).digest != before


def test_tree_is_locked_and_verified(tmp_path: Path) -> None:
    """The built tree is read-only and any edit, plant or deletion is reported."""
    task = make(tmp_path / "src")
    pristine = read_pristine(task)
    root = tmp_path / "run" / "root"
    build_tree(root, pristine, "out/svc.py", "X = 1\n")
    files = {**dict(pristine.files), "out/svc.py": b"X = 1\n"}
    clean = verify_tree(root, files)
    modes = {oct(os.stat(root / p).st_mode & 0o777) for p in ("out/svc.py", "out", ".")}
    for folder in (root, root / "tests"):
        os.chmod(folder, 0o755)
    (root / "tests" / "test_svc.py").chmod(0o644)
    (root / "tests" / "test_svc.py").write_text("pass\n")
    (root / "conftest.py").write_text("")

    assert (clean, modes) == ([], {"0o444", "0o555"})
    assert verify_tree(root, files) == [
        "unexpected file conftest.py",
        "modified file tests/test_svc.py",
    ]
    remove_tree(tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ("conftest.py", "shadow pytest"),
        ("out/pytest.py", "shadow pytest"),
        ("sitecustomize.py", "shadow pytest"),
        ("json.py", "standard library"),
        ("tests/test_svc.py", "test or support file"),
        ("out/svc.txt", "relative .py"),
    ],
)
def test_candidate_place_refuses_shadowing(tmp_path: Path, output: str, problem: str) -> None:
    """The candidate may not sit where it would shadow pytest, the stdlib or a pristine file."""
    task = make(tmp_path, output)

    with pytest.raises(SandboxError, match=problem):
        candidate_place(task, read_pristine(task))


def test_candidate_outside_the_task_folder_goes_by_basename(tmp_path: Path) -> None:
    """An output outside the task list's folder is placed at the scratch root by basename."""
    task = make(tmp_path / "tasks", output=str(tmp_path / "elsewhere" / "svc.py"))

    assert candidate_place(task, read_pristine(task)) == "svc.py"


def test_stale_run_folders_and_cgroups_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leftovers of a killed harness go; fresh or busy ones stay."""
    from harness.testrun import cgroup, scratch

    monkeypatch.setattr(scratch.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(cgroup, "_ROOTS", (tmp_path / "cg",))
    monkeypatch.setattr(cgroup, "_MEMORY_V1", tmp_path / "memory")  # the machine's own stays out
    for name in ("harness-test-old", "harness-test-new", "cg/harness-old", "cg/harness-busy"):
        (tmp_path / name).mkdir(parents=True)
    for name in ("harness-test-old", "harness-test-new"):
        (tmp_path / name / scratch.RUN_MARKER).touch()
    (tmp_path / "harness-test-old" / "root").mkdir(mode=0o555)
    (tmp_path / "cg" / "harness-busy" / "cgroup.procs").write_text("1")
    for name in ("harness-test-old", "cg/harness-old", "cg/harness-busy"):
        os.utime(tmp_path / name, (1, 1))

    assert (scratch.sweep_stale(), cgroup.sweep_stale()) == (1, 1)
    assert sorted(p.name for p in [*tmp_path.glob("harness-*"), *tmp_path.glob("cg/*")]) == [
        "harness-busy",
        "harness-test-new",
    ]


def test_the_sweep_never_follows_a_link_nor_touches_a_strangers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted harness-test-* link, an unmarked folder and someone else's marked folder
    are all left exactly as they are (issue 11: the sweep chmod-ed a foreign tree)."""
    from harness.testrun import scratch

    temp, foreign = tmp_path / "tmp", tmp_path / "precious"
    temp.mkdir()
    (foreign / "deep").mkdir(parents=True, mode=0o755)
    (foreign / "deep" / "file").write_text("x")
    os.symlink(foreign, temp / "harness-test-link")
    (temp / "harness-test-unmarked").mkdir()
    stranger = temp / "harness-test-stranger"
    stranger.mkdir()
    (stranger / scratch.RUN_MARKER).touch()
    if os.geteuid() == 0:
        os.chown(stranger, 65534, 65534)
    for name in ("harness-test-unmarked", "harness-test-stranger"):
        os.utime(temp / name, (1, 1))
    os.utime(temp / "harness-test-link", (1, 1), follow_symlinks=False)
    os.utime(foreign, (1, 1))  # old enough, were the link followed
    monkeypatch.setattr(scratch.tempfile, "gettempdir", lambda: str(temp))
    modes = {p: p.stat().st_mode for p in (foreign, foreign / "deep", foreign / "deep" / "file")}

    removed = scratch.sweep_stale()

    assert removed == 0
    assert {p: p.stat().st_mode for p in modes} == modes
    assert sorted(p.name for p in temp.iterdir()) == [
        "harness-test-link",
        "harness-test-stranger",
        "harness-test-unmarked",
    ]
