"""What context tools read is recorded as fingerprints, and a change to a read file shows."""

from __future__ import annotations

import json
from pathlib import Path

from harness.context import Confinement, Limits, ToolBox, changed
from harness.llm import ToolCall
from harness.store import Store

LIMITS = Limits(
    rounds=3, calls_per_round=5, result_bytes=16384, step_bytes=65536, task_bytes=131072
)


def _call(i: int, name: str, **args: object) -> ToolCall:
    return ToolCall(f"toolu_{i}", name, json.dumps(args))


def test_read_and_searched_files_are_recorded_and_outputs_are_not(tmp_path: Path):
    """read_file and grep record each file they read; a listing records none; a task's
    output is never recorded; editing a recorded file is a change, until it is put back."""
    base = tmp_path / "tasks"
    for name, text in (("lib/a.py", "A = 1\n"), ("lib/b.py", "B = 2\n"), ("out/x.py", "A\n")):
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    store = Store.open(tmp_path / "harness.db")
    box = ToolBox(
        Confinement.of(base, (), ()), LIMITS, "calc", store.tool_log("r1", tmp_path / "r1"),
        frozenset({(base / "out" / "x.py").resolve()}),
    )  # fmt: skip
    box.run((_call(0, "read_file", path="lib/a.py"), _call(1, "list_dir", path=".")), 1, "write")
    box.run((_call(2, "grep", text="A", path="."),), 1, "write+1")
    reads = store.files_read("r1", "calc")
    a = str((base / "lib" / "a.py").resolve())

    (base / "lib" / "a.py").write_text("A = 3\n")
    edited = changed(reads)
    (base / "lib" / "a.py").write_text("A = 1\n")

    assert sorted(Path(p).name for p in reads) == ["a.py", "b.py"]
    assert (edited, changed(reads)) == (a, None)


def test_a_deleted_read_file_is_a_change(tmp_path: Path):
    """A file read one night and gone the next counts as changed."""
    path = tmp_path / "a.py"
    path.write_text("A = 1\n")
    store = Store.open(tmp_path / "harness.db")
    log = store.tool_log("r1", tmp_path / "r1")
    ToolBox(Confinement.of(tmp_path, (), ()), LIMITS, "calc", log).run(
        (_call(0, "read_file", path="a.py"),), 1, "write"
    )
    reads = store.files_read("r1", "calc")
    path.unlink()

    assert changed(reads) == str(path.resolve())
