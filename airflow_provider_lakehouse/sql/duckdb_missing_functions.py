"""The functions a DuckDB-dialect statement calls that DuckDB does not have, found before Spark runs it.

A lake script is DuckDB's SQL, and Spark has functions DuckDB lacks (``initcap``, ``nvl``, ``rand``, ``struct``
...). sqlglot reads many of them into its own typed nodes, which Spark then runs, where DuckDB fails the
statement with ``Catalog Error: Scalar Function with name initcap does not exist!``. The statement must fail on
Spark too, at its turn, as in DuckDB.

sqlglot keeps no function name as written (``nvl`` and ``ifnull`` are both its ``Coalesce``), so the names come
from the statement's tokens: a word followed by ``(`` that DuckDB's catalog lacks. Such a word counts only when
it is a name of a function node of the parsed statement (``Coalesce`` is ``COALESCE``, ``IFNULL`` or ``NVL``), and
no identifier of it (a table, column, alias or CTE: ``INSERT INTO t (a)``), nor a table function (``FROM
f(...)``). Keywords such as ``ON CONFLICT (id)`` or ``* EXCLUDE (a)`` are no function node's name. DuckDB's own
parser then reads the call (``name(...)``, and a ``WITHIN GROUP (...)`` after it): only a call it parses as a
call of that name is one its binder looks up and fails on (``percentile_cont(0.5) WITHIN GROUP (ORDER BY x)``
is DuckDB's ``quantile_cont``; ``ifnull`` is its ``COALESCE``). Only statements that compute values are checked,
not ``ALTER TABLE ... SET PARTITIONED BY (bucket(4, id))``, whose transforms are no functions. Where the
``duckdb`` package is not installed nothing is found.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import Token, TokenType

from airflow_provider_lakehouse.sql.duckdb_parser import function_names, serialized

#: the tokens a function name is read as: words, quoted names, and the keywords Spark has functions of (type
#: names, other keywords and literals are other tokens)
_NAME_TOKENS = {
    TokenType.VAR,
    TokenType.IDENTIFIER,
    TokenType.STRUCT,
    TokenType.CURRENT_TIME,
    TokenType.CURRENT_TIMESTAMP,
}
#: the statements whose expressions DuckDB binds (an ALTER's partition transforms are not functions)
_COMPUTING_STATEMENTS = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Copy)
#: tokens after which ``word(`` is not a call (a qualified name's last part, a cast's type)
_NOT_A_CALL_AFTER = {TokenType.DOT, TokenType.DCOLON}


def missing_function_error(text: str, tree: exp.Expr) -> str | None:
    """DuckDB's error for the first function ``text`` (a DuckDB-dialect statement parsed as ``tree``) calls
    that DuckDB does not have; None when it has them all, or when DuckDB is not installed.

    >>> import sqlglot
    >>> sql = "SELECT initcap(name), nvl(a, 0), ifnull(a, 0) FROM t"
    >>> missing_function_error(sql, sqlglot.parse_one(sql, read="duckdb"))
    'Catalog Error: Scalar Function with name initcap does not exist!'
    >>> sql = "INSERT INTO rand (a) SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM range(3) r(x)"
    >>> missing_function_error(sql, sqlglot.parse_one(sql, read="duckdb")) is None
    True
    """
    if not isinstance(tree, _COMPUTING_STATEMENTS):
        return None
    known = function_names()
    if known is None:
        return None
    candidates = _function_names_of(tree) - _names_that_are_not_calls(tree) - known
    if not candidates:  # the common case: every function node's names are DuckDB's, nothing to tokenize
        return None
    tokens = DuckDB().tokenize(text)
    for index, token in enumerate(tokens[:-1]):
        name = token.text.lower()
        if token.token_type not in _NAME_TOKENS or tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        if name not in candidates:
            continue
        if index and tokens[index - 1].token_type in _NOT_A_CALL_AFTER:
            continue
        if _parsed_as_a_call_of(name, _call_text(text, tokens, index)):
            return f"Catalog Error: Scalar Function with name {name} does not exist!"
    return None


def _function_names_of(tree: exp.Expr) -> set[str]:
    """Every name sqlglot reads as one of ``tree``'s function nodes (``nvl``, ``ifnull`` and ``coalesce`` for a
    ``Coalesce``; the name as written for a function sqlglot does not know)."""
    names: set[str] = set()
    for node in tree.find_all(exp.Func):
        if isinstance(node, exp.Anonymous):
            names.add(node.name.lower())
        else:
            names.update(name.lower() for name in node.sql_names())
    return names


def _names_that_are_not_calls(tree: exp.Expr) -> set[str]:
    """Every identifier of ``tree`` and the name of every function it reads as a table (``FROM f(...)``)."""
    names = {identifier.name.lower() for identifier in tree.find_all(exp.Identifier)}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Func):
            names.add(table.this.sql_name().lower())
            if isinstance(table.this, exp.Anonymous):
                names.add(table.this.name.lower())
    return names


def _call_text(text: str, tokens: list[Token], start: int) -> str:
    """The text of the call that begins at ``tokens[start]``: through its closing parenthesis, and a
    ``WITHIN GROUP (...)`` after it (which turns some calls into other functions)."""
    end = _closing(tokens, start + 1)
    following = [token.text.upper() for token in tokens[end + 1 : end + 4]]
    if following[:2] == ["WITHIN", "GROUP"] and following[2:] == ["("]:
        end = _closing(tokens, end + 3)
    return text[tokens[start].start : tokens[end].end + 1]


def _closing(tokens: list[Token], opening: int) -> int:
    """The index of the parenthesis that closes ``tokens[opening]`` (the last token when none does)."""
    depth = 0
    for index in range(opening, len(tokens)):
        if tokens[index].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[index].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return index
    return len(tokens) - 1


def _parsed_as_a_call_of(name: str, call: str) -> bool:
    """DuckDB's parser reads ``SELECT <call>`` as a call of the function ``name`` (which its binder looks up)."""
    tree = serialized(f"SELECT {call}")
    if tree is None or len(tree.get("statements") or []) != 1:
        return False
    items = tree["statements"][0]["node"].get("select_list") or []
    if len(items) != 1:
        return False
    item = items[0]
    return item.get("class") in {"FUNCTION", "WINDOW"} and str(item.get("function_name", "")).lower() == name
