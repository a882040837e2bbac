"""Code checks for candidates not in Python: what fits at text level.

The AST checks (commands folded from constants, forbidden dotted calls) read Python only. For
Go, JavaScript, TypeScript, Java and Rust the policy's regex patterns apply as they are (with
comments removed by the language's grammar where a pattern asks), and the commands a process
API is given as string literals (`exec.Command("git", "push", "-f")`, `execSync("rm -rf /")`,
`new ProcessBuilder("sh", ...)`, `Command::new("git").arg(...)`) pass the command policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

import structlog

from harness.guardrails.values import Violation

__all__ = ["foreign_commands", "note_limited"]

log = structlog.get_logger(__name__)

CommandCheck = Callable[[str | Sequence[str]], Violation | None]
# Process APIs taking shell text, and those taking a program and its arguments.
_SHELL = re.compile(r"\b(?:execSync|exec|Runtime\.getRuntime\(\)\.exec)\s*\(\s*(?P<args>[^;]*?)\)")
_ARGV = re.compile(
    r"\b(?:exec\.Command(?:Context)?|spawnSync|spawn|execFileSync|execFile|ProcessBuilder"
    r"|Command::new)\s*\(\s*(?P<args>[^;{]*?)\)(?P<tail>(?:\s*\.\s*args?\s*\([^;{]*?\))*)"
)
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`$]*)`')
_LIMITS = {  # check -> (event, what is skipped, what still applies) outside Python
    "code": (
        "code_check_limited",
        "forbidden_calls and folded commands (Python ast only)",
        "forbidden_code_patterns and literal commands given to process APIs",
    ),
    "scar": (
        "scar_check_limited",
        "built-in scar checks: hardcoded-key, no-timeout, bare-except (Python ast only)",
        "the policy's scar_checks patterns",
    ),
}


def _literals(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _STRING.finditer(text)]


def foreign_commands(code: str, check: CommandCheck) -> Iterator[Violation]:
    """A violation for each literal command a process API in `code` would run."""
    for pattern, shell in ((_SHELL, True), (_ARGV, False)):
        for match in pattern.finditer(code):
            words = _literals(match.group("args") + (match.groupdict().get("tail") or ""))
            if not words:
                continue
            command: str | list[str] = words[0] if shell else words
            violation = check(command)
            if violation is not None:
                line = code.count("\n", 0, match.start()) + 1
                yield Violation(violation.rule, f"line {line}: would run {violation.detail}")


def note_limited(noted: set[tuple[str, str]], check: str, language: str) -> None:
    """Say once per `noted` (the run's Policy holds it) that `check` ("code" or "scar") is
    limited for `language`: an events-log line, never a warning on every task."""
    if (check, language) in noted:
        return
    noted.add((check, language))
    event, skipped, applied = _LIMITS[check]
    log.info(event, language=language, skipped=skipped, applied=applied)
