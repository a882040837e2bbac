"""Guardrails: the operator's policy (guardrails/policy.yaml), enforced, never shown to the model.

- `check_command` sees a command the way a shell runs it: quoting, `;`/`&&`/`|` chains,
  `$(...)`, env prefixes, wrappers (`sudo`, `env`, `timeout`, `xargs`, `ssh`, ...), shells
  (`sh -c`, `bash -lc`, `bash <<< ...`, `echo ... | sh`), `python -c`, git aliases, absolute
  binary paths, global options (`git -C dir`), flag order, combined and abbreviated flags.
- `check_write` resolves the path (symlinks, `..`, `~`, relative to the task list's folder)
  and requires it under an allowed write root (resolved too) and outside protected paths.
- `check_code` finds commands a candidate would run (subprocess, os.system/popen/exec*/spawn*,
  pty.spawn, asyncio, fabric/invoke-style `.run`), folding constants, concatenation,
  f-strings, `" ".join`, `.split()`, list building, `%`/`.format`; plus forbidden calls and the
  policy's regexes. Unparseable code is a violation (it is never run).
- `refused_js_modules` is what a task's JavaScript/TypeScript candidates may not load (the
  sandbox's pre-check reads the specifiers from the parsed tree); `refused_go_packages` what a
  task's Go candidates may not import (a package and its subpackages).
- `scar_tissue` returns warnings only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import functools
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from harness.extract import comment_free, language_named
from harness.guardrails.code import CallRule, CodeChecker, CodePattern
from harness.guardrails.command import CommandMatcher, CommandRule, Syntax, flag_spec
from harness.guardrails.foreign import foreign_commands, note_limited
from harness.guardrails.policy import PolicyFile, read_policy
from harness.guardrails.scar import ScarCheck, scar_warnings
from harness.guardrails.shell import split_script
from harness.guardrails.unwrap import effective, fed
from harness.guardrails.values import Found, GuardrailError, PolicyError, Violation
from harness.pyast import DYN

__all__ = [
    "GuardrailError",
    "Policy",
    "PolicyError",
    "Violation",
    "load_policy",
    "shipped_refused_go_packages",
    "shipped_refused_js_modules",
]

log = structlog.get_logger(__name__)
_MAX_STEPS = 2048  # commands, wrappers and scripts looked at for one command line


def load_policy(
    path: Path | None, *, task_list_dir: Path, extra_write_roots: Iterable[Path] = ()
) -> Policy:
    """The operator's policy at `path` (sections it omits keep the shipped default), or the
    shipped default; relative write roots resolve against `task_list_dir`. Raises PolicyError."""
    model, source, task_lines = read_policy(path)
    policy = _compile(model, source, Path(task_list_dir).resolve())
    policy = dataclasses.replace(policy, js_allowed_at=task_lines)
    policy = policy.with_write_roots(*extra_write_roots)
    log.info(
        "policy_loaded",
        source=source,
        write_roots=[str(r) for r in policy.write_roots],
        forbidden_commands=len(model.forbidden_commands),
    )
    return policy


@dataclass(frozen=True)
class Policy:
    """A loaded, compiled policy. Every check is pure; `enforce_command` raises GuardrailError."""

    source: str
    base_dir: Path
    write_roots: tuple[Path, ...]
    protected: tuple[str, ...]
    commands: CommandMatcher = field(repr=False)
    code: CodeChecker = field(repr=False)
    scar_checks: tuple[ScarCheck, ...] = field(repr=False)
    js_refused: frozenset[str] = field(default=frozenset(), repr=False)
    js_allowed: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    js_allowed_at: Mapping[str, int] = field(default_factory=dict, repr=False)  # task -> line

    go_refused: frozenset[str] = field(default=frozenset(), repr=False)
    go_allowed: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    # (check, language) pairs already noted as limited: one events-log line per run, since a
    # run loads its policy once (with_write_roots copies share the set).
    noted: set[tuple[str, str]] = field(default_factory=set, repr=False, compare=False)

    def with_write_roots(self, *roots: Path) -> Policy:
        """This policy with more allowed write roots (the runner adds the run directory)."""
        extra = tuple(_resolve(Path(r), self.base_dir) for r in roots)
        return dataclasses.replace(self, write_roots=self.write_roots + extra)

    def refused_js_modules(self, task_id: str) -> frozenset[str]:
        """The node built-ins this task's candidates may not load (names without `node:`)."""
        return self.js_refused - self.js_allowed.get(task_id, frozenset())

    def unknown_tasks(self, task_ids: Iterable[str]) -> list[str]:
        """One problem per `allowed_js_modules` task id that is not in `task_ids`, at its line
        (an allowance for no task is a typo that would leave the intended task refused)."""
        known = set(task_ids)
        return [
            f"{self.source} line {self.js_allowed_at.get(task, 0)}: allowed_js_modules.{task}: "
            f"no task with this id in the task list; write one of its ids "
            f"({', '.join(sorted(known))}) or remove the entry"
            for task in sorted(self.js_allowed, key=lambda t: self.js_allowed_at.get(t, 0))
            if task not in known
        ]

    def refused_go_packages(self, task_id: str) -> frozenset[str]:
        """The Go packages (and their subpackages) this task's candidates may not import."""
        return self.go_refused - self.go_allowed.get(task_id, frozenset())

    def check_command(self, cmd: str | Sequence[str]) -> Violation | None:
        """The first forbidden thing `cmd` (shell text, or an argv list) would run, if any."""
        if not isinstance(cmd, str):
            cmd = [str(word) for word in cmd]  # Path objects in argv lists are fine
        shown = cmd if isinstance(cmd, str) else _display(cmd)
        try:
            return self._first_violation(cmd, shown)
        except RecursionError:  # python -c nesting python -c ...: refuse, never crash
            return Violation("command-too-complex", f"`{shown[:200]}` nests too deeply to check")

    def _first_violation(self, cmd: str | Sequence[str], shown: str) -> Violation | None:
        queue = [Found("script", cmd)] if isinstance(cmd, str) else list(effective(list(cmd)))
        for _ in range(_MAX_STEPS):
            if not queue:
                return None
            item = queue.pop(0)
            if item.kind == "run":
                queue.extend(effective(item.value, item.stdin))
            elif item.kind == "script":
                commands, substitutions = split_script(str(item.value))
                queue.extend(Found("script", s) for s in substitutions)
                for simple in commands:
                    queue.extend(effective(simple.argv, fed(simple)))
            elif item.kind == "code":
                if found := self.code.check(str(item.value), self.check_command):
                    return Violation(found[0].rule, f"python code in `{shown}`: {found[0].detail}")
            elif (rule := self.commands.first_match(item.value)) is not None:
                seen = _display(item.value)
                inside = "" if seen == shown else f" (in `{shown}`)"
                return Violation(rule.id, f"`{seen}`{inside}: {rule.reason}")
        return Violation("command-too-complex", f"`{shown[:200]}` nests too deeply to check")

    def check_write(self, path: Path) -> Violation | None:
        """None if `path`, fully resolved, is under a write root and not protected."""
        target = _resolve(Path(path), self.base_dir)
        inside = [root for root in self.write_roots if target.is_relative_to(root)]
        if not inside:
            roots = ", ".join(str(r) for r in self.write_roots)
            return Violation(
                "write-outside-roots",
                f"{path} resolves to {target}, outside every write root ({roots}); write under "
                "one of them, or add a root to write_roots in the guardrails policy",
            )
        for root in inside:
            relative = target.relative_to(root).as_posix().lower()
            for pattern in self.protected:
                if fnmatch.fnmatchcase(relative, pattern.lower()):
                    return Violation(
                        "protected-path",
                        f"{path} resolves to {target}, which matches protected_paths {pattern!r}",
                    )
        return None

    def check_code(self, code: str, language: str = "python") -> list[Violation]:
        """Every violation in a candidate's source; a candidate with any is never run.
        Code in another language gets the checks that fit it at text level (_foreign)."""
        if language != "python":
            return self._check_foreign(code, language)
        try:
            return self.code.check(code, self.check_command)
        except RecursionError:
            return [Violation("code-too-complex", "the code nests too deeply to check")]

    def _check_foreign(self, code: str, language: str) -> list[Violation]:
        note_limited(self.noted, "code", language)
        grammar = language_named(language).grammar
        stripped = comment_free(code, grammar) if grammar else code
        found = list(self.code.patterns_in(code, stripped))
        found.extend(foreign_commands(stripped, self.check_command))
        return list(dict.fromkeys(found))

    def scar_tissue(self, code: str, language: str = "python") -> list[str]:
        """Warnings on shipped code (`line N: what [check]`); they never fail a task. Code in
        another language gets the policy's patterns only, noted once in the events log."""
        if language != "python":
            note_limited(self.noted, "scar", language)
        return scar_warnings(code, self.scar_checks, language)

    def enforce_command(self, cmd: str | Sequence[str]) -> None:
        """Raise GuardrailError if `cmd` is forbidden (the sandbox's guard on what it starts)."""
        violation = self.check_command(cmd)
        if violation is not None:
            log.warning(  # `check` and `more` keep the event's fields as they have always been
                "guardrail_blocked",
                check="command",
                rule=violation.rule,
                detail=violation.detail,
                more=0,
            )
            raise GuardrailError(violation)


def _display(argv: Sequence[str]) -> str:
    """argv as shell text; `…` marks what is only known at run time."""
    return " ".join(a.replace(DYN, "…") if DYN in a else shlex.quote(a) for a in argv)


def _resolve(path: Path, base: Path) -> Path:
    with contextlib.suppress(RuntimeError):  # `~nobody/x`: no such user: a literal name
        path = path.expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def _words(spec: str | list[str]) -> frozenset[str]:
    """`"apply|delete"` or `[apply, delete]`: either word."""
    alternatives = spec if isinstance(spec, list) else spec.split("|")
    return frozenset(w.lower() for a in alternatives for w in a.split("|"))


def _compile(model: PolicyFile, source: str, base: Path) -> Policy:
    syntax = {
        name.lower(): Syntax(
            frozenset(p.value_options), _words(p.skip_words), p.long_option_abbreviations
        )
        for name, p in model.programs.items()
    }
    rules = [
        CommandRule(
            r.id,
            _words(r.command[0]),
            tuple(None if w == "*" else _words(w) for w in r.command[1:]),
            tuple(flag_spec(f) for f in r.flags),
            tuple(re.compile(a) for a in r.args),
            tuple(flag_spec(u) for u in r.unless_flags),
            r.reason,
        )
        for r in model.forbidden_commands
    ]
    code = CodeChecker(
        tuple(CallRule(c.id, tuple(c.calls), c.reason) for c in model.forbidden_calls),
        tuple(
            CodePattern(p.id, re.compile(p.pattern, re.M), p.reason, p.ignore_comments)
            for p in model.forbidden_code_patterns
        ),
    )
    scar = tuple(ScarCheck(s.id, re.compile(s.pattern, re.M), s.message) for s in model.scar_checks)
    roots = tuple(_resolve(Path(r), base) for r in model.write_roots)
    matcher = CommandMatcher.build(rules, syntax)
    js_refused = frozenset(model.refused_js_modules)
    js_allowed = {t: frozenset(names) for t, names in model.allowed_js_modules.items()}
    go_refused = frozenset(model.refused_go_packages)
    go_allowed = {t: frozenset(names) for t, names in model.allowed_go_packages.items()}
    protected = tuple(model.protected_paths)
    return Policy(
        source,
        base,
        roots,
        protected,
        matcher,
        code,
        scar,
        js_refused,
        js_allowed,
        go_refused=go_refused,
        go_allowed=go_allowed,
    )


@functools.cache
def shipped_refused_js_modules() -> frozenset[str]:
    """The shipped policy's list: what a test run given no policy refuses."""
    return frozenset(read_policy(None)[0].refused_js_modules)


@functools.cache
def shipped_refused_go_packages() -> frozenset[str]:
    """The shipped policy's Go list: what a test run given no policy refuses."""
    return frozenset(read_policy(None)[0].refused_go_packages)
