"""Checks on a candidate before it runs: commands reaching subprocess & co, calls, patterns."""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from harness.guardrails.values import Violation
from harness.pyast import DYN, Folder, Value, parse_module

__all__ = ["CallRule", "CodeChecker", "CodePattern", "strip_comments"]

CommandCheck = Callable[[str | Sequence[str]], Violation | None]
_SHELL_SINKS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"}
_SHELL_SINKS |= {"asyncio.create_subprocess_shell", "commands.getoutput"}
_RUN_SINKS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "pty.spawn"}
_RUN_SINKS |= {"subprocess.check_output", "subprocess.Popen"}
_ARGV_AT = {"os.execv": 1, "os.execve": 1, "os.execvp": 1, "os.execvpe": 1, "os.posix_spawn": 1}
_ARGV_AT |= {"os.posix_spawnp": 1, "os.spawnv": 2, "os.spawnve": 2, "os.spawnvp": 2}
_ARGV_AT |= {"os.spawnvpe": 2}
_ARGS_FROM = {"os.execl": 1, "os.execle": 1, "os.execlp": 1, "os.execlpe": 1, "os.spawnl": 2}
_ARGS_FROM |= {"os.spawnle": 2, "os.spawnlp": 2, "os.spawnlpe": 2}
_ARGS_FROM |= {"asyncio.create_subprocess_exec": 0}
_CODE_SINKS = {"eval", "exec", "compile", "builtins.eval", "builtins.exec"}
# Methods of third-party runners (fabric, invoke, plumbum, paramiko, asyncio loops).
_RUNNER_METHODS = {"run", "sudo", "local", "system", "popen", "spawn", "exec_command", "execute"}
_RUNNER_METHODS |= {"subprocess_shell", "subprocess_exec", "check_output", "call", "Popen"}


@dataclass(frozen=True)
class CallRule:
    """Calls the policy forbids by dotted name (fnmatch globs: `shutil.rmtree`, `socket.*`)."""

    id: str
    calls: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class CodePattern:
    """A regex the source must not match (with comments removed when `ignore_comments`)."""

    id: str
    pattern: re.Pattern[str]
    reason: str
    ignore_comments: bool = False


def strip_comments(code: str) -> str:
    """The source with every comment blanked out, line numbers kept."""
    lines = code.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    for tok in reversed(tokens):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + " " * (tok.end[1] - col) + line[tok.end[1] :]
    return "".join(lines)


@dataclass(frozen=True)
class CodeChecker:
    calls: tuple[CallRule, ...]
    patterns: tuple[CodePattern, ...]

    def check(self, code: str, check_command: CommandCheck, depth: int = 0) -> list[Violation]:
        """Every violation in `code`: what the AST shows first, then the regex fallback."""
        try:
            tree = parse_module(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = getattr(exc, "lineno", None)
            detail = f"{f'line {line}: ' if line else ''}{getattr(exc, 'msg', exc)}"
            unparseable = Violation(
                "unparseable-code", f"{detail}; code that does not parse is never run"
            )
            return [unparseable, *self._patterns(code)]
        folder = Folder(tree)
        found = [
            v for node in ast.walk(tree) for v in self._node(node, folder, check_command, depth)
        ]
        found.extend(self._patterns(code))
        return list(dict.fromkeys(found))

    def _patterns(self, code: str) -> Iterator[Violation]:
        stripped = strip_comments(code) if any(p.ignore_comments for p in self.patterns) else code
        return self.patterns_in(code, stripped)

    def patterns_in(self, code: str, stripped: str) -> Iterator[Violation]:
        """The policy's regexes over `code`, or over `stripped` (comments blanked) for the
        patterns that ignore comments."""
        for rule in self.patterns:
            text = stripped if rule.ignore_comments else code
            for match in rule.pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                yield Violation(rule.id, f"line {line}: {rule.reason}")  # never the matched text

    def _node(
        self, node: ast.AST, folder: Folder, check: CommandCheck, depth: int
    ) -> Iterator[Violation]:
        line = getattr(node, "lineno", 0)
        for name in _referenced(node, folder):
            for rule in self.calls:
                if any(fnmatch.fnmatchcase(name, pattern) for pattern in rule.calls):
                    yield Violation(rule.id, f"line {line}: uses {name}: {rule.reason}")
        if not isinstance(node, ast.Call):
            return
        callee = folder.qualname(node.func) or getattr(node.func, "attr", "") or "a call"
        if callee in _CODE_SINKS and depth < 3:
            for text in folder.strings(node.args[0], 0) if node.args else []:
                for inner in self.check(text, check, depth + 1) if DYN not in text else []:
                    if inner.rule == "unparseable-code":
                        continue  # a string that does not parse raises before it runs anything
                    yield Violation(
                        inner.rule, f"line {line}: code given to {callee}: {inner.detail}"
                    )
        for value in _commands(node, folder, callee):
            if (violation := check(value)) is not None:
                yield Violation(
                    violation.rule, f"line {line}: {callee} would run {violation.detail}"
                )
                return


def _referenced(node: ast.AST, folder: Folder) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [f"{node.module}.{a.name}" for a in node.names]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.Attribute | ast.Call):
        name = folder.qualname(node if isinstance(node, ast.Attribute) else node.func)
        return [name] if name else []
    if isinstance(node, ast.Name):
        return [folder.names[node.id]] if node.id in folder.names else []
    return []


def _argument(node: ast.Call, index: int, *keywords: str) -> ast.expr | None:
    if len(node.args) > index and not isinstance(node.args[index], ast.Starred):
        return node.args[index]
    return next((k.value for k in node.keywords if k.arg in keywords), None)


def _commands(node: ast.Call, folder: Folder, callee: str) -> list[Value]:
    """What a call may run: shell text (str) or argv (tuple). Unknown callees that look like
    runners contribute each string or list argument, and their positional strings as argv."""
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if callee in ("functools.partial", "partial") and node.args:  # partial(subprocess.run, [...])
        inner = ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords)
        return _commands(inner, folder, folder.qualname(node.args[0]) or "")
    if callee in _SHELL_SINKS or method == "subprocess_shell":
        arg = _argument(node, 1 if method == "subprocess_shell" else 0, "cmd", "command")
        return list(folder.strings(arg, 0)) if arg is not None else []
    if callee in _RUN_SINKS:
        arg = _argument(node, 0, "args", "argv")
        return folder.fold(arg) if arg is not None else []
    if callee in _ARGV_AT:
        arg = _argument(node, _ARGV_AT[callee], "args", "argv")
        return list(folder.sequences(arg, 0)) if arg is not None else []
    if callee in _ARGS_FROM or method == "subprocess_exec":
        start = _ARGS_FROM.get(callee, 1)
        return list(folder.sequences(ast.List(elts=node.args[start:]), 0))
    if callee.startswith("sh.") and callee.count(".") == 1:  # the `sh` package: sh.git("push")
        return [(callee[3:], *s) for s in folder.sequences(ast.List(elts=node.args), 0)]
    if method not in _RUNNER_METHODS:
        return []
    values = [v for a in node.args if not isinstance(a, ast.Starred) for v in folder.fold(a)]
    return values + list(folder.sequences(ast.List(elts=node.args), 0))
