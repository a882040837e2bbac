"""Reading model code: thread-safe parsing, import aliases, constant folding, literals.

One implementation shared by the guardrails' code check and the sandbox's pre-check, so both
see through the same aliases (`import subprocess as sp`) and the same constant obfuscation
(`"git " + "push"`, `"".join([...])`, f-strings, `chr()`, `[::-1]`).
"""

from __future__ import annotations

from harness.pyast.fold import Folder
from harness.pyast.literals import compared_literals, literals
from harness.pyast.parse import dotted, parse_module
from harness.pyast.values import DYN, Value

__all__ = ["DYN", "Folder", "Value", "compared_literals", "dotted", "literals", "parse_module"]
