"""Split a script into statements."""

from __future__ import annotations

import re
from dataclasses import dataclass

from airflow_provider_lakehouse.sql.scan import Token, tokenize

_READ_ONLY_KINDS = frozenset({"select", "show", "explain", "values", "table", "describe", "summarize", "from"})
_WRITE_WORDS = re.compile(r"\b(insert|update|delete|merge)\b", re.IGNORECASE)
_FIRST_WORD = re.compile(r"[A-Za-z_]+")


@dataclass(frozen=True)
class Statement:
    """One statement of a script.

    :param index: 1-based position in the script (what error messages name).
    :param text: the statement as written, without the trailing ``;``.
    :param tokens: its tokens, for binding parameters without re-lexing.
    """

    index: int
    text: str
    tokens: tuple[Token, ...]

    @property
    def kind(self) -> str:
        """The statement's first keyword, lower-cased (``select``, ``insert``, ``create`` ...).

        >>> split_statements("/* hi */ (SELECT 1)")[0].kind
        'select'
        """
        for token in self.tokens:
            if token.kind == "code":
                word = _FIRST_WORD.search(token.text)
                if word:
                    return word.group(0).lower()
        return ""

    @property
    def is_read_only(self) -> bool:
        """True for statements that cannot change data (a ``WITH`` is read-only unless it writes)."""
        if self.kind == "with":
            return not any(t.kind == "code" and _WRITE_WORDS.search(t.text) for t in self.tokens)
        return self.kind in _READ_ONLY_KINDS


def split_statements(sql: str) -> list[Statement]:
    """Split ``sql`` on top-level ``;``; empty and comment-only pieces are dropped.

    >>> [s.text for s in split_statements("create table t(a text); insert into t values ('a;b');;")]
    ['create table t(a text)', "insert into t values ('a;b')"]
    """
    statements: list[Statement] = []
    current: list[Token] = []

    def close() -> None:
        if any(t.kind not in ("comment",) and t.text.strip() for t in current):
            text = "".join(t.text for t in current).strip()
            statements.append(Statement(index=len(statements) + 1, text=text, tokens=tuple(current)))
        current.clear()

    for token in tokenize(sql):
        if token.kind == "semicolon":
            close()
        else:
            current.append(token)
    close()
    return statements
