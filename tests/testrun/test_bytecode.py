"""The compiled bytecode written beside a launch's bootstrap files: the interpreter runs it
instead of compiling the source, and only while the source beside it is the one it was
compiled from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.testrun.bytecode import write_pyc

# Imports `mod` from the current folder with -B, saying whether the source was compiled.
_PROBE = """
import importlib._bootstrap_external as b, sys
compiled = []
original = b.SourceLoader.source_to_code
def source_to_code(self, *args, **kwargs):
    compiled.append(True)
    return original(self, *args, **kwargs)
b.SourceLoader.source_to_code = source_to_code
sys.path.insert(0, ".")
import mod
print(mod.VALUE, bool(compiled))
"""


def _import(folder: Path) -> str:
    argv = [sys.executable, "-B", "-c", _PROBE]
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, check=True).stdout


def test_the_written_bytecode_is_run_without_compiling(tmp_path: Path) -> None:
    """With the `.pyc` written beside it, importing the module compiles nothing."""
    (tmp_path / "mod.py").write_text("VALUE = 1\n")
    write_pyc(tmp_path / "mod.py")

    assert _import(tmp_path).split() == ["1", "False"]


def test_bytecode_of_other_source_is_never_run(tmp_path: Path) -> None:
    """A `.pyc` compiled from other text than the source beside it is ignored: the source is
    compiled and its value is what the import gives."""
    (tmp_path / "mod.py").write_text("VALUE = 1\n")
    write_pyc(tmp_path / "mod.py")
    (tmp_path / "mod.py").write_text("VALUE = 2\n")

    assert _import(tmp_path).split() == ["2", "True"]


def test_a_code_object_names_the_file_it_was_loaded_from(tmp_path: Path) -> None:
    """The bytecode is compiled once per text, wherever the copy is: a function's code names
    the file the interpreter loaded, not the first copy's."""
    for folder in (tmp_path / "a", tmp_path / "b"):
        folder.mkdir()
        (folder / "mod.py").write_text(
            "VALUE = 1\ndef where():\n    return where.__code__.co_filename\n"
        )
        write_pyc(folder / "mod.py")
    probe = "import sys; sys.path.insert(0, '.'); import mod; print(mod.where())"
    argv = [sys.executable, "-B", "-c", probe]
    where = subprocess.run(argv, cwd=tmp_path / "b", capture_output=True, text=True, check=True)

    assert where.stdout.strip() == str(tmp_path / "b" / "mod.py")
