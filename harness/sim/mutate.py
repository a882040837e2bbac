"""Semantic mutation sites of a known-good module, and the text edits that apply them (sim only).

A site is one small, plausible bug (a flipped comparison, an off-by-one, a dropped statement)
as a text edit on the original source, so an applied set keeps the solution's layout and
comments. Sites are enumerated in AST walk order, which makes their indices stable for a
given solution. Nothing outside function bodies is deleted and no definition is touched, so
every module-level name the tests import survives any set of mutations.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from harness.pyast import parse_module

__all__ = ["Site", "add_one", "find_sites", "remove_one", "render"]

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
# Same precedence level on both sides, so the edit never needs new parentheses.
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv,
}  # fmt: skip
NEAR_SITES = 6  # how far "adjacent code" reaches when a fix breaks something beside its change
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
_DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.If)


@dataclass(frozen=True)
class Site:
    """One mutation: replace source[start:end] with `replacement`."""

    index: int
    kind: str
    start: int
    end: int
    replacement: str

    def overlaps(self, other: Site) -> bool:
        return self.start < other.end and other.start < self.end


@functools.lru_cache(maxsize=64)
def find_sites(source: str) -> tuple[Site, ...]:
    """Every mutation site of `source`, in a deterministic order; () if it does not parse."""
    finder = _Finder(source)
    try:
        finder.visit(parse_module(source))
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return ()  # the simulator then answers with the solution unchanged
    return tuple(finder.sites)


def render(source: str, sites: tuple[Site, ...], chosen: Iterable[int]) -> str:
    """`source` with the chosen sites applied (an overlapping later site is skipped)."""
    accepted: list[Site] = []
    for index in sorted(set(chosen)):
        site = sites[index]
        if not any(site.overlaps(other) for other in accepted):
            accepted.append(site)
    text = source
    for site in sorted(accepted, key=lambda s: s.start, reverse=True):
        text = text[: site.start] + site.replacement + text[site.end :]
    return text


def remove_one(rng: random.Random, current: frozenset[int]) -> frozenset[int]:
    """The set with one mutation fixed (unchanged when there is none)."""
    if not current:
        return current
    return current - {rng.choice(sorted(current))}


def add_one(
    rng: random.Random,
    sites: tuple[Site, ...],
    current: frozenset[int],
    avoid: Collection[int] = (),
    near: int | None = None,
) -> frozenset[int]:
    """The set with one new bug. Anywhere: a kind drawn uniformly among those with a free
    site, then a site of it, so rare kinds are as likely as common ones. `near` an offset:
    one of the closest free sites, as when a fix refactors the code around it."""
    taken = [sites[i] for i in current]
    free = [
        s
        for s in sites
        if s.index not in current and s.index not in avoid and not any(s.overlaps(t) for t in taken)
    ]
    if not free:
        return current
    if near is not None:
        closest = sorted(free, key=lambda s: (abs(s.start - near), s.index))[:NEAR_SITES]
        return current | {rng.choice(closest).index}
    kind = rng.choice(sorted({s.kind for s in free}))
    return current | {rng.choice([s for s in free if s.kind == kind]).index}


class _Finder(ast.NodeVisitor):
    """Walks a module collecting sites; skips what is not behaviour (docstrings, annotations,
    imports, decorators, `__all__`) and `while` loops, whose mutants may never terminate."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sites: list[Site] = []
        self.in_function = False
        starts, offset = [], 0
        for line in source.split("\n"):
            starts.append(offset)
            offset += len(line) + 1
        self._line_starts = starts

    def _offset(self, line: int, col: int) -> int:
        """ast columns count UTF-8 bytes; the edits index characters."""
        start = self._line_starts[line - 1]
        text = self.source[start : start + col + 1]
        return start + len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def _segment(self, node: ast.AST) -> str:
        return self.source[self._span(node)[0] : self._span(node)[1]]

    def _span(self, node: ast.AST) -> tuple[int, int]:
        start = self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def _add(self, kind: str, node: ast.AST, replacement: str) -> None:
        start, end = self._span(node)
        if self.source[start:end] != replacement:
            self.sites.append(Site(len(self.sites), kind, start, end, replacement))

    def _body(self, body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            body = body[1:] if isinstance(first.value.value, str) else body  # docstring
        for stmt in body:
            if self.in_function and isinstance(stmt, _DELETABLE):
                self._add("delete_statement", stmt, "pass")
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        outer, self.in_function = self.in_function, True
        self._body(node.body)
        self.in_function = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer, self.in_function = self.in_function, False  # class attributes are definitions
        self._body(node.body)
        self.in_function = outer

    def visit_If(self, node: ast.If) -> None:
        if _is_main_guard(node.test):
            return  # never runs under the tests
        self._negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for cond in node.ifs:
            self._negate(cond)
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        """Like NodeVisitor's, but statement lists go through _body (deletion sites) and
        annotations are skipped."""
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._body(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST) and field not in ("annotation", "returns"):
                self.visit(value)

    def _negate(self, test: ast.expr) -> None:
        if not self.in_function:
            return  # module-level conditions are import-time plumbing (TYPE_CHECKING, versions)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._segment(test.operand)
            atomic = isinstance(test.operand, _ATOMIC)
            self._add("negate_condition", test, inner if atomic else f"({inner})")
        elif isinstance(test, _ATOMIC):
            self._add("negate_condition", test, f"not {self._segment(test)}")
        else:
            self._add("negate_condition", test, f"not ({self._segment(test)})")

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        if self.in_function and value is not None and not _is_none(value):
            self._add("return_none", node, "return None")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1 and type(node.ops[0]) in _COMPARE_SWAP:
            swapped = ast.Compare(node.left, [_COMPARE_SWAP[type(node.ops[0])]()], node.comparators)
            self._add("flip_comparison", node, ast.unparse(swapped))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if type(node.op) in _BINOP_SWAP:
            swapped = ast.BinOp(node.left, _BINOP_SWAP[type(node.op)](), node.right)
            self._add("swap_arithmetic", node, ast.unparse(swapped))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if type(node.op) in _BINOP_SWAP:
            swapped = ast.AugAssign(node.target, _BINOP_SWAP[type(node.op)](), node.value)
            self._add("swap_arithmetic", node, ast.unparse(swapped))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add("swap_bool_operator", node, ast.unparse(ast.BoolOp(other, node.values)))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for i, key in enumerate(node.keys):
            if key is not None:
                keys, values = (
                    node.keys[:i] + node.keys[i + 1 :],
                    node.values[:i] + node.values[i + 1 :],
                )
                self._add("drop_dict_key", node, ast.unparse(ast.Dict(keys, values)))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, int) and not isinstance(value, bool):
            self._add("off_by_one", node, str(value + 1 if value <= 1 else value - 1))
        elif isinstance(value, str):
            self._add("alter_string", node, repr(_alter(value)))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        """Python 3.11 reports unreliable positions inside f-strings: leave them alone."""

    def visit_While(self, node: ast.While) -> None:
        """A mutated while loop may never end, and the test run would sit out its timeout."""

    def _skip(self, node: ast.AST) -> None:
        """Imports, scoping declarations and type aliases carry no testable behaviour."""

    visit_Import = visit_ImportFrom = visit_Global = visit_Nonlocal = _skip


def _alter(text: str) -> str:
    """A near-miss string: the kind of typo or casing slip that breaks an equality check."""
    if not text:
        return " "
    if text[0].islower():
        return text[0].upper() + text[1:]
    return text.lower() if text != text.lower() else text + "s"


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )
