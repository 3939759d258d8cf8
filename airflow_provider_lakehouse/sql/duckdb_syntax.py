"""DuckDB statements that sqlglot reads differently from DuckDB, spelled the way both read alike.

Applied to a statement's text before sqlglot parses it, by the planner and the lineage extractor, so the two
agree with each other and with DuckDB.
"""

from __future__ import annotations

import re
from typing import Literal

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType

Tokenizer = DuckDB.Tokenizer

# DuckDB reads ``ALTER TABLE t RENAME a TO b`` as a column rename (the COLUMN keyword is optional); sqlglot
# reads a table rename to ``a`` and drops ``TO b``.
_IDENTIFIER = r'(?:"(?:[^"]|"")*"|[A-Za-z_][\w$]*)'
_COLUMN_RENAME_WITHOUT_KEYWORD = re.compile(
    rf"(\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_IDENTIFIER}(?:\s*\.\s*{_IDENTIFIER}){{0,2}}\s+RENAME\s+)"
    rf"(?!(?:TO|COLUMN)\b)(?={_IDENTIFIER}\s+TO\b)",
    re.IGNORECASE,
)


# ``RESET PARTITIONED BY`` (DuckLake: back to unpartitioned writes) is no syntax sqlglot knows; an empty
# ``SET PARTITIONED BY ()`` means the same and parses.
_PARTITION_RESET = re.compile(
    rf"(\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_IDENTIFIER}(?:\s*\.\s*{_IDENTIFIER}){{0,2}}\s+)"
    r"RESET\s+PARTITIONED\s+BY\b",
    re.IGNORECASE,
)


# A MERGE's ``UPDATE BY NAME`` / ``INSERT BY NAME`` (the source's columns by name) and ``BY POSITION`` (as the bare
# action) are no syntax sqlglot reads: the planner spells them with a marker column it recognises
_MERGE_BY = re.compile(r"\bTHEN\s+(UPDATE|INSERT)\s+BY\s+(NAME|POSITION)\b", re.IGNORECASE)
#: the marker of ``BY NAME`` in a spelled-out MERGE action (see :func:`spell_out_merge_by_name`)
MERGE_BY_NAME = "__lakehouse_by_name"


def spell_out_merge_by_name(text: str) -> str:
    """A MERGE's ``THEN UPDATE BY NAME`` as ``THEN UPDATE SET __lakehouse_by_name = TRUE``, ``THEN INSERT BY NAME``
    as ``THEN INSERT (__lakehouse_by_name) VALUES (TRUE)``, and ``BY POSITION`` dropped (the bare action's meaning).

    >>> spell_out_merge_by_name("MERGE INTO t USING s ON t.i = s.i WHEN MATCHED THEN UPDATE BY NAME")
    'MERGE INTO t USING s ON t.i = s.i WHEN MATCHED THEN UPDATE SET __lakehouse_by_name = TRUE'
    >>> spell_out_merge_by_name("... WHEN NOT MATCHED THEN insert by position")
    '... WHEN NOT MATCHED THEN insert'
    """

    def spelled(match: re.Match[str]) -> str:
        action = match.group(1)
        if match.group(2).upper() == "POSITION":
            return f"THEN {action}"
        if action.upper() == "UPDATE":
            return f"THEN {action} SET {MERGE_BY_NAME} = TRUE"
        return f"THEN {action} ({MERGE_BY_NAME}) VALUES (TRUE)"

    return _MERGE_BY.sub(spelled, text)


def merge_whole_source(action: exp.Expr | None) -> Literal["position", "name"] | None:
    """How a parsed MERGE action takes the source's own columns, as DuckDB does: ``"position"`` (``UPDATE SET *``,
    ``INSERT *``, a bare ``UPDATE`` or ``INSERT``, ``BY POSITION``), ``"name"`` (``BY NAME``, as
    :func:`spell_out_merge_by_name` spells it), or None for an action with its own assignments or values.

    >>> import sqlglot
    >>> merge = "MERGE INTO t USING s ON t.i = s.i WHEN MATCHED THEN {}"
    >>> [merge_whole_source(sqlglot.parse_one(spell_out_merge_by_name(merge.format(a)), read="duckdb")
    ...  .args["whens"].expressions[0].args["then"]) for a in ("UPDATE", "UPDATE BY NAME", "UPDATE SET v = 1")]
    ['position', 'name', None]
    """
    if isinstance(action, exp.Update):
        given = action.expressions or []  # a bare UPDATE has none
        if [a.this.name for a in given if isinstance(a, exp.EQ)] == [MERGE_BY_NAME]:
            return "name"
        return "position" if not given or any(isinstance(a, exp.Star) for a in given) else None
    if isinstance(action, exp.Insert):
        names = action.this.expressions if isinstance(action.this, exp.Tuple) else []
        if [c.name for c in names] == [MERGE_BY_NAME]:
            return "name"
        values = action.expression  # a bare INSERT's is False
        return "position" if not values or isinstance(values, exp.Star) else None
    return None


def sqlglot_spelling(text: str) -> str:
    """``text`` with every DuckDB spelling sqlglot misreads written out (see the functions below).

    >>> sqlglot_spelling("ALTER TABLE dl.t RESET PARTITIONED BY")
    'ALTER TABLE dl.t SET PARTITIONED BY ()'
    """
    return spell_out_pivot_order(spell_out_partition_reset(spell_out_column_rename(text)))


_PIVOT_WORD = re.compile(r"\b(?:UN)?PIVOT\b", re.IGNORECASE)


def spell_out_pivot_order(text: str) -> str:
    """A ``PIVOT``/``UNPIVOT`` statement followed by ``ORDER BY``, ``LIMIT`` or ``OFFSET``, or the query of a
    ``CREATE TABLE|VIEW ... AS`` (which DuckDB takes and sqlglot cannot parse), as ``SELECT * FROM (<statement>)
    ...``; any other text unchanged.

    >>> spell_out_pivot_order("PIVOT t ON g USING sum(x) GROUP BY id ORDER BY id LIMIT 2")
    'SELECT * FROM (PIVOT t ON g USING sum(x) GROUP BY id) ORDER BY id LIMIT 2'
    >>> spell_out_pivot_order("CREATE TABLE p AS PIVOT t ON g")
    'CREATE TABLE p AS SELECT * FROM (PIVOT t ON g)'
    """
    if not _PIVOT_WORD.search(text):  # every statement passes here: tokenize only those that may pivot
        return text
    try:
        tokens = Tokenizer().tokenize(text)
    except Exception:  # sqlglot's own limits: the parser reports the statement
        return text
    pivots = [
        i
        for i, token in enumerate(tokens)
        if token.text.upper() in ("PIVOT", "UNPIVOT")
        and (i == 0 or (tokens[0].token_type == TokenType.CREATE and tokens[i - 1].token_type == TokenType.ALIAS))
    ]
    if not pivots:
        return text
    first = tokens[pivots[0]]
    depth, end = 0, len(text)
    for token in tokens[pivots[0] :]:
        if token.token_type in (TokenType.L_PAREN, TokenType.R_PAREN):
            depth += 1 if token.token_type == TokenType.L_PAREN else -1
        elif depth == 0 and token.token_type in (TokenType.ORDER_BY, TokenType.LIMIT, TokenType.OFFSET):
            end = token.start
            break
    if end == len(text) and pivots[0] == 0:
        return text
    head, statement, tail = text[: first.start], text[first.start : end].rstrip(), text[end:]
    return f"{head}SELECT * FROM ({statement}){' ' + tail if tail else ''}"


def spell_out_partition_reset(text: str) -> str:
    """``ALTER TABLE t RESET PARTITIONED BY`` as ``ALTER TABLE t SET PARTITIONED BY ()``; any other text unchanged.

    >>> spell_out_partition_reset('alter table "s"."t" reset partitioned by;')
    'alter table "s"."t" SET PARTITIONED BY ();'
    """
    return _PARTITION_RESET.sub(r"\1SET PARTITIONED BY ()", text, count=1)


def spell_out_column_rename(text: str) -> str:
    """``ALTER TABLE t RENAME a TO b`` with ``COLUMN`` written out; any other text unchanged.

    >>> spell_out_column_rename("ALTER TABLE dl.s.t RENAME v TO u")
    'ALTER TABLE dl.s.t RENAME COLUMN v TO u'
    >>> spell_out_column_rename('alter table "my t" rename "a b" to c')
    'alter table "my t" rename COLUMN "a b" to c'
    >>> spell_out_column_rename("ALTER TABLE t RENAME TO u")
    'ALTER TABLE t RENAME TO u'
    >>> spell_out_column_rename("ALTER TABLE t RENAME COLUMN v TO u")
    'ALTER TABLE t RENAME COLUMN v TO u'
    """
    return _COLUMN_RENAME_WITHOUT_KEYWORD.sub(r"\1COLUMN ", text, count=1)


# How DuckDB writes a view's query into the catalog (its expressions' ToString), where that differs from SQL a
# user writes: qualified built-in functions (``main."substring"(s, 1, 1)``, ``main.list_value(a, 2)``), quoted
# ones (``"year"(d)``), ``count_star()`` for ``count(*)``, ``(lambda x: x + 1)`` for ``x -> x + 1``, and
# ``main."position"(haystack, needle)``, the internal function behind ``position(needle IN haystack)``.
_STORED_FUNCTION = re.compile(r'(?<![\w."])(?:main\.)?"([A-Za-z_]\w*)"\s*\(|(?<![\w."])main\.([A-Za-z_]\w*)\s*\(')
_STORED_LAMBDA = re.compile(r"\blambda\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*:")
_STORED_RENAMES = {"position": "strpos"}


def stored_view_spelling(text: str) -> str:
    """A view's query as DuckDB stores it, spelled as SQL a user writes (outside quoted strings; see above).

    >>> stored_view_spelling('SELECT count_star(), main."substring"(s, 1, 1), "year"(d), main.list_value(1) FROM t')
    'SELECT count(*), substring(s, 1, 1), year(d), list_value(1) FROM t'
    >>> stored_view_spelling('SELECT main."position"(s, x), "my col" FROM t')
    'SELECT strpos(s, x), "my col" FROM t'
    """
    pieces = re.split(r"('(?:[^']|'')*')", text)  # string literals stay as they are
    for i in range(0, len(pieces), 2):
        pieces[i] = _STORED_FUNCTION.sub(_function_name, pieces[i])
        pieces[i] = re.sub(r"\bcount_star\s*\(\s*\)", "count(*)", pieces[i])
    return _unwrap_lambdas(_STORED_LAMBDA.sub(_lambda_arrow, "".join(pieces)))


def _unwrap_lambdas(text: str) -> str:
    """``(x -> body)`` as ``x -> body``: sqlglot reads a parenthesised arrow as DuckDB's JSON operator, and the
    parentheses are DuckDB's own (it writes ``(lambda x: body)``)."""
    out, i = [], 0
    for match in re.finditer(r"\(\s*(?:[A-Za-z_]\w*|\([\w\s,]*\))\s*->", text):
        start = match.start()
        if start < i:
            continue
        end = _closing_paren(text, start)
        if end is None:
            continue
        out.append(text[i:start])
        out.append(text[start + 1 : end])
        i = end + 1
    out.append(text[i:])
    return "".join(out)


def _closing_paren(text: str, start: int) -> int | None:
    """The index of the parenthesis closing the one at ``start`` (quoted text skipped), or None."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _function_name(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    return _STORED_RENAMES.get(name.lower(), name) + "("


def _lambda_arrow(match: re.Match[str]) -> str:
    names = [n.strip() for n in match.group(1).split(",")]
    return (names[0] if len(names) == 1 else "(" + ", ".join(names) + ")") + " ->"
