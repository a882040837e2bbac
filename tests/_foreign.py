"""Task builders for the foreign-runner tests: a tiny Go module and a tiny node:test suite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec

FOREIGN = Path(__file__).parent / "foreign"
HOSTILE = Path(__file__).parent / "hostile"
GO_DIR, JS_DIR = FOREIGN / "go", FOREIGN / "js"
GO_TESTS = ("TestAdd", "TestSub", "TestMul")
JS_TESTS = ("adds two numbers", "subtracts", "multiplies")

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="the go toolchain is missing")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")


def go_task(**overrides: object) -> TaskSpec:
    """The Go calculator task: `go test -json ./...` over the module's acceptance package."""
    fields: dict[str, object] = {
        "id": "calc_go",
        "base_dir": GO_DIR,
        "reference": (),
        "tests": (GO_DIR / "acceptance" / "calc_test.go",),
        "output": GO_DIR / "acceptance" / "calc.go",
        "support": (GO_DIR / "go.mod",),
        "language": "go",
        "test_command": ("go", "test", "-json", "./..."),
        "results": "go-json",
    }
    return TaskSpec(**{**fields, **overrides})  # type: ignore[arg-type]


def js_task(**overrides: object) -> TaskSpec:
    """The JavaScript calculator task: node's own test runner writing JUnit to {results}."""
    fields: dict[str, object] = {
        "id": "calc_js",
        "base_dir": JS_DIR,
        "reference": (),
        "tests": (JS_DIR / "acceptance" / "calc.test.js",),
        "output": JS_DIR / "calc.js",
        "language": "javascript",
        "test_command": (
            "node",
            "--test",
            "--test-reporter=junit",
            "--test-reporter-destination={results}",
            "{tests}",
        ),
        "results": "junit",
    }
    return TaskSpec(**{**fields, **overrides})  # type: ignore[arg-type]


def candidate(lang: str, name: str) -> str:
    """A fixture candidate's code: tests/foreign/<lang>/candidates/<name>.<ext>."""
    ext = {"go": "go", "js": "js"}[lang]
    return (FOREIGN / lang / "candidates" / f"{name}.{ext}").read_text()


def hostile(lang: str, name: str) -> str:
    """A hostile candidate's code: tests/hostile/<lang>/<name>.<ext>."""
    return (HOSTILE / lang / f"{name}.{lang}").read_text()
