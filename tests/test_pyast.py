"""Thread-safe parsing of model code."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.pyast import parse_module


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
