"""Tests of the static pre-check of candidate code."""

from __future__ import annotations

import pytest

from harness.testrun import precheck as public_precheck
from harness.testrun.precheck import precheck
from tests import _quixbugs as quixbugs

REJECTED = {
    "os._exit": "import os\nos._exit(0)",
    "aliased module": "import os as o\no._exit(0)",
    "from import": "from os import _exit",
    "concatenated name": 'import os\ngetattr(os, "_" + "exit")(0)',
    "reversed name": 'import os\ngetattr(os, "tixe_"[::-1])(0)',
    "computed name": "import os\nname = input()\ngetattr(os, name)",
    "gc": "import gc",
    "dynamic gc": 'x = __import__("g" + "c")',
    "import_module": 'import importlib\nimportlib.import_module("".join(["_py", "test"]))',
    "pytest internals": "from _pytest.reports import TestReport",
    "pytest": "import pytest",
    "sys.modules": "import sys\nsys.modules['calc'] = None",
    "frames": "import sys\nsys._getframe(1).f_back",
    "inspect frames": "import inspect\ninspect.currentframe()",
    "globals of a function": "(lambda: 0).__globals__",
    "subclasses walk": "().__class__.__base__.__subclasses__()",
    "ctypes": "import ctypes",
    "atexit": "import atexit",
    "builtins patch": "import builtins\nbuiltins.open = None",
    "__builtins__": "__builtins__['len'] = None",
    "exec": "exec('print(1)')",
    "sys.exit": "import sys\nsys.exit(0)",
    "raise SystemExit": "def f():\n    raise SystemExit(0)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "proc via f-string": 'open(f"/pr{chr(111)}c/self/environ")',
    "proc via pathlib": 'from pathlib import Path\nPath("/") / "proc" / "self"',
    "conftest plant": 'open("conftest.py", "w")',
    "fork": "import os\nos.fork()",
    "recorder": "import _harness_sandbox_recorder",
    "name folded from a variable": 'import os\nname = "_" + "exit"\ngetattr(os, name)(0)',
    "module under another name": "import sys\nmods = sys\nmods.modules.clear()",
    "exec under another name": 'run = exec\nrun("print(1)")',
    "long chr chain": "p = " + " + ".join(f"chr({ord(c)})" for c in "site-packages"),
    "library class rewired": "import unittest\nunittest.TestCase.assertEqual = print",
    "imported class rewired": "from fractions import Fraction as F\nF.__eq__ = lambda s, o: 1",
    "library attribute deleted": "import unittest.case\ndel unittest.case.TestCase.fail",
    "library attribute added to": "import json\njson.decoder.scanstring += None",
}
ACCEPTED = {
    "plain service": "import json\n\ndef handle(req):\n    return json.dumps(req)\n",
    "url with proc": 'ROUTE = "/processes/list"',
    "re.compile and os.path": 'import os, re\nre.compile("x")\nos.path.join("a", "b")',
    "a method named exit": "class A:\n    def exit(self):\n        pass\n\nA().exit()",
    "dynamic getattr on own object": "def get(obj, name):\n    return getattr(obj, name)",
    "catching KeyboardInterrupt": "try:\n    pass\nexcept KeyboardInterrupt:\n    pass",
    "syntax error": "def f(:\n",
    "own attributes and settings": "import decimal, os\nclass A:\n    def f(self):\n"
    "        self.x = 1\n\ndecimal.getcontext().prec = 9\nos.environ['X'] = '1'\n",
}


@pytest.mark.parametrize("code", REJECTED.values(), ids=REJECTED.keys())
def test_rejects_reaching_into_the_runner_or_process(code: str) -> None:
    """Code reaching pytest, the recorder, frames or the process is rejected with a reason."""
    reason = precheck(code)

    assert reason is not None and reason.startswith("line ")


@pytest.mark.parametrize("code", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepts_ordinary_service_code(code: str) -> None:
    """Ordinary service code (and code that does not parse) passes the pre-check."""
    assert precheck(code) is None


def test_reports_at_most_three_reasons_and_is_public() -> None:
    """The reason names the first few findings; harness.testrun exposes the same function."""
    code = "import gc\nimport ctypes\nimport atexit\nimport signal\n"

    assert public_precheck(code) == precheck(code)
    assert precheck(code).endswith("(and 1 more)")


@pytest.mark.parametrize("name", sorted(quixbugs.PROGRAMS))
def test_no_correct_program_of_a_quixbugs_shaped_suite_is_refused_by_a_static_check(
    name: str, tmp_path
) -> None:
    """Honest code is never refused: neither the pre-check nor the guardrails' code check
    finds anything in a correct program (parameters named like the support module `node`,
    attributes set on the nodes handed in, stdlib imports)."""
    from harness.guardrails import load_policy

    code = quixbugs.PROGRAMS[name]
    compile(code, name, "exec")  # each is a real module
    policy = load_policy(None, task_list_dir=tmp_path)

    assert (precheck(code), policy.check_code(code, "python")) == (None, [])


REWIRES = {
    "module function": "import operator\noperator.eq = None",
    "alias of a class": "import unittest as u\nTC = u.TestCase\nTC.assertEqual = None",
    "from-import": "from fractions import Fraction\nFraction.__eq__ = None",
    "in a function, global": "import json\ndef f():\n    json.loads = None",
    "import_module": 'import importlib\nm = importlib.import_module("unittest")\nm.TestCase.x = 1',
    "declared global": "import json\ndef f():\n    global json\n    json.x = 1",
    "augmented": "import math\nmath.pi += 1",
    "deleted": "import math\ndel math.pi",
}
SHADOWED = {
    "parameter": "import node\ndef f(node):\n    node.successor = None",
    "loop variable": "import node\ndef f(nodes):\n    for node in nodes:\n        node.x = 1",
    "rebound local": "import json\ndef f(x):\n    json = x\n    json.y = 1",
    "comprehension": "import node\ndef f(ns):\n    return [setattr(node, 'x', 1) for node in ns]",
    "no import at all": "def f(node):\n    prev = node\n    node = prev.next\n    node.next = prev",
    "instance": "import logging\nlog = logging.getLogger(__name__)\nlog.disabled = True",
    "self": "import node\nclass A:\n    def f(self):\n        self.node = 1\n        self.x = node",
}


@pytest.mark.parametrize("name", sorted(REWIRES))
def test_rebinding_what_an_import_certainly_names_is_refused(name: str) -> None:
    """A name every binding of which, where it is read, is an import (or an alias of one)."""
    assert "patches a library" in (precheck(REWIRES[name]) or "")


@pytest.mark.parametrize("name", sorted(SHADOWED))
def test_a_name_that_is_not_certainly_an_import_is_left_alone(name: str) -> None:
    """A parameter, loop variable, local or instance named like a module is not that module."""
    assert precheck(SHADOWED[name]) is None
