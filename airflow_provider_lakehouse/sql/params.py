"""``$1`` / ``$name`` parameters: validated against the values given, bound by the driver, never spliced."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airflow_provider_lakehouse.exceptions import ParameterError
from airflow_provider_lakehouse.sql.split import Statement

Parameters = Sequence[Any] | Mapping[str, Any] | None


def placeholders_in(statements: Iterable[Statement]) -> list[str]:
    """Parameter keys used by ``statements``, in order of first use (``"1"`` for ``$1``).

    >>> from airflow_provider_lakehouse.sql.split import split_statements
    >>> placeholders_in(split_statements("select $2, $1; select $name, '$x', $1"))
    ['2', '1', 'name']
    """
    seen: dict[str, None] = {}
    for statement in statements:
        for token in statement.tokens:
            if token.kind == "param":
                seen.setdefault(token.param_key, None)
    return list(seen)


def validate_parameters(statements: Sequence[Statement], parameters: Parameters) -> dict[str, Any]:
    """Check ``parameters`` against the placeholders of ``statements``; return them keyed by placeholder.

    A list binds ``$1, $2, ...`` and must be used entirely; a dict binds ``$name`` and may not
    leave a placeholder unbound or a key unused (a typo would otherwise silently bind nothing).

    :raises ParameterError: on any mismatch, before anything is sent to a database.
    """
    used = placeholders_in(statements)
    if parameters is None:
        parameters = {}
    if isinstance(parameters, (str, bytes)):
        raise ParameterError("parameters must be a list (for $1, $2, ...) or a dict (for $name), not a string.")
    if isinstance(parameters, Mapping):
        values = {str(k): v for k, v in parameters.items()}
        positional = [k for k in used if k.isdigit()]
        if positional and values:
            raise ParameterError(
                f"The SQL uses positional parameters (${positional[0]}) but parameters were given as a dict; "
                "pass a list for $1, $2, ..."
            )
        missing = [k for k in used if k not in values]
        if missing:
            given = ", ".join(sorted(values)) or "none"
            raise ParameterError(f"No value for parameter(s) {', '.join('$' + k for k in missing)}; given: {given}.")
        unused = [k for k in values if k not in used]
        if unused:
            raise ParameterError(f"Parameter(s) {', '.join('$' + k for k in unused)} given but not used by the SQL.")
        return values
    items = list(parameters)
    named = [k for k in used if not k.isdigit()]
    if named:
        raise ParameterError(f"The SQL uses named parameter ${named[0]}; pass parameters as a dict.")
    indexes = {int(k) for k in used}
    if indexes != set(range(1, len(items) + 1)):
        highest = max(indexes, default=0)
        raise ParameterError(
            f"Wrong parameter count: the SQL uses {', '.join('$' + str(i) for i in sorted(indexes)) or 'no parameters'} "
            f"(up to ${highest}) but {len(items)} value(s) were given."
        )
    return {str(i): v for i, v in enumerate(items, start=1)}


def bind_pyformat(statement: Statement) -> str:
    """Rewrite ``statement`` for a pyformat driver (psycopg): ``$k`` becomes ``%(k)s``, ``%`` becomes ``%%``.

    The driver then sends the values separately (server-side binding), so a value is never part
    of the SQL text.

    >>> from airflow_provider_lakehouse.sql.split import split_statements
    >>> bind_pyformat(split_statements("select $1 || '%', $who::text")[0])
    "select %(1)s || '%%', %(who)s::text"
    """
    parts: list[str] = []
    for token in statement.tokens:
        if token.kind == "param":
            parts.append(f"%({token.param_key})s")
        else:
            # psycopg scans the whole text, literals included, for % placeholders.
            parts.append(token.text.replace("%", "%%"))
    return "".join(parts).strip()
