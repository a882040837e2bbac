"""Shell text → simple commands, split the way a POSIX shell would (quotes, operators, $())."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from harness.pyast import DYN

__all__ = ["Simple", "split_script"]

_OPS = ("&&", "||", ";;", "|&", "\n", ";", "&", "|", "(", ")")
_REDIRS = ("<<<", "<<-", "&>>", ">>", "<<", ">&", "<&", ">|", "<>", "&>", ">", "<")
_BRACES = {"{": "\ue000", "}": "\ue001", ",": "\ue002"}  # unquoted, so brace expansion applies
_UNBRACE = str.maketrans({v: k for k, v in _BRACES.items()})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b"}
_ESCAPES |= {"f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_BRACE_GROUP = re.compile("\ue000([^\ue000\ue001]*\ue002[^\ue000\ue001]*)\ue001")


@dataclass(frozen=True)
class Simple:
    """One simple command: its words, what is fed to its stdin, and what pipes into it."""

    argv: tuple[str, ...]
    stdin: tuple[str, ...] = ()  # here-strings and here-documents
    source: Simple | None = None  # the command before `|`


@dataclass
class _Lexer:
    text: str
    i: int = 0
    subs: list[str] = field(default_factory=list)
    tokens: list[tuple[str, str]] = field(default_factory=list)
    heredocs: list[tuple[str, bool, int]] = field(default_factory=list)

    def run(self) -> None:
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t":
                self.i += 1
            elif c == "#":
                end = self.text.find("\n", self.i)
                self.i = len(self.text) if end < 0 else end
            elif c in "<>" and self.text.startswith("(", self.i + 1):
                self.i += 1
                self.tokens.append(("word", self._substitution("(", ")")))
            elif op := _startswith_any(self.text, self.i, _REDIRS):
                self.i += len(op)
                self._redirection(op)
            elif op := _startswith_any(self.text, self.i, _OPS):
                self.i += len(op)
                self.tokens.append(("op", op))
                if op == "\n":
                    self._read_heredocs()
            else:
                self._emit_word(self._word())

    def _emit_word(self, word: str) -> None:
        nxt = self.text[self.i : self.i + 1]
        if nxt in ("<", ">") and word.isdigit():
            return  # `2>` names a file descriptor, not an argument
        self.tokens.extend(("word", w) for w in _expand_braces(word))

    def _redirection(self, op: str) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        target = self._word().translate(_UNBRACE)
        if op == "<<<":
            self.tokens.append(("stdin", target))
        elif op in ("<<", "<<-"):  # the body follows the line; it belongs to this command
            self.heredocs.append((target, op == "<<-", len(self.tokens)))

    def _read_heredocs(self) -> None:
        bodies: list[tuple[int, str]] = []
        for delimiter, strip_tabs, at in self.heredocs:
            body: list[str] = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            bodies.append((at, "\n".join(body)))
        for at, body_text in reversed(bodies):
            self.tokens.insert(at, ("heredoc", body_text))
        self.heredocs.clear()

    def _word(self) -> str:
        out: list[str] = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t\n;&|()<>":
                break
            self.i += 1
            if c == "\\":
                if self.text.startswith("\n", self.i):
                    self.i += 1
                else:
                    out.append(self.text[self.i : self.i + 1])
                    self.i += 1
            elif c == "'":
                out.append(self._until("'"))
            elif c == '"':
                out.append(self._double_quoted())
            elif c in "$`":
                out.append(self._expansion(c, quoted=False))
            else:
                out.append(_BRACES.get(c, c))
        return "".join(out)

    def _until(self, close: str) -> str:
        end = self.text.find(close, self.i)
        end = len(self.text) if end < 0 else end  # unterminated: a shell would refuse it
        value, self.i = self.text[self.i : end], end + 1
        return value

    def _double_quoted(self) -> str:
        out: list[str] = []
        while self.i < len(self.text) and self.text[self.i] != '"':
            c = self.text[self.i]
            self.i += 1
            if c == "\\" and self.text[self.i : self.i + 1] in ('"', "\\", "$", "`", "\n"):
                out.append(self.text[self.i].replace("\n", ""))
                self.i += 1
            elif c in "$`":
                out.append(self._expansion(c, quoted=True))
            else:
                out.append(c)
        self.i += 1
        return "".join(out)

    def _expansion(self, c: str, *, quoted: bool) -> str:
        if c == "`":
            self.subs.append(self._until("`").replace("\\`", "`"))
            return DYN
        nxt = self.text[self.i : self.i + 1]
        if nxt == "'" and not quoted:  # $'...': ANSI-C quoting, decoded like the shell does
            self.i += 1
            return _ansi_c(self._until("'"))
        if nxt == '"' and not quoted:  # $"...": a translated string, i.e. the string
            return ""
        if nxt == "(":
            self._substitution("(", ")")
            return DYN
        if nxt == "{":
            self.i = _matching(self.text, self.i, "{", "}") + 1
            return DYN
        if name := _NAME.match(self.text, self.i):
            self.i = name.end()
            return DYN
        return "$"

    def _substitution(self, open_: str, close: str) -> str:
        end = _matching(self.text, self.i, open_, close)
        self.subs.append(self.text[self.i + 1 : end])
        self.i = end + 1
        return DYN


def _startswith_any(text: str, i: int, options: tuple[str, ...]) -> str:
    return next((o for o in options if text.startswith(o, i)), "")


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """Index of the `close` that balances the `open_` at text[i]; quotes are skipped."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 1
        elif c in "'\"" and open_ != c:
            end = text.find(c, j + 1)
            j = len(text) if end < 0 else end
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(text)


def _ansi_c(body: str) -> str:
    """Decode $'...' escapes as bash does (`\\x67it` is `git`); unknown escapes stay."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        try:
            if code[0] in "xuU":
                return chr(int(code[1:], 16))
            if code[0] in "01234567":
                return chr(int(code, 8))
        except (ValueError, OverflowError):
            return match.group(0)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return _ESCAPES.get(code, match.group(0))

    return _ANSI_ESCAPE.sub(one, body)


def _expand_braces(word: str, limit: int = 32) -> list[str]:
    """`-{f,x}` → `-f`, `-x`, as bash does before running anything."""
    words, done = [word], []
    while words and len(done) < limit:
        current = words.pop()
        group = _BRACE_GROUP.search(current)
        if group is None:
            done.append(current.translate(_UNBRACE))
            continue
        head, tail = current[: group.start()], current[group.end() :]
        words.extend(head + part + tail for part in group.group(1).split("\ue002"))
    return done


def split_script(text: str) -> tuple[list[Simple], list[str]]:
    """The simple commands of a shell script, and the bodies of its command substitutions."""
    lexer = _Lexer(text)
    lexer.run()
    commands: list[Simple] = []
    piped: Simple | None = None
    for is_op, group in itertools.groupby(lexer.tokens, key=lambda t: t[0] == "op"):
        items = list(group)
        if is_op:
            piped = commands[-1] if commands and items[-1][1] in ("|", "|&") else None
            continue
        argv = tuple(v for k, v in items if k == "word")
        stdin = tuple(v for k, v in items if k in ("stdin", "heredoc"))
        commands.append(Simple(argv, stdin, piped))
        piped = None
    return commands, lexer.subs
