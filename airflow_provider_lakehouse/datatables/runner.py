"""Execute a script of statements in one Postgres transaction, with bound parameters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.exceptions import ParameterError, ServiceUnavailableError, StatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.sql.params import Parameters, bind_pyformat, placeholders_in, validate_parameters
from airflow_provider_lakehouse.sql.split import Statement, split_statements

if TYPE_CHECKING:
    import psycopg

    from airflow_provider_lakehouse.connections.specs import PostgresSpec

Fetch = Literal["all", "one", "scalar", "none"]
FETCH_MODES: tuple[str, ...] = ("all", "one", "scalar", "none")


@dataclass(frozen=True)
class StatementResult:
    """What one statement did: its kind, rows affected or returned, and result columns."""

    index: int
    kind: str
    rowcount: int
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScriptResult:
    """The outcome of a script: one entry per statement, and the last statement's result shaped by ``fetch``."""

    statements: tuple[StatementResult, ...]
    result: Any = None


def run_script(
    spec: PostgresSpec,
    sql: str,
    parameters: Parameters = None,
    *,
    schema: str | None = None,
    fetch: Fetch = "all",
    autocommit: bool = False,
    redactor: Redactor | None = None,
    target: str = "data table",
) -> ScriptResult:
    """Run every statement of ``sql`` in one transaction and return the last statement's result.

    :param spec: where to connect.
    :param sql: one or more statements separated by ``;``.
    :param parameters: a list binding ``$1, $2, ...`` or a dict binding ``$name``.
    :param schema: put this schema first on the search path; it is created if the script writes.
    :param fetch: ``all`` (list of row dicts), ``one`` (first row dict or None), ``scalar`` (first
        column of the first row) or ``none``.
    :param autocommit: run each statement in its own transaction (needed for e.g. ``CREATE DATABASE``).
    :param redactor: secrets to mask in error messages.
    :param target: how errors name what was connected to.
    :raises ParameterError: parameters do not match the placeholders (nothing was sent).
    :raises StatementError: a statement failed; everything was rolled back (unless ``autocommit``).
    :raises ServiceUnavailableError: the database could not be reached.
    """
    import psycopg

    if fetch not in FETCH_MODES:
        raise ValueError(f"fetch must be one of {', '.join(FETCH_MODES)}, not {fetch!r}.")
    redactor = redactor or Redactor([spec.password])
    statements = split_statements(sql)
    if not statements:
        raise ParameterError("The SQL contains no statement.")
    values = validate_parameters(statements, parameters)

    try:
        conn = psycopg.connect(**spec.connect_kwargs(), autocommit=autocommit)
    except psycopg.Error as exc:
        raise ServiceUnavailableError(
            f"Could not connect to {target} at {spec.authority}/{spec.dbname}: {redactor.redact(str(exc)).strip()}"
        ) from None
    with conn:  # commits on success, rolls back on any exception
        if schema:
            _use_schema(conn, schema, create=not all(s.is_read_only for s in statements))
        results: list[StatementResult] = []
        last_rows: list[tuple[Any, ...]] = []
        last_columns: tuple[str, ...] = ()
        for statement in statements:
            columns, rows, rowcount = _execute(conn, statement, values, redactor)
            results.append(StatementResult(statement.index, statement.kind, rowcount, columns))
            last_rows, last_columns = rows, columns
    return ScriptResult(statements=tuple(results), result=_shape(last_columns, last_rows, fetch))


def _use_schema(conn: psycopg.Connection[Any], schema: str, *, create: bool) -> None:
    from psycopg import sql as pgsql

    with conn.cursor() as cur:
        if create:
            cur.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(schema)))
        # public stays on the path so extensions and shared functions installed there still resolve.
        cur.execute(pgsql.SQL("SET search_path TO {}, public").format(pgsql.Identifier(schema)))


def _execute(
    conn: psycopg.Connection[Any], statement: Statement, values: dict[str, Any], redactor: Redactor
) -> tuple[tuple[str, ...], list[tuple[Any, ...]], int]:
    import psycopg

    keys = placeholders_in([statement])
    query = bind_pyformat(statement) if keys else statement.text
    params = {k: adapt_value(values[k]) for k in keys} if keys else None
    try:
        with conn.cursor() as cur:
            cur.execute(query, params)  # the text is built from the user's own SQL
            if cur.description is None:
                return (), [], max(cur.rowcount, 0)
            columns = tuple(col.name for col in cur.description)
            rows = cur.fetchall()
            return columns, rows, len(rows)
    except psycopg.Error as exc:
        raise StatementError(statement.index, statement.text, redactor.redact(_describe(exc))) from None


def _describe(exc: Exception) -> str:
    import psycopg

    message = str(exc).strip()
    if isinstance(exc, psycopg.Error) and exc.diag.sqlstate:
        message = f"{message} (SQLSTATE {exc.diag.sqlstate})"
    return message


def adapt_value(value: Any) -> Any:
    """Wrap Python values psycopg would not send as users mean them: dicts (and lists of non-scalars) as JSONB."""
    from psycopg.types.json import Jsonb

    if isinstance(value, dict):
        return Jsonb(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value):
        return Jsonb(list(value))
    return value


def _shape(columns: Sequence[str], rows: list[tuple[Any, ...]], fetch: str) -> Any:
    if fetch == "none":
        return None
    if fetch == "scalar":
        return to_json_safe(rows[0][0]) if rows and rows[0] else None
    names = _unique(columns)
    dicts = [{name: to_json_safe(v) for name, v in zip(names, row, strict=False)} for row in rows]
    if fetch == "one":
        return dicts[0] if dicts else None
    return dicts


def _unique(columns: Sequence[str]) -> list[str]:
    """Keep every column when names repeat (``a.id, b.id``): later ones become ``id_2``, ``id_3``."""
    seen: dict[str, int] = {}
    names = []
    for column in columns:
        count = seen.get(column, 0) + 1
        seen[column] = count
        names.append(column if count == 1 else f"{column}_{count}")
    return names
