"""Reading model code: thread-safe parsing, import aliases, constant folding."""

from __future__ import annotations

import ast
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.pyast import DYN, Folder, Value, parse_module


def _fold(code: str) -> list[Value]:
    """Every value the last line of `code` (an expression) may have."""
    tree = parse_module(code)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    return Folder(tree).fold(last.value)


def _qualname(code: str) -> str | None:
    tree = parse_module(code)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    return Folder(tree).qualname(last.value)


def test_parses_from_many_threads_at_once() -> None:
    """Deeply nested code parsed on 8 threads parses every time, with no spurious SystemError."""
    code = (
        "x = " + "(" * 60 + "1" + ")" * 60 + "\n" + "def f():\n    return [i for i in range(3)]\n"
    )

    with ThreadPoolExecutor(8) as pool:
        lengths = set(pool.map(lambda _: len(parse_module(code).body), range(400)))

    assert lengths == {2}


def test_the_models_warnings_stay_out_of_the_output() -> None:
    """An invalid escape in candidate code raises no warning in the harness."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = parse_module('path = "C:\\\\dir\\;x"\nother = "\\d"\n')

    assert len(tree.body) == 2


def test_real_syntax_errors_still_raise() -> None:
    """A genuine syntax error is reported, not swallowed by the retry."""
    with pytest.raises(SyntaxError):
        parse_module("def f(:\n")


FOLDED: dict[str, tuple[str, list[Value]]] = {
    "concatenation": ('"_" + "exit"', ["_exit"]),
    "join of a list": ('"".join(["a", "b"])', ["ab"]),
    "f-string with chr": ('f"x{chr(65)}"', ["xA"]),
    "reversal": ('"cba"[::-1]', ["abc"]),
    "slice with bounds": ('"git push"[4:]', ["push"]),
    "a runtime value": ("name", [DYN]),
    "partly known": ('"git " + input()', ["git " + DYN]),
    "bytes": ('b"/proc".decode()', ["/proc"]),
    "a name bound once": ('flag = "-f"\nf"git push {flag}"', ["git push -f"]),
    "every binding is an alternative": ('x = "a"\nx = "b"\nx', ["a", "b"]),
    "a list built by append": ('cmd = ["git"]\ncmd.append("push")\ncmd', [("git", "push")]),
    "starred list": ('base = ["git"]\n[*base, "push"]', [("git", "push")]),
    "conditional": ('"-f" if force else ""', ["-f", ""]),
    ".format and %": ('"{} %s".format("a") % "b"', ["a b"]),
    "split": ('"git push -f".split()', [("git", "push", "-f")]),
    "base64": ('import base64\nbase64.b64decode("Z2l0").decode()', ["git"]),
    "pathlib division": ('from pathlib import Path\nPath("/") / "proc" / "self"', ["/proc/self"]),
    "path with several parts": ('import os\nos.path.join("/proc", "self")', ["/proc/self"]),
    "a long chain of +": (
        " + ".join(f"chr({ord(c)})" for c in "/proc/self/environ"),
        ["/proc/self/environ"],
    ),
}


@pytest.mark.parametrize(("code", "expected"), FOLDED.values(), ids=FOLDED.keys())
def test_folds_what_an_expression_may_evaluate_to(code: str, expected: list[Value]) -> None:
    """Constants, names, joins, formats, decodes, paths and slices fold; the unknown is DYN."""
    assert _fold(code) == expected


QUALNAMES = {
    "import as": ("import subprocess as sp\nsp.run", "subprocess.run"),
    "from import as": ("from os import system as s\ns", "os.system"),
    "dotted import": ("import os.path\nos.path.join", "os.path.join"),
    "assigned alias": ("import subprocess\nrun = subprocess.Popen\nrun", "subprocess.Popen"),
    "getattr": ('import os\ngetattr(os, "sys" + "tem")', "os.system"),
    "__import__": ('__import__("o" + "s").system', "os.system"),
    "relative import stays local": ("from .subprocess import run\nrun", "run"),
    "a call's result": ("make().run", None),
}


@pytest.mark.parametrize(("code", "expected"), QUALNAMES.values(), ids=QUALNAMES.keys())
def test_resolves_what_a_name_refers_to(code: str, expected: str | None) -> None:
    """Import aliases, single assignments, getattr and __import__ resolve to dotted names."""
    assert _qualname(code) == expected


def test_folding_is_bounded() -> None:
    """A name built from itself and alternatives that multiply stay few, and quickly so."""
    code = "x = 'a'\n" + "x = x + x\n" * 200 + "y = 'a' if c else 'b'\n" * 200 + "x + y + x + y"

    values = _fold(code)

    assert 1 <= len(values) <= 16
