"""A small SQL lexer: enough to split scripts and find parameters without being fooled by literals.

It knows single-quoted strings (``''`` escapes, ``E'..'`` backslash escapes), double-quoted
identifiers, ``--`` and nested ``/* */`` comments, dollar-quoted strings (``$$..$$``,
``$tag$..$tag$``), parameters (``$1``, ``$name``) and the ``;`` separator. Everything else is
``code``. Both PostgreSQL and DuckDB lex these the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

TokenKind = Literal["code", "string", "identifier", "comment", "param", "semicolon"]

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_POSITIONAL = re.compile(r"\$(\d+)")
_NAMED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_$]")
_SPECIAL = re.compile(r"['\";$]|--|/\*")  # what can start a token that is not code
# Where a quoted string or identifier may end: its quote, or a backslash escape (E'...' strings).
_QUOTE_STOPS = {
    ("'", False): re.compile(r"'"),
    ("'", True): re.compile(r"['\\]"),
    ('"', False): re.compile(r'"'),
    ('"', True): re.compile(r'["\\]'),
}
_COMMENT_MARK = re.compile(r"/\*|\*/")


@dataclass(frozen=True)
class Token:
    """One lexical piece of a script; ``text`` slices the original exactly."""

    kind: TokenKind
    text: str
    start: int

    @property
    def param_key(self) -> str:
        """``"1"`` for ``$1``, ``"name"`` for ``$name`` (only for ``param`` tokens)."""
        return self.text[1:]


def tokenize(sql: str) -> Iterator[Token]:
    """Yield the tokens of ``sql``; concatenating their texts gives ``sql`` back.

    >>> [(t.kind, t.text) for t in tokenize("select '$1;' , $1; -- x")]  # doctest: +NORMALIZE_WHITESPACE
    [('code', 'select '), ('string', "'$1;'"), ('code', ' , '), ('param', '$1'), ('semicolon', ';'),
     ('code', ' '), ('comment', '-- x')]
    """
    i, n, code_start = 0, len(sql), 0

    def flush(upto: int) -> Iterator[Token]:
        if upto > code_start:
            yield Token("code", sql[code_start:upto], code_start)

    while i < n:
        # Only these characters can start a token that is not code: jump to the next one (a scan in C).
        special = _SPECIAL.search(sql, i)
        if special is None:
            break
        i = special.start()
        c = sql[i]
        end: int | None = None
        kind: TokenKind | None = None
        if c == "'":
            escapes = i > 0 and sql[i - 1] in "eE" and (i < 2 or not _IDENT_CHAR.match(sql[i - 2]))
            end, kind = _end_of_quoted(sql, i, "'", backslash=escapes), "string"
        elif c == '"':
            end, kind = _end_of_quoted(sql, i, '"', backslash=False), "identifier"
        elif sql.startswith("--", i):
            nl = sql.find("\n", i)
            end, kind = (n if nl < 0 else nl), "comment"
        elif sql.startswith("/*", i):
            end, kind = _end_of_block_comment(sql, i), "comment"
        elif c == ";":
            end, kind = i + 1, "semicolon"
        elif c == "$" and not (i > 0 and _IDENT_CHAR.match(sql[i - 1])):
            tag = _DOLLAR_TAG.match(sql, i)
            positional = _POSITIONAL.match(sql, i)
            named = _NAMED.match(sql, i)
            if tag:
                close = sql.find(tag.group(0), tag.end())
                end, kind = (n if close < 0 else close + len(tag.group(0))), "string"
            elif positional:
                end, kind = positional.end(), "param"
            elif named:
                end, kind = named.end(), "param"
        if kind is None or end is None:
            i += 1
            continue
        yield from flush(i)
        yield Token(kind, sql[i:end], i)
        i = code_start = end
    yield from flush(n)


def _end_of_quoted(sql: str, start: int, quote: str, *, backslash: bool) -> int:
    stops = _QUOTE_STOPS[(quote, backslash)]
    i, n = start + 1, len(sql)
    while True:
        stop = stops.search(sql, i)
        if stop is None:
            return n  # unterminated: the database will report it, with its own message
        i = stop.start()
        if sql[i] == "\\" or sql.startswith(quote, i + 1):
            i += 2
        else:
            return i + 1


def _end_of_block_comment(sql: str, start: int) -> int:
    depth, i, n = 0, start, len(sql)
    while True:
        mark = _COMMENT_MARK.search(sql, i)
        if mark is None:
            return n
        depth += 1 if mark.group(0) == "/*" else -1
        i = mark.end()
        if depth == 0:
            return i
