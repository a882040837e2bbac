"""Forbidden-command rules matched on argv: subcommand words, flags (combined, abbreviated)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.guardrails.unwrap import program_name
from harness.pyast import DYN

__all__ = ["CommandMatcher", "CommandRule", "Syntax", "flag_spec"]

Requirement = frozenset[str]  # synonyms: any one of them satisfies it
FlagSet = tuple[Requirement, ...]  # every requirement must be satisfied


def flag_spec(spec: str) -> FlagSet:
    """`"-d|--delete -f|--force"` → two requirements, each satisfied by either synonym."""
    return tuple(frozenset(req.split("|")) for req in spec.split())


@dataclass(frozen=True)
class Syntax:
    """How one program reads its command line (from the policy's `programs:`)."""

    value_options: frozenset[str] = frozenset()  # options that consume the next word
    skip_words: frozenset[str] = frozenset()  # words before the subcommand: gcloud beta ...
    abbreviations: bool = False  # --forc means --force (git's parse-options, getopt_long)


@dataclass(frozen=True)
class CommandRule:
    """`programs` followed by the `path` words (None = any word), and then: any of `flags`,
    or a positional matching any of `args`; unless any of `unless` is given."""

    id: str
    programs: frozenset[str]
    path: tuple[frozenset[str] | None, ...]
    flags: tuple[FlagSet, ...]
    args: tuple[re.Pattern[str], ...]
    unless: tuple[FlagSet, ...]
    reason: str


@dataclass(frozen=True)
class _Reading:
    positionals: tuple[str, ...]
    flags: frozenset[str]
    starts: tuple[int, ...]  # where the subcommand may begin


def _read(args: Sequence[str], syntax: Syntax) -> _Reading:
    positionals: list[str] = []
    flags: set[str] = set()
    starts, i, maybe_valued = [0], 0, False
    while i < len(args):
        arg = args[i]
        if arg == "--":
            flags.add("--")
            positionals.extend(args[i + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            if maybe_valued and not positionals:
                starts.append(1)  # an unknown `--opt value` / `-o value` before the subcommand
            positionals.append(arg)
            maybe_valued = False
            i += 1
            continue
        name, eq, _ = arg.partition("=")
        flags.add(name)
        if not arg.startswith("--"):
            flags.update(_short_cluster(arg, syntax.value_options))
        takes_value = not eq and (name in syntax.value_options or _valued_cluster(arg, syntax))
        maybe_valued = not eq and not takes_value
        i += 2 if takes_value else 1
    return _Reading(tuple(positionals), frozenset(flags), tuple(starts))


def _short_cluster(arg: str, value_options: frozenset[str]) -> list[str]:
    """`-fdx` → -f -d -x; stops at an option that takes a value (`-ofoo` is -o foo)."""
    out = []
    for ch in arg[1:]:
        out.append("-" + ch)
        if "-" + ch in value_options:
            break
    return out


def _valued_cluster(arg: str, syntax: Syntax) -> bool:
    """A cluster ending in a value option takes the next word (`-uo VALUE`)."""
    return len(arg) > 2 and not arg.startswith("--") and f"-{arg[-1]}" in syntax.value_options


def _satisfied(flagset: FlagSet, flags: frozenset[str], abbreviations: bool) -> bool:
    return all(_has(req, flags, abbreviations) for req in flagset)


def _has(req: Requirement, flags: frozenset[str], abbreviations: bool) -> bool:
    if req & flags:
        return True
    if not abbreviations:
        return False
    longs = [f for f in flags if f.startswith("--") and len(f) > 3]
    return any(s.startswith(f) for s in req if s.startswith("--") for f in longs)


def _path_end(
    rule: CommandRule, reading: _Reading, start: int, syntax: Syntax, *, literal: bool
) -> int | None:
    """Where the rule's subcommand words end, if they match from `start`. A word known only
    at run time matches any; with `literal`, at least one word must match as written."""
    words, k, literal_hits = reading.positionals, start, 0
    while k < len(words) and words[k].lower() in syntax.skip_words:
        k += 1
    for expected in rule.path:
        if k >= len(words):
            return None
        word = words[k].lower()
        if expected is not None and word not in expected and DYN not in word:
            return None
        literal_hits += expected is not None and word in expected
        k += 1
    return k if literal_hits or not literal else None


def _matches(rule: CommandRule, reading: _Reading, syntax: Syntax, *, dynamic: bool) -> bool:
    for start in reading.starts:
        end = _path_end(rule, reading, start, syntax, literal=dynamic)
        if end is None:
            continue
        if any(_satisfied(u, reading.flags, syntax.abbreviations) for u in rule.unless):
            return False
        if not rule.flags and not rule.args:
            return True
        if any(_satisfied(f, reading.flags, syntax.abbreviations) for f in rule.flags):
            return True
        rest = reading.positionals[end:]
        if any(p.fullmatch(word) for p in rule.args for word in rest):
            return True
    return False


@dataclass(frozen=True)
class CommandMatcher:
    """The policy's forbidden commands, indexed by program."""

    rules: tuple[CommandRule, ...]
    syntax: Mapping[str, Syntax]

    @classmethod
    def build(cls, rules: Iterable[CommandRule], syntax: Mapping[str, Syntax]) -> CommandMatcher:
        return cls(tuple(rules), dict(syntax))

    def first_match(self, argv: Sequence[str]) -> CommandRule | None:
        """The first rule `argv` breaks; a program only known at run time is tried as each."""
        if not argv:
            return None
        name = program_name(argv[0])
        for rule in self.rules:
            if DYN in name or name in rule.programs:
                program = name if name in rule.programs else min(rule.programs)
                syntax = self.syntax.get(program, Syntax())
                if _matches(rule, _read(argv[1:], syntax), syntax, dynamic=DYN in name):
                    return rule
        return None
