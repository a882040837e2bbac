"""A validation error of the config (or the price table) said as what to change."""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel

from harness.config.models import HarnessConfig

__all__ = ["Loc", "dotted", "explain"]

Loc = tuple[str | int, ...]


def dotted(loc: Loc) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def explain(err: Any) -> str:
    """A pydantic error as what to change."""
    kind, got, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
    if kind == "extra_forbidden":
        return f"unknown key; {_suggest(err['loc'])}"
    if kind == "missing":
        return "missing; add it"
    if kind == "finite_number":
        return f"must be a finite number (got {shown})"
    if kind in ("int_type", "int_from_float", "int_parsing"):
        return f"expected a whole number, e.g. 4 (got {shown})"
    if kind in ("float_type", "float_parsing", "decimal_type", "decimal_parsing"):
        return f"expected a number (got {shown})"
    if kind == "value_error":  # our own validators' messages already say what to change
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == "path_type":
        return f"expected a path (got {shown})"
    if kind == "bool_type":
        return f"expected true or false (got {shown})"
    bounds = {
        "less_than_equal": "at most {le}",
        "greater_than": "more than {gt}",
        "greater_than_equal": "at least {ge}",
    }
    if kind in bounds:
        plain = {
            k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in ctx.items()
        }
        return f"must be {bounds[kind].format(**plain)} (got {shown})"
    return f"{err['msg']} (got {shown})"


def _suggest(loc: Loc) -> str:
    """The key probably meant at `loc`, or the keys allowed there."""
    node: Any = HarnessConfig
    for part in loc[:-1]:  # through models, and into the values of dicts (routes.<tier>)
        if _is_model(node):
            field = node.model_fields.get(str(part))
            node = field.annotation if field else None
        else:
            args = [a for a in typing.get_args(node) if a is not type(None)]
            node = args[-1] if args else None
    valid = tuple(node.model_fields) if _is_model(node) else ()
    close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"valid keys here: {', '.join(valid)}"


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
