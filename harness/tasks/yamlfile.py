"""Read one YAML input file safely: parsed once (libyaml's parser where installed), with lines.

What a hand-written or generated input can do to a plain `yaml.safe_load` and what it gets
here instead, always a `YamlError` with the line and what to change:
- not a regular file (a folder, a FIFO that would block forever, a device): refused by `stat`
  before anything is opened; bigger than `max_bytes`: refused by size before it is read;
- not UTF-8: the line of the first bad byte; a UTF-8 byte-order mark is accepted;
- nested deeper than MAX_DEPTH (libyaml's own composer recurses in C and crashes the process
  on 100,000 `[`), or aliases expanding past MAX_VALUES (a "billion laughs"): refused while
  composing, because this composer is Python over libyaml's events and counts as it goes;
- duplicate keys (YAML keeps the last one silently): collected, so the caller reports each with
  its other problems; numbers Python cannot hold: refused with their line.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
import yaml.reader
from yaml.composer import Composer, ComposerError
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "Duplicate",
    "YamlDoc",
    "YamlError",
    "child",
    "decode",
    "file_kind",
    "key_lines",
    "read_yaml",
]

MAX_DEPTH = 32  # the deepest real input (a guardrails policy) nests 6 levels
MAX_VALUES = 2_000_000  # nodes after alias expansion; a 1,000-task list has ~50,000

try:  # libyaml's parser when PyYAML was built with it, the pure-Python one otherwise
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - every wheel we install ships libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)


class YamlError(ValueError):
    """The file cannot be read as YAML; `line` is 1-based, or 0 when it is about the file."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Duplicate:
    """A key given twice in one mapping; YAML would silently keep only the last value."""

    mapping: Node
    key: str
    line: int
    first_line: int

    @property
    def message(self) -> str:
        return (
            f"duplicate key {self.key!r} (first on line {self.first_line}); YAML would keep "
            "only this one and silently drop the first: merge them or remove one"
        )


@dataclass(frozen=True)
class YamlDoc:
    """A parsed file: its data, the node tree it came from (for lines), its duplicate keys."""

    path: Path
    data: Any
    root: Node | None
    duplicates: tuple[Duplicate, ...] = ()

    def node(self, *loc: str | int) -> Node | None:
        """The node at `loc` (mapping keys and sequence indexes), or None."""
        node = self.root
        for part in loc:
            node = child(node, part)
            if node is None:
                return None
        return node

    def line(self, *loc: str | int) -> int:
        """The line of the key (or item) at `loc`, else of its nearest existing parent."""
        node, line = self.root, 1 if self.root is None else self.root.start_mark.line + 1
        for part in loc:
            if isinstance(node, MappingNode):
                pair = _last(node, part)
                if pair is None:
                    return line
                line, node = pair[0].start_mark.line + 1, pair[1]
            elif (nested := child(node, part)) is not None:
                node, line = nested, nested.start_mark.line + 1
            else:
                return line
        return line


def _last(node: MappingNode, key: str | int) -> tuple[Node, Node] | None:
    """The pair YAML keeps for `key`: the last one, when a key repeats."""
    return next((kv for kv in reversed(node.value) if kv[0].value == str(key)), None)


def child(node: Node | None, part: str | int) -> Node | None:
    """The value node under key `part` of a mapping, or item `part` of a sequence."""
    if isinstance(node, MappingNode):
        pair = _last(node, part)
        return pair[1] if pair is not None else None
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]
    return None


def key_lines(node: Node | None) -> dict[str, int]:
    """Each key of a mapping node and its 1-based line (the last, if a key repeats)."""
    if not isinstance(node, MappingNode):
        return {}
    return {str(key.value): key.start_mark.line + 1 for key, _ in node.value}


class _Refused(ComposerError):
    """A limit of this reader, not a syntax error: its message stands on its own."""


class _Loader(Composer, _Parser, SafeConstructor, Resolver):
    """libyaml's events, composed in Python so depth, expansion and duplicates are counted."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.duplicates: list[Duplicate] = []
        self._depth = 0
        self._values = 0
        self._weights: dict[str, int] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            self._count(self._weights.get(event.anchor, 1), event)
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            msg = f"nests deeper than {MAX_DEPTH} levels; flatten it"
            raise _Refused(None, None, msg, event.start_mark)
        before = self._values
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._count(1, event)
        if event.anchor is not None:
            self._weights[event.anchor] = self._values - before
        return node

    def compose_mapping_node(self, anchor: str | None) -> Node:
        node = super().compose_mapping_node(anchor)
        first: dict[str, int] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode):
                continue
            line = key.start_mark.line + 1
            if key.value in first:
                self.duplicates.append(Duplicate(node, key.value, line, first[key.value]))
            else:
                first[key.value] = line
        return node

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:  # an int past Python's digit limit, a 13th month
            reason = str(exc).split(";")[0]
            msg = f"this value cannot be read ({reason}); quote it if it is text"
            raise _Refused(None, None, msg, node.start_mark) from exc

    def _count(self, weight: int, event: Any) -> None:
        self._values += weight
        if self._values > MAX_VALUES:
            msg = f"expands to more than {MAX_VALUES:,} values (aliases?); write it out plainly"
            raise _Refused(None, None, msg, event.start_mark)


def _read_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    try:
        info = path.stat()
    except FileNotFoundError:
        hint = " (a symlink to a missing file)" if path.is_symlink() else ""
        raise YamlError(path, 0, f"does not exist{hint}; check the path of the {what}") from None
    except OSError as exc:
        raise YamlError(path, 0, f"cannot be read: {exc.strerror}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise YamlError(path, 0, f"is a directory; give the {what} file itself")
    if not stat.S_ISREG(info.st_mode):
        raise YamlError(path, 0, f"is {file_kind(info.st_mode)}, not a regular file; give a file")
    too_big = f"is bigger than {max_bytes / 2**20:g} MiB, the limit for a {what}; split it"
    if info.st_size > max_bytes:
        raise YamlError(path, 0, too_big)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # swapped for a FIFO since the stat
        with os.fdopen(fd, "rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise YamlError(path, 0, f"cannot be read: {exc.strerror}") from exc
    if len(data) > max_bytes:
        raise YamlError(path, 0, too_big)
    return data


def file_kind(mode: int) -> str:
    """'a FIFO (named pipe)', 'a socket', ... for a stat mode that is not a regular file."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def decode(path: Path, data: bytes) -> str:
    """`data` as UTF-8 text (a byte-order mark dropped), or YamlError at the bad byte's line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"byte {data[exc.start]:#04x} is not UTF-8; save the file as UTF-8 text"
        raise YamlError(path, line, msg) from None


def _syntax_error(path: Path, text: str, exc: yaml.MarkedYAMLError) -> YamlError:
    mark = exc.problem_mark or exc.context_mark
    context = exc.context
    if context and exc.context_mark and mark and exc.context_mark.line != mark.line:
        context = f"{context} started on line {exc.context_mark.line + 1}"
    what_went_wrong = ": ".join(str(p) for p in (context, exc.problem) if p)
    if mark is None:
        return YamlError(path, 0, f"not valid YAML ({what_went_wrong}); fix it")
    lines = text.split("\n")
    tab = mark.line < len(lines) and "\t" in lines[mark.line]
    fix = "indent with spaces, YAML does not allow tabs there" if tab else "fix it there"
    return YamlError(path, mark.line + 1, f"not valid YAML ({what_went_wrong}); {fix}")


def read_yaml(path: Path, *, what: str, max_bytes: int) -> YamlDoc:
    """Parse the YAML file at `path` (a `what`, e.g. "task list", for messages) once."""
    path = Path(path)
    text = decode(path, _read_bytes(path, what, max_bytes))
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except _Refused as exc:
        raise YamlError(path, exc.problem_mark.line + 1, str(exc.problem)) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(path, text, exc) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise YamlError(path, line, f"not valid YAML ({exc.reason}); remove it") from None
    except yaml.YAMLError as exc:
        raise YamlError(path, 0, f"not valid YAML ({exc}); fix it") from None
    finally:
        loader.dispose()
    return YamlDoc(path, data, root, tuple(loader.duplicates))
