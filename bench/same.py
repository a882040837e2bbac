"""`python -m bench.same A.json B.json`: do two bench records hold the same figures?

Every value is compared, field by field, except what a run measures of its machine and its
own speed: timings, the machine, and how many test results and nights it took from memory
(those depend on which process ran what, bench/fanout.py). Exit 0 when the rest is equal,
else 1 with the paths that differ. This is how a change meant to make the bench faster
shows that it moved no figure (docs/benchmarks.md, Run time)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["IGNORED", "differences", "main"]

# Keys whose values are timings or describe the run's machine and memory, wherever they sit.
IGNORED = frozenset(
    {
        "machine",
        "duration_s",
        "test_memo",
        "nights_reused",
        "wall_s",
        "provider_s",
        "latency_s",
        "test_s",
    }
)


def differences(a: Any, b: Any, path: str = "$") -> Iterator[str]:
    """The paths at which `a` and `b` differ, outside the IGNORED keys."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in IGNORED:
                continue
            if key not in a or key not in b:
                yield f"{path}.{key} (only in {'b' if key not in a else 'a'})"
            else:
                yield from differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield f"{path}: {a!r} vs {b!r}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m bench.same A.json B.json", file=sys.stderr)
        return 2
    a, b = (json.loads(Path(p).read_text()) for p in argv)
    found = list(differences(a, b))
    for line in found[:50]:
        print(line)
    print(f"{len(found)} differences" if found else "same figures", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
