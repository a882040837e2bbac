"""Where context tools may read: the one resolver every tool call goes through.

A path the model names is relative to the task list's folder. It is resolved (symlinks and
`..` followed) and must land inside `read_roots`; it must not be, or lie under, anything the
run keeps from the model (every task's hidden tests and solution, the run directory, the
config, the policy, the price table, the task list), nor pass through `.git/`, nor be named
like a key. A refusal is a reason, never a read. Threat rows: docs/context-and-judge.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.keys import is_secret_file

__all__ = ["Confinement", "Refusal"]

_VCS = ".git"


@dataclass(frozen=True)
class Refusal:
    """Why a path is not read: what the model is told, as an error result."""

    reason: str


@dataclass(frozen=True)
class Confinement:
    """The roots a tool may read under, and what inside them is kept back (all resolved)."""

    base: Path
    roots: tuple[Path, ...]
    withheld: tuple[Path, ...]

    @classmethod
    def of(cls, base: Path, roots: Iterable[Path], withheld: Iterable[Path]) -> Confinement:
        """Resolve everything once; the base folder is always a root."""
        resolved = {p.resolve() for p in (base, *roots)}
        return cls(base.resolve(), tuple(sorted(resolved)), tuple({p.resolve() for p in withheld}))

    def resolve(self, rel: str) -> Path | Refusal:
        """The path `rel` names, resolved, or why it may not be read."""
        if not rel or "\x00" in rel:
            return Refusal("empty path or NUL byte: name a path relative to the task list")
        if Path(rel).is_absolute():
            return Refusal(f"{rel!r} is absolute: paths are relative to the task list's folder")
        try:
            target = (self.base / rel).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            return Refusal(f"{rel!r} cannot be resolved ({type(exc).__name__})")
        return self.admit(target, rel)

    def admit(self, target: Path, rel: str) -> Path | Refusal:
        """`target` (already resolved) if a tool may read it, else the reason."""
        root = next((r for r in self.roots if target.is_relative_to(r)), None)
        if root is None:
            return Refusal(f"{rel!r} is outside the folders this run may read")
        if _VCS in target.relative_to(root).parts:
            return Refusal(f"{rel!r} is inside .git/, which is not shown")
        if is_secret_file(target):
            return Refusal(f"{rel!r} is named like a credential file, which is not shown")
        if any(target == w or target.is_relative_to(w) for w in self.withheld):
            return Refusal(f"{rel!r} is withheld from the model (hidden tests, solution, run data)")
        return target

    def shown(self, target: Path) -> str:
        """How a resolved path is named back to the model: relative to the base if it can be."""
        if target.is_relative_to(self.base):
            return target.relative_to(self.base).as_posix() or "."
        return target.as_posix()
