"""Plan a SQL script against a lake for Spark: pure, no Spark, no catalog access.

Each statement is parsed with sqlglot (DuckDB dialect by default, the lake's native SQL), checked against
what the provider supports, and turned into a :class:`Step`: its kind, the Spark SQL to run (with every lake
table, file read and catalog function replaced by a temporary view name) and what those views are. The Spark
driver registers the views at the right snapshot and executes the step; the catalog commits happen there too.

Planning fails for the whole script before anything runs, so an unsupported statement touches nothing.

>>> plan = plan_script("ATTACH 'ducklake' AS dl; USE dl; SELECT count(*) AS n FROM events WHERE kind = $kind",
...                    parameters={"kind": "click"})
>>> plan.lake, [s.kind for s in plan.steps]
('main', ['attach', 'use', 'select'])
>>> plan.steps[2].query.replace(plan.steps[2].tables[0].view, "<view>")
'SELECT COUNT(*) AS n FROM <view> AS events WHERE kind = :kind'
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.optimizer.annotate_types import annotate_types

from airflow_provider_lakehouse.connections.names import parse_datatable_name
from airflow_provider_lakehouse.ducklake.names import VIEW_CATALOG_PLACEHOLDER
from airflow_provider_lakehouse.exceptions import (
    LakehouseError,
    ParameterError,
    StatementError,
    UnsupportedStatementError,
)
from airflow_provider_lakehouse.spark import steps
from airflow_provider_lakehouse.spark.decimal_types import duckdb_literal_types
from airflow_provider_lakehouse.spark.duckdb_functions import duckdb_functions, mark_moved_indexes
from airflow_provider_lakehouse.spark.insert_values import is_default, values_by_kind
from airflow_provider_lakehouse.spark.list_lambdas import list_lambdas_for_spark
from airflow_provider_lakehouse.spark.named_windows import inline_named_windows
from airflow_provider_lakehouse.spark.pattern_calls import parse_spark
from airflow_provider_lakehouse.spark.pivot_statements import PivotRefusal, pivot_statements_as_queries
from airflow_provider_lakehouse.spark.pivots import pivot_counts_for_spark
from airflow_provider_lakehouse.spark.query_values import typed_text_in_values, values_combine_error
from airflow_provider_lakehouse.spark.rewriting import MARKERS, spark_text
from airflow_provider_lakehouse.spark.semantics import arithmetic_markers, duckdb_semantics
from airflow_provider_lakehouse.spark.steps import DEFAULT_VALUE, ColumnDef, MergeClause, StepDetails
from airflow_provider_lakehouse.spark.strftime import format_error as strftime_format_error
from airflow_provider_lakehouse.spark.type_refusals import type_refusal
from airflow_provider_lakehouse.spark.unnests import zipped_unnests
from airflow_provider_lakehouse.spark.window_filters import qualify_error, window_filters_for_spark
from airflow_provider_lakehouse.spark.window_frames import window_frame_refusal
from airflow_provider_lakehouse.sql.duckdb_missing_functions import missing_function_error
from airflow_provider_lakehouse.sql.duckdb_names import output_names, query_text
from airflow_provider_lakehouse.sql.duckdb_syntax import (
    merge_whole_source,
    spell_out_merge_by_name,
    sqlglot_spelling,
    stored_view_spelling,
)
from airflow_provider_lakehouse.sql.names import (
    FilePath,
    NameScope,
    StoreRef,
    TableName,
    file_path,
    file_reference,
    parse_attach,
)
from airflow_provider_lakehouse.sql.params import Parameters, validate_parameters
from airflow_provider_lakehouse.sql.sorted_by import SortedBySyntaxError, parse_sorted_by
from airflow_provider_lakehouse.sql.split import Statement, split_statements

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.model import ViewInfo

DIALECTS = ("duckdb", "spark")
CATALOG_FUNCTIONS = ("ducklake_snapshots", "ducklake_table_info", "ducklake_table_changes")
MAINTENANCE_CALLS = (
    "ducklake_expire_snapshots",
    "ducklake_cleanup_old_files",
    "ducklake_merge_adjacent_files",
    "ducklake_delete_orphaned_files",
    "ducklake_flush_inlined_data",
)
#: URI schemes the Spark side reads and writes files under (see .files); a local path has none
FILE_SCHEMES = frozenset({"s3", "s3a", "file", "gs", "abfs", "abfss"})


@dataclass(frozen=True)
class TableRef:
    """A lake table read by a step, registered as Spark view ``view``.

    :param columns: lower-cased column names the statement can reference (``None``: all of them).
    :param version: read at this snapshot id; ``timestamp_sql`` reads at the time the Spark SQL evaluates to.
    :param row_ids: also expose ``rowid`` and the file id/position columns (for UPDATE, DELETE and MERGE).
    :param predicates: ``(column, op, value)`` conditions every row the statement uses from this reference
        satisfies (from its WHERE clause); files whose statistics rule them out are skipped. A value
        ``{"param": name}`` is a parameter.
    """

    view: str
    schema: str
    table: str
    columns: tuple[str, ...] | None = None
    version: int | str | None = None
    timestamp_sql: str | None = None
    row_ids: bool = False
    predicates: tuple[tuple[str, str, Any], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"


@dataclass(frozen=True)
class FileRef:
    """Files read by a step (``read_parquet``, ``read_csv``, ``FROM 's3://...'``), registered as ``view``."""

    view: str
    paths: tuple[str, ...]
    format: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DataTableRef:
    """A table of Data Table ``datatable`` read by a step, registered as view ``view`` (read in the script's
    Postgres transaction, so it shows the script's own changes to it)."""

    view: str
    datatable: str
    schema: str
    table: str

    @property
    def uri(self) -> str:
        """``datatable://NAME/schema.table``: how responses and lineage name it."""
        return f"datatable://{self.datatable.lower()}/{self.schema}.{self.table}"


@dataclass(frozen=True)
class CatalogRef:
    """A catalog table function (``ducklake_snapshots()`` ...) registered as ``view``; ``args`` are literals."""

    view: str
    function: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Step:
    """One statement, planned.

    :param index: 1-based statement index (what errors name).
    :param text: the statement as written.
    :param details: what the statement's kind carries (a :mod:`.steps` class: column definitions, the ALTER
        action, UPDATE assignments, MERGE clauses ...); its class names the kind.
    :param query: Spark SQL producing the statement's rows (SELECT, CTAS, INSERT, temp tables, COPY).
    :param target: ``schema.table`` written (or the temp object created).
    :param parameters: names of the parameters the Spark SQL of this step references.
    :param datatables: Data Table tables the step reads (registered as views like ``tables``).
    :param duckdb_text: the statement as DuckDB runs it when that is not ``text``: its Data Table tables
        replaced by their views (and, for a change to a Data Table, only the query whose rows it writes).
    :param duckdb_error: the error DuckDB fails the statement with before running it (a function DuckDB does not
        have, see :mod:`~airflow_provider_lakehouse.sql.duckdb_missing_functions`); raised at the statement's turn.
    """

    index: int
    text: str
    details: StepDetails
    query: str | None = None
    target: str | None = None
    tables: tuple[TableRef, ...] = ()
    files: tuple[FileRef, ...] = ()
    catalog: tuple[CatalogRef, ...] = ()
    parameters: tuple[str, ...] = ()
    datatables: tuple[DataTableRef, ...] = ()
    duckdb_text: str | None = None
    duckdb_error: str | None = None

    @property
    def kind(self) -> str:
        """``select``, ``insert``, ``ctas`` ... (what responses and logs name; see :data:`.steps.WRITE_KINDS`)."""
        return getattr(self.details, "statement_kind", "") or self.details.kind

    @property
    def changes_datatable(self) -> bool:
        """The statement changes a Data Table (its changes join the script's Postgres transaction)."""
        return isinstance(self.details, steps.DataTableChange)

    @property
    def writes(self) -> bool:
        return self.details.writes


@dataclass(frozen=True)
class Plan:
    """A planned script: the lake it runs against, its steps and its bound parameter values."""

    lake: str
    steps: tuple[Step, ...]
    parameters: dict[str, Any]
    dialect: str = "duckdb"
    autocommit: bool = False

    @property
    def datatables(self) -> tuple[str, ...]:
        """The Data Tables the script reads or changes (their connections are resolved before it runs)."""
        names = {ref.datatable for step in self.steps for ref in step.datatables}
        names |= {s.details.datatable for s in self.steps if isinstance(s.details, steps.DataTableChange)}
        return tuple(sorted(names))

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-ready form (for handing the plan to a spark-submit job)."""
        return {
            "lake": self.lake,
            "dialect": self.dialect,
            "autocommit": self.autocommit,
            "steps": [{**asdict(s), "details": steps.details_to_json(s.details)} for s in self.steps],
        }

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any], parameters: dict[str, Any]) -> Plan:
        planned = []
        for raw in data["steps"]:
            planned.append(
                Step(
                    **{
                        **raw,
                        "tables": tuple(_table_ref_from_json(t) for t in raw["tables"]),
                        "files": tuple(FileRef(**{**f, "paths": tuple(f["paths"])}) for f in raw["files"]),
                        "catalog": tuple(CatalogRef(**{**c, "args": tuple(c["args"])}) for c in raw["catalog"]),
                        "parameters": tuple(raw["parameters"]),
                        "datatables": tuple(DataTableRef(**d) for d in raw.get("datatables", ())),
                        "details": steps.details_from_json(raw["details"]),
                    }
                )
            )
        return cls(
            lake=data["lake"],
            steps=tuple(planned),
            parameters=parameters,
            dialect=data["dialect"],
            autocommit=bool(data.get("autocommit", False)),
        )


def _table_ref_from_json(data: Mapping[str, Any]) -> TableRef:
    """A :class:`TableRef` back from JSON: its tuples (columns, predicates and IN lists in them) were lists."""
    predicates = tuple(
        (column, op, tuple(value) if isinstance(value, list) else value) for column, op, value in data["predicates"]
    )
    return TableRef(**{**data, "columns": _tuple(data["columns"]), "predicates": predicates})


def _tuple(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def plan_script(
    sql: str,
    *,
    dialect: str = "duckdb",
    lake: str | None = None,
    parameters: Parameters = None,
    autocommit: bool = False,
) -> Plan:
    """Plan ``sql`` (one or more statements) for Spark.

    By default the script is one transaction: its data-changing statements commit one snapshot together, or
    nothing. ``autocommit=True`` commits each data-changing statement (or ``BEGIN ... COMMIT`` group) on its own.

    :param dialect: ``duckdb`` (default; the lake's native SQL) or ``spark``.
    :param lake: the lake the script runs against; ``None`` takes it from an ``ATTACH 'ducklake://NAME'``
        preamble, else ``main``.
    :param parameters: values for ``$name`` (dict) or ``$1..$n`` (list) placeholders; bound by Spark, never
        spliced into the SQL text.
    :raises ParameterError: placeholders and values do not match.
    :raises UnsupportedStatementError: a statement the provider cannot run (named by index and text).
    :raises StatementError: a statement does not parse.
    """
    if dialect not in DIALECTS:
        raise ParameterError(f"dialect must be one of {', '.join(DIALECTS)}, not {dialect!r}.")
    statements = split_statements(sql)
    if not statements:
        raise ParameterError("The SQL holds no statement.")
    values = validate_parameters(statements, parameters)
    planner = _Planner(dialect, lake)
    planned: list[Step] = []
    for statement in statements:
        step = planner.plan(statement)
        _check_call_placement(statement, step, planned, autocommit)
        planned.append(step)
    if planner.open_transaction:
        raise UnsupportedStatementError("BEGIN without COMMIT: the script ends inside a transaction.")
    bound = {_param_name(k): v for k, v in values.items()}
    return Plan(
        lake=planner.lake or "main", steps=tuple(planned), parameters=bound, dialect=dialect, autocommit=autocommit
    )


#: the alias a lake view's stored query is planned under: it stands for the query's ``{DUCKLAKE_CATALOG}``
VIEW_ALIAS = "__lh_view_lake"
#: views read through views, at most (a deeper chain is taken for a view that reads itself)
MAX_VIEW_DEPTH = 16


def view_query_step(view: ViewInfo, lake: str) -> Step:
    """The ``SELECT`` step of a lake view's stored query, planned as DuckDB reads a view: in the view's schema
    (unqualified names resolve there), its ``{DUCKLAKE_CATALOG}`` naming this lake.

    :param lake: the lake's name (the view's catalog).
    :raises LakehouseError: the stored text is not one query this planner can run (naming the view).

    >>> from airflow_provider_lakehouse.ducklake.model import ViewInfo
    >>> view = ViewInfo(7, 1, "sales", "big", "SELECT id FROM {DUCKLAKE_CATALOG}.main.t WHERE id > 1 UNION ALL SELECT id FROM u")
    >>> [t.name for t in view_query_step(view, "main").tables]
    ['main.t', 'sales.u']
    """
    body = stored_view_spelling(replace_outside_quotes(view.sql, VIEW_CATALOG_PLACEHOLDER, VIEW_ALIAS))
    schema = '"' + view.schema_name.replace('"', '""') + '"'
    try:
        plan = plan_script(f"ATTACH 'ducklake' AS {VIEW_ALIAS}; USE {VIEW_ALIAS}.{schema};\n{body}", lake=lake)
    except (UnsupportedStatementError, StatementError, ParameterError) as exc:
        reason = str(exc).splitlines()[0]
        raise LakehouseError(f"View {view.qualified_name} cannot be read here: {reason}") from None
    step = plan.steps[-1]
    if len(plan.steps) != 3 or not isinstance(step.details, steps.Select):
        raise LakehouseError(f"View {view.qualified_name} does not hold one query: {view.sql[:200]}")
    return step


def replace_outside_quotes(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new`` wherever it is not inside a quoted string or name (DuckDB's
    ``ReplaceSkippingQuotes`` for a view's catalog placeholder).

    >>> replace_outside_quotes("SELECT '{X}' AS s FROM {X}.t", "{X}", "dl")
    "SELECT '{X}' AS s FROM dl.t"
    """
    out: list[str] = []
    i, quote = 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == quote:
                quote = ""
            i += 1
        elif ch in "'\"":
            quote = ch
            out.append(ch)
            i += 1
        elif text.startswith(old, i):
            out.append(new)
            i += len(old)
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_DEPTH: dict[type[StepDetails], int] = {steps.Begin: 1, steps.Commit: -1, steps.Rollback: -1}


def _check_call_placement(statement: Statement, step: Step, before: list[Step], autocommit: bool) -> None:
    """Maintenance CALLs commit snapshots of their own, so they cannot sit inside a transaction: not inside
    ``BEGIN ... COMMIT``, and (unless ``autocommit``) not after a data-changing statement of the script's
    transaction, which would then be based on a snapshot the CALL rewrote."""
    if not isinstance(step.details, steps.Call):
        return
    depth = 0
    for earlier in before:
        depth += _DEPTH.get(type(earlier.details), 0)
    if depth:
        raise _fail(statement, "maintenance CALLs commit on their own; run them outside BEGIN ... COMMIT.")
    if not autocommit and any(s.writes and not isinstance(s.details, steps.Call) for s in before):
        raise _fail(
            statement,
            "maintenance CALLs commit on their own and cannot follow a data change in the "
            "script's transaction; run them first, in their own task, or with autocommit=True.",
        )


def _param_name(key: str) -> str:
    """Spark's named markers must be identifiers: ``$1`` becomes ``:p1``."""
    return f"p{key}" if key.isdigit() else key


def _fail(statement: Statement, message: str) -> UnsupportedStatementError:
    shown = statement.text if len(statement.text) <= 300 else statement.text[:297] + "..."
    return UnsupportedStatementError(
        f"Statement {statement.index} is not supported: {message}\n  statement {statement.index}: {shown}"
    )


class _Planner:
    """Walks the statements in order, tracking the ATTACH alias, USE, temp objects and transactions."""

    def __init__(self, dialect: str, lake: str | None) -> None:
        self.dialect = dialect
        self.lake = lake
        self.names = NameScope()  # every alias names the one lake the script runs against
        # temp table/view name (lower case) -> the Spark view holding it, unique to this script: scripts of
        # concurrent tasks share one Spark Connect session (see session.connect_session)
        self.temp_objects: dict[str, str] = {}
        self.token = uuid.uuid4().hex[:10]
        self.open_transaction = False
        self._view_counter = 0
        self.datatable_stores: dict[str, StoreRef] = {}  # attached Data Tables by store URI
        self.datatable_schemas: set[str] = set()  # schemas an ATTACH 'datatable://NAME:SCHEMA' named
        self.read_only: set[str] = set()  # aliases attached (READ_ONLY)

    # -- entry -------------------------------------------------------------------------------
    def plan(self, statement: Statement) -> Step:
        is_call, text = _strip_call(statement.text)
        if self.dialect == "duckdb":
            text = spell_out_merge_by_name(sqlglot_spelling(text))
            if not is_call and (sorted_by := self._sorted_by(statement, text)) is not None:
                return sorted_by
        try:
            # Spark SQL keeps its datetime patterns as written (.pattern_calls)
            tree = parse_spark(text) if self.dialect == "spark" else sqlglot.parse_one(text, read=self.dialect)
        except ParseError as exc:
            raise StatementError(statement.index, statement.text, f"cannot parse: {_first_line(exc)}") from None
        # DuckDB fails these statements when it reaches them (so an autocommit script keeps what ran before):
        # a write through a READ_ONLY alias, a function DuckDB does not have (found before the handlers rename
        # the tree's tables: its identifiers tell calls from names)
        if self.dialect == "duckdb" and (refusal := window_frame_refusal(tree) or type_refusal(tree)) is not None:
            raise _fail(statement, refusal)
        duckdb_error = self._write_to_read_only(tree, is_call)
        if duckdb_error is None and self.dialect == "duckdb" and not is_call:
            duckdb_error = (
                missing_function_error(text, tree)
                or strftime_format_error(tree, text)
                or values_combine_error(tree)
                or qualify_error(tree)
            )
        if self.dialect == "duckdb" and not is_call and tree.find(exp.Pivot):
            try:  # DuckDB's PIVOT / UNPIVOT statements, as the clauses they stand for
                tree = pivot_statements_as_queries(tree)
            except PivotRefusal as exc:
                raise _fail(statement, str(exc)) from None
        step = self._call(statement, tree) if is_call else self._handle(statement, tree)
        return replace(step, duckdb_error=duckdb_error) if duckdb_error and not step.duckdb_error else step

    def _handle(self, statement: Statement, tree: exp.Expr) -> Step:
        if self.datatable_stores:
            change = self._datatable_change(statement, tree)
            if change is not None:
                return change
        handler = getattr(self, f"_{type(tree).__name__.lower()}", None)
        if handler is None or isinstance(tree, exp.Command):
            raise _fail(statement, f"{_first_word(statement.text)} statements cannot run on a lake.")
        step = handler(statement, tree)
        if step.datatables:  # DuckDB runs the statement with its Data Table tables replaced by their views
            step = replace(step, duckdb_text=self.duckdb_text(tree))
        return step

    # -- preamble and transactions ------------------------------------------------------------------
    def _attach(self, statement: Statement, tree: exp.Attach) -> Step:
        target = tree.this
        alias = target.alias if isinstance(target, exp.Alias) else ""
        literal = target.this if isinstance(target, exp.Alias) else target
        store = parse_attach(literal.name) if isinstance(literal, exp.Literal) else None
        if store is None or not alias:
            raise _fail(
                statement,
                "only ATTACH 'ducklake://NAME' AS alias (or 'ducklake' for main) and ATTACH "
                "'datatable://NAME[:SCHEMA]' AS alias are accepted; the provider resolves their credentials itself.",
            )
        options = {o.sql("duckdb").upper().replace(" ", "") for o in tree.expressions or []}
        if options & {"READ_ONLY", "READ_ONLY=TRUE", "READ_ONLYTRUE"}:
            self.read_only.add(alias.lower())
        if store.kind == "datatable":
            return self._attach_datatable(statement, alias, store)
        name = store.name
        if self.lake is not None and self.lake != name:
            raise _fail(statement, f"the script attaches lake {name!r} but runs against lake {self.lake!r}.")
        self.lake = name
        self.names.target = store.uri
        self.names.attach(alias, store)
        return Step(statement.index, statement.text, steps.Attach(), target=name)

    def _attach_datatable(self, statement: Statement, alias: str, store: StoreRef) -> Step:
        try:
            parse_datatable_name(store.name)
        except ValueError as exc:
            raise _fail(statement, str(exc)) from None
        if self.names.is_alias(alias):
            raise _fail(statement, f"alias {alias!r} is already attached.")
        self.names.attach(alias, store)
        self.datatable_stores[store.uri] = store
        if store.schema:
            self.datatable_schemas.add(store.schema)
        return Step(statement.index, statement.text, steps.Attach(), target=store.uri)

    def _use(self, statement: Statement, tree: exp.Use) -> Step:
        table = tree.this
        parts = [p.name for p in table.parts] if isinstance(table, exp.Table) else [table.name]
        selected = self.names.use(parts)
        if selected.catalog is not None:
            shown = ".".join(parts[1:] if self.names.is_alias(parts[0]) else parts)
            raise _fail(statement, f"USE {shown}: name a lake alias, a schema, or alias.schema.")
        if selected.store in self.datatable_stores:  # the engines resolve nothing by it: the planner did
            store = self.datatable_stores[selected.store or ""]
            return Step(
                statement.index, statement.text, steps.Use(), target=f"datatable://{store.name}/{selected.schema}"
            )
        return Step(statement.index, statement.text, steps.Use(), target=selected.schema)

    def _transaction(self, statement: Statement, tree: exp.Transaction) -> Step:
        if self.open_transaction:
            raise _fail(statement, "BEGIN inside a transaction.")
        self.open_transaction = True
        return Step(statement.index, statement.text, steps.Begin())

    def _commit(self, statement: Statement, tree: exp.Commit) -> Step:
        if not self.open_transaction:
            raise _fail(statement, "COMMIT without BEGIN.")
        self.open_transaction = False
        return Step(statement.index, statement.text, steps.Commit())

    def _rollback(self, statement: Statement, tree: exp.Rollback) -> Step:
        if not self.open_transaction:
            raise _fail(statement, "ROLLBACK without BEGIN.")
        self.open_transaction = False
        return Step(statement.index, statement.text, steps.Rollback())

    # -- queries -----------------------------------------------------------------------------
    def _query(self, statement: Statement, tree: exp.Expr, details: StepDetails | None = None, **extra: Any) -> Step:
        refs = _Refs(self, statement)
        query = refs.rewrite(tree)
        if self.dialect == "duckdb":
            source = self._named_query_text(statement, tree, details)
            if source is not None:
                query = named_like_duckdb(query, source)
        return Step(
            statement.index,
            statement.text,
            details or steps.Select(),
            query=self.spark_sql(query),
            **refs.step_fields(),
            **extra,
        )

    _select = _union = _except = _intersect = _query

    @staticmethod
    def _named_query_text(statement: Statement, tree: exp.Expr, details: StepDetails | None) -> str | None:
        """The DuckDB text whose result column names the step keeps: the statement's own text where it holds the
        query as written (DuckDB then names exactly what was written), else sqlglot's DuckDB text of the query;
        None where names do not matter (rows inserted by position, a DELETE's or UPDATE's selection)."""
        if details is None or isinstance(details, steps.Select):
            return statement.text
        if isinstance(details, (steps.Ctas, steps.TempTable, steps.TempView, steps.CreateView)):
            return query_text(statement.text) or tree.sql("duckdb")
        if isinstance(details, steps.Copy) or (isinstance(details, steps.Insert) and details.by_name):
            return tree.sql("duckdb")
        return None

    def _create(self, statement: Statement, tree: exp.Create) -> Step:
        kind = str(tree.args.get("kind") or "").upper()
        temporary = any(
            isinstance(p, exp.TemporaryProperty) for p in (tree.args.get("properties") or exp.Properties()).expressions
        )
        if kind == "SCHEMA":
            name = self._schema_name(statement, tree.this)
            return Step(
                statement.index,
                statement.text,
                steps.CreateSchema(if_not_exists=bool(tree.args.get("exists"))),
                target=name,
            )
        if kind == "VIEW" and temporary:
            return self._temp(statement, tree, steps.TempView)
        if kind == "VIEW":
            return self._create_view(statement, tree)
        if kind == "TABLE" and temporary:
            return self._temp(statement, tree, steps.TempTable)
        if kind != "TABLE":
            raise _fail(
                statement, f"CREATE {kind or '?'} is not supported (tables, views, temp tables/views and schemas are)."
            )
        flags = {"if_not_exists": bool(tree.args.get("exists")), "or_replace": bool(tree.args.get("replace"))}
        if tree.expression is not None:
            target = self.table_name(statement, tree.this)
            return self._query(statement, tree.expression, steps.Ctas(**flags), target=target)
        schema = tree.this
        if not isinstance(schema, exp.Schema):
            raise _fail(statement, "CREATE TABLE needs a column list or AS SELECT.")
        columns, refused = [], None
        for column in schema.expressions:
            if isinstance(column, exp.ColumnDef):
                columns.append(self._column_def(statement, column))
                refused = (
                    refused
                    or _constraint_duckdb_refuses(column.args.get("constraints") or [])
                    or _nested_default_refusal(column)
                )
            elif (table_refusal := _constraint_duckdb_refuses([column])) is not None:
                refused = refused or table_refusal
            else:
                raise _fail(statement, f"table constraint {column.sql(self.dialect)} is not supported by DuckLake.")
        return Step(
            statement.index,
            statement.text,
            steps.CreateTable(columns=tuple(columns), **flags),
            target=self.table_name(statement, schema.this),
            duckdb_error=refused,
        )

    def _create_view(self, statement: Statement, tree: exp.Create) -> Step:
        """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(aliases)] AS query``: a lake view DuckDB can read.

        The catalog keeps the query as DuckDB SQL with this script's lake alias written ``{DUCKLAKE_CATALOG}``
        (DuckDB's own spelling, so any attach name reads it); other names stay as written, and unqualified ones
        resolve in the view's schema when it is read, as in DuckDB."""
        if self.dialect != "duckdb":
            raise _fail(statement, "lake views hold DuckDB SQL: create them in a DuckDB-dialect script.")
        if tree.expression is None:
            raise _fail(statement, "CREATE VIEW needs AS SELECT.")
        name_node, aliases = tree.this, ()
        if isinstance(name_node, exp.Schema):
            aliases = tuple(c.name for c in name_node.expressions)
            name_node = name_node.this
        target = self.table_name(statement, name_node)
        for node, datatable in self._table_references(tree.expression):
            if datatable is not None:
                raise _fail(statement, "a lake view cannot read a Data Table (DuckDB could not resolve it).")
            if not (node.args.get("catalog") or node.args.get("db")) and node.name.lower() in self.temp_objects:
                raise _fail(statement, f"a lake view cannot read the script's temporary {node.name}.")
        details = steps.CreateView(
            sql=self._stored_view_sql(tree.expression),
            column_aliases=aliases,
            if_not_exists=bool(tree.args.get("exists")),
            or_replace=bool(tree.args.get("replace")),
        )
        return self._query(statement, tree.expression, details, target=target)

    def _stored_view_sql(self, query: exp.Expr) -> str:
        """``query`` as the catalog stores a view's: DuckDB SQL, each name this script's lake alias qualifies
        written with DuckDB's ``{DUCKLAKE_CATALOG}`` placeholder instead."""
        query = query.copy()
        sentinel = f"__lh_ducklake_catalog_{self.token}"
        ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
        for node in list(query.find_all(exp.Table)):
            if not isinstance(node.this, exp.Identifier) or (node.name.lower() in ctes and not node.args.get("db")):
                continue
            for part in ("catalog", "db"):
                qualifier = node.args.get(part)
                if isinstance(qualifier, exp.Identifier) and self.names.is_alias(qualifier.name):
                    node.set(part, exp.to_identifier(sentinel))
                    break
        return query.sql("duckdb").replace(sentinel, VIEW_CATALOG_PLACEHOLDER)

    def _temp(self, statement: Statement, tree: exp.Create, kind: type[steps.TempTable] | type[steps.TempView]) -> Step:
        name = tree.this.name if isinstance(tree.this, exp.Table) else ""
        if tree.expression is None or not name:
            raise _fail(statement, "temporary tables and views must be created AS SELECT.")
        view = self.temp_objects.get(name.lower()) or f"__temp_{_ident(name)}_{self.token}"
        step = self._query(
            statement, tree.expression, kind(name=name, or_replace=bool(tree.args.get("replace"))), target=view
        )
        self.temp_objects[name.lower()] = view
        return step

    def _insert(self, statement: Statement, tree: exp.Insert) -> Step:
        if tree.args.get("conflict") or tree.args.get("returning") or tree.args.get("alternative"):
            raise _fail(statement, "INSERT ... ON CONFLICT / OR REPLACE / RETURNING is not supported.")
        target = tree.this
        columns = None
        if isinstance(target, exp.Schema):
            columns = tuple(c.name for c in target.expressions)
            target = target.this
        source = tree.expression
        if source is None and tree.args.get("default") and columns is None:
            # INSERT INTO t DEFAULT VALUES: one row, every column its default, as (DEFAULT) by position is
            source = exp.Values(expressions=[exp.Tuple(expressions=[exp.Var(this="DEFAULT")])])
        if source is None:
            raise _fail(statement, "INSERT needs VALUES or a query.")
        by_kind: tuple[int, ...] = ()
        if isinstance(source, exp.Values):
            values, by_kind = values_by_kind(source, mixed_kinds=self.dialect == "duckdb")
            source = exp.select("*").from_(values.copy())
        by_name = bool(tree.args.get("by_name"))
        return self._query(
            statement,
            source,
            steps.Insert(columns=columns, by_name=by_name, overwrite=bool(tree.args.get("overwrite")), by_kind=by_kind),
            target=self.table_name(statement, target),
        )

    def _delete(self, statement: Statement, tree: exp.Delete) -> Step:
        if tree.args.get("returning"):
            raise _fail(statement, "DELETE ... RETURNING is not supported.")
        refs = _Refs(self, statement)
        view, target = refs.target(tree.this)
        where = tree.args.get("where")
        if tree.args.get("using"):
            query = self.spark_sql(self._rows_deleted_using(tree, view, refs))
        else:
            predicate = self.spark_sql(refs.rewrite(where.this)) if where else None
            query = f"SELECT rowid, __ducklake_file_id, __ducklake_file_pos FROM {view}"
            if predicate:
                query += f" WHERE {predicate}"
        return Step(statement.index, statement.text, steps.Delete(), query=query, target=target, **refs.step_fields())

    @staticmethod
    def _rows_deleted_using(tree: exp.Delete, view: str, refs: _Refs) -> exp.Select:
        """``DELETE FROM t USING u, v WHERE ...``: the rows of ``t`` the condition pairs with some row of the
        ``USING`` tables, each once however many it pairs with (as DuckDB deletes them)."""
        alias = tree.this.alias_or_name
        columns = [exp.column(c, table=alias) for c in ("rowid", "__ducklake_file_id", "__ducklake_file_pos")]
        select = exp.select(*columns).distinct().from_(exp.to_table(view).as_(alias))
        for source in tree.args["using"]:
            source = source.copy()
            joins = source.args.get("joins") or []
            source.set("joins", None)
            select = select.join(refs.rewrite(source), join_type="cross")
            for join in joins:
                select = select.join(refs.rewrite(join))
        where = tree.args.get("where")
        return select.where(refs.rewrite(where.this)) if where is not None else select

    def _truncatetable(self, statement: Statement, tree: exp.TruncateTable) -> Step:
        """``TRUNCATE [TABLE] t``: DuckDB's ``DELETE FROM t``."""
        if len(tree.expressions) != 1 or tree.args.get("is_database"):
            raise _fail(statement, "TRUNCATE one table per statement.")
        return self._delete(statement, exp.Delete(this=tree.expressions[0]))

    def _update(self, statement: Statement, tree: exp.Update) -> Step:
        if tree.args.get("returning"):
            raise _fail(statement, "UPDATE ... RETURNING is not supported.")
        refs = _Refs(self, statement)
        view, target = refs.target(tree.this)
        if any(is_default(assignment.expression) for assignment in tree.expressions):
            return Step(statement.index, statement.text, steps.Update(), target=target, duckdb_error=_UPDATE_DEFAULT)
        assignments: dict[str, str] = {}
        for assignment in tree.expressions:
            column = assignment.this
            assignments[column.name] = self.spark_sql(refs.rewrite(assignment.expression))
        select = exp.select(*[exp.column(c) for c in ("rowid", "__ducklake_file_id", "__ducklake_file_pos")])
        select = select.from_(exp.to_table(view).as_(tree.this.alias_or_name))
        source = tree.args.get("from_") or tree.args.get("from")
        if source is not None:
            select = select.join(refs.rewrite(source.this), join_type="cross")
            for join in source.args.get("joins") or []:
                select = select.join(refs.rewrite(join))
        where = tree.args.get("where")
        if where is not None:
            select = select.where(refs.rewrite(where.this))
        return Step(
            statement.index,
            statement.text,
            steps.Update(assignments=assignments, alias=tree.this.alias_or_name),
            query=self.spark_sql(select),
            target=target,
            **refs.step_fields(),
        )

    def _merge(self, statement: Statement, tree: exp.Merge) -> Step:
        refs = _Refs(self, statement)
        view, target = refs.target(tree.this)
        target_alias = tree.this.alias_or_name
        whens = tree.args.get("whens")
        updates = [w.args.get("then") for w in (whens.expressions if whens is not None else [])]
        if any(isinstance(u, exp.Update) and any(is_default(a.expression) for a in u.expressions) for u in updates):
            return Step(statement.index, statement.text, steps.Merge(), target=target, duckdb_error=_UPDATE_DEFAULT)
        using = refs.rewrite(tree.args["using"])
        on = self.spark_sql(refs.rewrite(tree.args["on"]))
        clauses = []
        for when in whens.expressions if whens is not None else []:
            matched = bool(when.args.get("matched"))
            source_side = bool(when.args.get("source"))
            condition = when.args.get("condition")
            action = when.args.get("then")
            when_sql = self.spark_sql(refs.rewrite(condition)) if condition else None
            clause: MergeClause
            if isinstance(action, exp.Update):
                given = action.expressions or []  # a bare UPDATE has none
                stars = [a for a in given if isinstance(a, exp.Star)]
                if stars and len(stars) != len(given):
                    raise _fail(statement, "MERGE ... UPDATE SET * cannot be combined with other assignments.")
                whole = merge_whole_source(action)  # bare, SET *, BY POSITION / BY NAME: the source's columns
                assignments = {} if whole else {a.this.name: self.spark_sql(refs.rewrite(a.expression)) for a in given}
                clause = MergeClause(
                    matched, "update", when_sql, assignments=assignments, star=bool(whole), by_name=whole == "name"
                )
                if clause.star:
                    refs.read_all_columns()
            elif isinstance(action, exp.Insert):
                cols = action.this
                columns = (
                    tuple(c.name for c in cols.expressions)
                    if isinstance(cols, exp.Tuple)
                    else ((cols.name,) if isinstance(cols, exp.Column) else None)
                )
                values = action.expression
                inserted: tuple[str, ...] | None
                whole = merge_whole_source(action)
                if whole:  # INSERT * / bare / BY POSITION: the source's columns by position; BY NAME: by name
                    inserted, columns = None, None
                    refs.read_all_columns()
                else:
                    inserted = tuple(
                        DEFAULT_VALUE if is_default(v) else self.spark_sql(refs.rewrite(v))
                        for v in (values.expressions if isinstance(values, exp.Tuple) else [values])
                    )
                clause = MergeClause(
                    matched, "insert", when_sql, columns=columns, values=inserted, by_name=whole == "name"
                )
            elif isinstance(action, exp.Var) and action.name.upper() == "DELETE":
                clause = MergeClause(matched, "delete", when_sql)
            elif action is not None and action.sql().upper() in ("DELETE", "DO NOTHING"):
                clause = MergeClause(matched, "delete" if action.sql().upper() == "DELETE" else "nothing", when_sql)
            else:
                raise _fail(statement, f"MERGE action {action.sql(self.dialect) if action else '?'} is not supported.")
            if source_side:
                if clause.action == "insert" or clause.star:
                    raise _fail(statement, "WHEN NOT MATCHED BY SOURCE takes UPDATE SET, DELETE or DO NOTHING.")
                clause = replace(clause, by_source=True)
            clauses.append(clause)
        changes = [c for c in clauses if c.action in ("update", "delete") and (c.matched or c.by_source)]
        if len(changes) > 1:
            return Step(statement.index, statement.text, steps.Merge(), target=target, duckdb_error=_ONE_MERGE_CHANGE)
        source_alias = using.alias_or_name
        return Step(
            statement.index,
            statement.text,
            steps.Merge(
                on=on,
                clauses=tuple(clauses),
                target_alias=target_alias,
                source_alias=source_alias,
                source_is_query=isinstance(using, exp.Subquery),
                target_view=view,
            ),
            target=target,
            query=self.spark_sql(using),
            **refs.step_fields(),
        )

    def _drop(self, statement: Statement, tree: exp.Drop) -> Step:
        kind = str(tree.args.get("kind") or "").upper()
        if_exists = bool(tree.args.get("exists"))
        targets = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        if len(targets) != 1:
            raise _fail(statement, "DROP one object per statement.")
        (table,) = targets
        if kind == "SCHEMA":
            return Step(
                statement.index,
                statement.text,
                steps.DropSchema(if_exists=if_exists),
                target=self._schema_name(statement, table),
            )
        if kind not in ("TABLE", "VIEW"):
            raise _fail(statement, f"DROP {kind} is not supported.")
        if table.name.lower() in self.temp_objects and not table.args.get("db"):
            view = self.temp_objects.pop(table.name.lower())
            return Step(
                statement.index,
                statement.text,
                steps.DropTemp(name=table.name, if_exists=if_exists),
                target=view,
            )
        if kind == "VIEW":
            return Step(
                statement.index,
                statement.text,
                steps.DropView(if_exists=if_exists),
                target=self.table_name(statement, table),
            )
        return Step(
            statement.index,
            statement.text,
            steps.DropTable(if_exists=if_exists),
            target=self.table_name(statement, table),
        )

    def _alter(self, statement: Statement, tree: exp.Alter) -> Step:
        if str(tree.args.get("kind") or "").upper() != "TABLE" or len(tree.args.get("actions") or []) != 1:
            raise _fail(statement, "ALTER TABLE takes exactly one action here.")
        target = self.table_name(statement, tree.this)
        (action,) = tree.args["actions"]
        details: StepDetails
        refused = None  # DuckDB fails the statement when it runs: so does the driver, keeping what ran before
        if isinstance(action, exp.ColumnDef):
            # DuckDB refuses an added column's non-literal default when the statement runs (_default_duckdb_refuses)
            definition = self._column_def(statement, action, refuse_expressions=False)
            refused = _constraint_duckdb_refuses(action.args.get("constraints") or []) or _default_duckdb_refuses(
                action
            )
            details = steps.AddColumn(definition, if_not_exists=bool(action.args.get("exists")))
        elif isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "COLUMN":
            (dropped,) = action.args.get("tables") or [action.this]
            details = steps.DropColumn(dropped.name, if_exists=bool(action.args.get("exists")))
        elif isinstance(action, exp.RenameColumn):
            details = steps.RenameColumn(action.this.name, action.args["to"].name)
        elif isinstance(action, exp.AlterRename):
            details = steps.RenameTable(action.this.name)
        elif isinstance(action, exp.AlterSet) and (spec := action.find(exp.PartitionedByProperty)) is not None:
            details = self._partitioned_by(statement, spec)
        elif isinstance(action, exp.AlterColumn):
            return self._alter_column(statement, tree, action)
        else:
            raise _fail(
                statement,
                f"ALTER TABLE ... {action.sql(self.dialect)} is not supported "
                "(ADD/DROP/RENAME COLUMN, ALTER COLUMN TYPE / SET|DROP DEFAULT / SET|DROP NOT NULL, RENAME TO and "
                "SET/RESET PARTITIONED BY and SET/RESET SORTED BY are).",
            )
        return Step(statement.index, statement.text, details, target=target, duckdb_error=refused)

    def _alter_column(self, statement: Statement, tree: exp.Alter, action: exp.AlterColumn) -> Step:
        """``ALTER COLUMN``: a new type, a default set or dropped, ``NOT NULL`` set or dropped. What DuckDB decides
        from the column as it stands (a narrowing type, an existing constraint) the driver decides when the
        statement runs; what the statement alone shows fails then too, as DuckDB fails it."""
        column = action.this.name
        refused = None
        target = self.table_name(statement, tree.this)
        fields: dict[str, Any] = {}
        details: StepDetails
        if action.args.get("dtype") is not None:
            dtype = action.args["dtype"]
            _check_type(statement, column, dtype)
            if action.args.get("using"):
                refused = "Not implemented Error: Column type cannot be modified using an expression"
            details = steps.ChangeColumnType(column, dtype.sql("duckdb"))
        elif action.args.get("allow_null") is not None:
            nullable = bool(action.args["allow_null"])
            details = steps.SetColumnNullable(column, nullable)
            if not nullable:  # the step's query counts the NULLs DuckDB refuses to find
                refs = _Refs(self, statement)
                view, _ = refs.target(tree.this)
                nulls = exp.select(exp.alias_(exp.Count(this=exp.Star()), "nulls")).from_(exp.to_table(view))
                nulls = nulls.where(exp.Is(this=exp.column(column, quoted=True), expression=exp.Null()))
                fields = {"query": self.spark_sql(nulls), **refs.step_fields()}
        elif "default" in action.args or action.args.get("drop"):
            value = action.args.get("default")
            while isinstance(value, exp.Paren):
                value = value.this
            if value is not None and (isinstance(value, exp.Array) or not _constant_default(value)):
                details = steps.SetColumnDefault(column, expression=value.sql("duckdb"))
            else:
                details = steps.SetColumnDefault(column, _default_literal(value))
        else:
            raise _fail(statement, f"ALTER TABLE ... {action.sql(self.dialect)} is not supported.")
        return Step(statement.index, statement.text, details, target=target, duckdb_error=refused, **fields)

    def _sorted_by(self, statement: Statement, text: str) -> Step | None:
        """DuckLake's ``SET``/``RESET SORTED BY``, which sqlglot does not parse (see :mod:`.sorted_by`); None for
        any other statement."""
        try:
            parsed = parse_sorted_by(text)
        except SortedBySyntaxError as exc:
            raise _fail(statement, str(exc)) from None
        if parsed is None:
            return None
        try:
            table = exp.to_table(parsed.table, dialect="duckdb")
        except sqlglot.errors.ParseError:
            raise _fail(statement, f"expected a table name, got {parsed.table}.") from None
        details = steps.SetSortedBy(
            expressions=tuple(k.expression for k in parsed.keys),
            descending=tuple(k.descending for k in parsed.keys),
            nulls_first=tuple(k.nulls_first for k in parsed.keys),
            columns=parsed.columns,
            if_exists=parsed.if_exists,
        )
        refused = self._write_to_read_only(exp.Alter(this=table, kind="TABLE"), False) or parsed.error
        return Step(
            statement.index,
            statement.text,
            details,
            target=self.table_name(statement, table),
            duckdb_error=refused,
        )

    def _partitioned_by(self, statement: Statement, spec: exp.PartitionedByProperty) -> steps.SetPartitionedBy:
        """DuckLake's partition keys: ``col``, ``year|month|day|hour(col)``, ``bucket(N, col)``."""
        columns, transforms = [], []
        keys = spec.this.expressions if isinstance(spec.this, exp.Schema) else [spec.this]
        for key in keys:
            if isinstance(key, (exp.Identifier, exp.Column)):
                columns.append(key.name)
                transforms.append("identity")
            elif isinstance(key, exp.PartitionedByBucket) and isinstance(key.expression, exp.Literal):
                columns.append(key.this.name)
                transforms.append(f"bucket({int(key.expression.name)})")
            elif (
                isinstance(key, exp.Func)
                and isinstance(key.this, exp.Column)
                and key.sql_name().lower()
                in (
                    "year",
                    "month",
                    "day",
                    "hour",
                )
            ):
                columns.append(key.this.name)
                transforms.append(key.sql_name().lower())
            else:
                raise _fail(
                    statement,
                    f"partition key {key.sql(self.dialect)} is not supported "
                    "(a column, year/month/day/hour(column) or bucket(N, column) is).",
                )
        return steps.SetPartitionedBy(tuple(columns), tuple(transforms))

    def _copy(self, statement: Statement, tree: exp.Copy) -> Step:
        if tree.args.get("kind") is not False and tree.args.get("kind") is not None:
            raise _fail(
                statement, "COPY ... FROM is not supported; use INSERT INTO ... SELECT * FROM read_parquet(...)."
            )
        files = tree.args.get("files") or []
        if len(files) != 1 or not isinstance(files[0], exp.Literal):
            raise _fail(statement, "COPY needs exactly one target file: COPY (query) TO 's3://bucket/key'.")
        path = files[0].name
        options = {}
        for param in tree.args.get("params") or []:
            value = param.args.get("expression")
            options[param.this.name.lower()] = _literal(value) if value is not None else True
        fmt = str(options.pop("format", "") or "").lower()
        if not fmt:
            fmt, implied = _spark_file_format(statement, file_path(path) or FilePath(path))
            options = {**implied, **options}
        if fmt not in ("parquet", "csv"):
            raise _fail(statement, f"COPY TO format {fmt!r} is not supported (parquet and csv are).")
        source = tree.this
        if isinstance(source, exp.Subquery):
            source = source.this
        elif isinstance(source, exp.Table):
            source = exp.select("*").from_(source)
        return self._query(statement, source, steps.Copy(format=fmt, options=options), target=path)

    def _call(self, statement: Statement, tree: exp.Expr) -> Step:
        call = tree.expressions[0] if isinstance(tree, exp.Select) else tree
        name = call.name.lower() if isinstance(call, exp.Anonymous) else ""
        if name not in MAINTENANCE_CALLS:
            raise _fail(statement, f"CALL {name or '?'}: only {', '.join(MAINTENANCE_CALLS)} are supported.")
        positional: list[Any] = []
        named: dict[str, str] = {}
        for arg in call.expressions:
            if isinstance(arg, (exp.Kwarg, exp.PropertyEQ, exp.EQ)):
                named[arg.this.name.lower()] = self.spark_sql(arg.expression)
            else:
                positional.append(_literal(arg))
        catalog, rest = (positional[0], positional[1:]) if positional else (None, [])
        if (
            self.names.aliases
            and catalog is not None
            and not self.names.is_alias(str(catalog))
            and catalog != self.lake
        ):
            raise _fail(statement, f"{name}({catalog!r}): that is not the attached lake.")
        return Step(statement.index, statement.text, steps.Call(positional=tuple(rest), named=named), target=name)

    # -- helpers -----------------------------------------------------------------------------
    def _column_def(self, statement: Statement, column: exp.ColumnDef, *, refuse_expressions: bool = True) -> ColumnDef:
        kind = column.args.get("kind")
        if kind is None:
            raise _fail(statement, f"column {column.name!r} has no type.")
        _check_type(statement, column.name, kind)
        nullable, default = True, None
        for constraint in column.args.get("constraints") or []:
            inner = constraint.args.get("kind")
            if isinstance(inner, exp.NotNullColumnConstraint) and not inner.args.get("allow_null"):
                nullable = False
            elif isinstance(inner, exp.DefaultColumnConstraint):
                # a nested column's default is refused when the statement runs (_nested_default_refusal)
                if refuse_expressions and not _constant_default(inner.this) and not _is_nested(kind):
                    # stored as its text, it would have been the rows' value ('CAST(5 AS TEXT)' in a VARCHAR)
                    raise _fail(
                        statement,
                        f"the default {inner.this.sql('duckdb')} of column {column.name!r} is not a constant: the "
                        'Spark engine takes a constant default (DuckDB\'s engine="duckdb" takes this one).',
                    )
                default = _default_literal(inner.this)
            elif _constraint_duckdb_refuses([constraint]) is None:
                raise _fail(
                    statement, f"column constraint {constraint.sql(self.dialect)} is not supported by DuckLake."
                )
        return ColumnDef(column.name, kind.sql("duckdb"), nullable, default)

    def table_name(self, statement: Statement, table: exp.Expr) -> str:
        """The lake table ``table`` names, resolved in the script's current scope (raises for anything else)."""
        if not isinstance(table, exp.Table):
            raise _fail(statement, f"expected a table name, got {table.sql(self.dialect)}.")
        name = self.names.table(table.catalog or None, table.db or None, table.name)
        if name.catalog is not None:
            raise _fail(
                statement, f"unknown catalog {name.catalog!r} (ATTACH 'ducklake://NAME' AS {name.catalog} first)."
            )
        return name.qualified

    def _schema_name(self, statement: Statement, node: exp.Expr) -> str:
        if isinstance(node, exp.Table):
            parts = [p.name for p in node.parts]
            if len(parts) == 2 and self.names.is_alias(parts[0]):
                return parts[1]
            if len(parts) == 1:
                return parts[0]
        raise _fail(statement, f"expected a schema name, got {node.sql(self.dialect)}.")

    def _write_to_read_only(self, tree: exp.Expr, is_call: bool) -> str | None:
        """Why a statement that writes through an alias attached ``(READ_ONLY)`` fails, as in DuckDB (a table
        written, a schema created or dropped, a maintenance CALL on it); None for any other statement."""
        if not self.read_only:
            return None
        parts: list[str] = []
        node = _write_target(tree)
        kind = str(tree.args.get("kind") or "").upper() if isinstance(tree, (exp.Create, exp.Drop)) else ""
        if node is not None:
            parts = [p.name for p in node.parts][:-1]
        elif kind == "SCHEMA" and isinstance(tree.this, exp.Table):
            parts = [p.name for p in tree.this.parts][:-1]
        elif is_call:
            call = tree.expressions[0] if isinstance(tree, exp.Select) and tree.expressions else tree
            first = next(iter(call.expressions), None) if isinstance(call, exp.Anonymous) else None
            parts = [first.name] if isinstance(first, exp.Literal) else []
        else:
            return None
        alias = next((p for p in parts if self.names.is_alias(p)), None) or self.names.used_alias
        if alias is None and len(self.names.aliases) == 1:
            alias = next(iter(self.names.aliases))  # the only attached store
        if alias is not None and alias.lower() in self.read_only:
            return f"{alias} is attached READ_ONLY; it cannot be written."
        return None

    # -- Data Tables ------------------------------------------------------------------------------
    def datatable_table(self, node: exp.Table) -> TableName | None:
        """What ``node`` names when it is a table of an attached Data Table, else None. Unquoted names are folded
        to lower case, as Postgres folds them (DuckDB's postgres extension finds ``dt.MyTable`` as mytable)."""
        if not isinstance(node.this, exp.Identifier) or file_reference(node) is not None:
            return None
        name = self.names.table(node.catalog or None, node.db or None, node.name)
        if name.catalog is not None or name.store not in self.datatable_stores:
            return None
        db = node.args.get("db")
        unquoted_schema = isinstance(db, exp.Identifier) and not db.quoted and not self.names.is_alias(db.name)
        schema = name.schema.lower() if unquoted_schema else name.schema
        table = name.table if node.this.quoted else name.table.lower()
        return TableName(schema, table, name.store)

    def datatable_ref(self, name: TableName) -> DataTableRef:
        """The view a Data Table table is registered as: one per table and script, so every engine and every
        rewrite of a statement name it alike."""
        store = self.datatable_stores[name.store or ""]
        view = f"__datatable_{_ident(store.name)}__{_ident(name.schema)}__{_ident(name.table)}_{self.token}"
        return DataTableRef(view=view, datatable=store.name, schema=name.schema, table=name.table)

    def _table_references(self, tree: exp.Expr) -> list[tuple[exp.Table, TableName | None]]:
        """Every table reference of ``tree`` but a CTE's name, with the Data Table table it names (or None)."""
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        return [
            (node, self.datatable_table(node))
            for node in tree.find_all(exp.Table)
            if node.args.get("catalog") or node.args.get("db") or node.name.lower() not in ctes
        ]

    def duckdb_text(self, tree: exp.Expr) -> str:
        """``tree`` as DuckDB SQL with each Data Table table replaced by its view (lake names stay as written)."""
        tree = tree.copy()
        for node, name in self._table_references(tree):
            if name is None:
                continue
            alias = node.args.get("alias")
            replacement = exp.to_table(self.datatable_ref(name).view).as_(alias.name if alias else node.name)
            if node is tree:
                return replacement.sql("duckdb")
            node.replace(replacement)
        return tree.sql("duckdb")

    def _datatable_change(self, statement: Statement, tree: exp.Expr) -> Step | None:
        """The step of a statement that changes an attached Data Table; None when it changes none."""
        schema_change = self._datatable_schema_change(statement, tree)
        if schema_change is not None:
            return schema_change
        node = _write_target(tree)
        name = self.datatable_table(node) if node is not None else None
        if name is None:
            return None
        store = self.datatable_stores[name.store or ""]
        uri = self.datatable_ref(name).uri
        create_schema = name.schema if name.schema in self.datatable_schemas else None
        if isinstance(tree, exp.Insert):
            if tree.args.get("conflict") or tree.args.get("returning") or tree.args.get("alternative"):
                raise _fail(
                    statement, "INSERT ... ON CONFLICT / OR REPLACE / RETURNING into a Data Table is not supported."
                )
            if tree.args.get("overwrite"):
                raise _fail(statement, "INSERT OVERWRITE into a Data Table is not supported; DELETE, then INSERT.")
            target = tree.this
            columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else None
            source = tree.expression
            if source is None:
                raise _fail(statement, "INSERT needs VALUES or a query (DEFAULT VALUES: not into a Data Table here).")
            if isinstance(source, exp.Values):
                if any(is_default(cell) for row in source.expressions for cell in row.expressions):
                    raise _fail(
                        statement,
                        "DEFAULT in the VALUES of an INSERT into a Data Table is not supported on the Spark engine: "
                        "leave the column out of the INSERT's column list for its default.",
                    )
                source = exp.select("*").from_(source.copy())
            details: StepDetails = steps.DataTableInsert(
                datatable=store.name,
                create_schema=create_schema,
                schema=name.schema,
                table=name.table,
                columns=columns,
                by_name=bool(tree.args.get("by_name")),
            )
            step = self._query(statement, source, details, target=uri)
            return replace(step, duckdb_text=self.duckdb_text(source))
        if isinstance(tree, exp.Create) and tree.expression is not None:
            details = steps.DataTableCtas(
                datatable=store.name,
                create_schema=create_schema,
                schema=name.schema,
                table=name.table,
                if_not_exists=bool(tree.args.get("exists")),
                or_replace=bool(tree.args.get("replace")),
            )
            step = self._query(statement, tree.expression, details, target=uri)
            return replace(step, duckdb_text=self.duckdb_text(tree.expression))
        sql, parameters = self._postgres_sql(statement, tree, store)
        return Step(
            statement.index,
            statement.text,
            steps.DataTableSql(
                datatable=store.name,
                create_schema=create_schema,
                sql=sql,
                parameters=parameters,
                statement_kind=_change_kind(tree),
            ),
            target=uri,
            parameters=parameters,
        )

    def _datatable_schema_change(self, statement: Statement, tree: exp.Expr) -> Step | None:
        """``CREATE SCHEMA dt.s`` / ``DROP SCHEMA dt.s`` of an attached Data Table."""
        kind = str(tree.args.get("kind") or "").upper() if isinstance(tree, (exp.Create, exp.Drop)) else ""
        node = tree.this if kind == "SCHEMA" else None
        if not isinstance(node, exp.Table):
            return None
        parts = [p.name for p in node.parts]
        store_uri = self.names.aliases.get(parts[0].lower()) if len(parts) == 2 else None
        if store_uri not in self.datatable_stores:
            return None
        store = self.datatable_stores[store_uri or ""]
        exists = " IF NOT EXISTS" if isinstance(tree, exp.Create) else " IF EXISTS"
        verb = "CREATE" if isinstance(tree, exp.Create) else "DROP"
        sql = f"{verb} SCHEMA{exists if tree.args.get('exists') else ''} {exp.to_identifier(parts[1]).sql('postgres')}"
        if isinstance(tree, exp.Drop) and tree.args.get("cascade"):
            sql += " CASCADE"
        return Step(
            statement.index,
            statement.text,
            steps.DataTableSql(datatable=store.name, sql=sql, statement_kind=f"{verb.lower()}_schema"),
            target=f"datatable://{store.name.lower()}/{parts[1]}",
        )

    def _postgres_sql(self, statement: Statement, tree: exp.Expr, store: StoreRef) -> tuple[str, tuple[str, ...]]:
        """A change to a Data Table that reads nothing else, as Postgres SQL with ``%(name)s`` parameters."""
        tree = tree.copy()
        for node, name in self._table_references(tree):
            if name is None or name.store != store.uri:
                raise _fail(
                    statement,
                    f"it changes Data Table {store.name!r} and reads {node.sql(self.dialect)}, which is not in it. "
                    "DELETE, UPDATE, MERGE and DDL on a Data Table run in Postgres and read only that Data "
                    "Table; copy other rows into it first (INSERT INTO dt.staging SELECT ...).",
                )
            node.set("catalog", None)
            node.set("db", exp.to_identifier(name.schema, quoted=True))  # resolved: the exact name
        parameters: list[str] = []
        for placeholder in list(tree.find_all(exp.Placeholder)):
            if not placeholder.name:
                raise _fail(statement, "'?' placeholders are not supported; use $1 or $name.")
            key = _param_name(placeholder.name)
            parameters.append(key)
            placeholder.replace(exp.Placeholder(this=key))
        try:
            sql = tree.sql("postgres", unsupported_level=sqlglot.ErrorLevel.RAISE)
        except Exception as exc:  # sqlglot names what Postgres has no spelling for
            raise _fail(statement, f"Postgres cannot run it: {_first_line(exc)}") from None
        if parameters:  # psycopg reads % as a placeholder: a literal one is written %%
            keys = "|".join(re.escape(k) for k in dict.fromkeys(parameters))
            sql = re.sub(rf"%(?!\((?:{keys})\)s)", "%%", sql)
        return sql, tuple(sorted(set(parameters)))

    def next_view(self, prefix: str) -> str:
        self._view_counter += 1
        return f"{prefix}{self._view_counter}_{self.token}"

    def spark_sql(self, tree: exp.Expr) -> str:
        """``tree`` as Spark SQL text, with DuckDB's semantics kept when the script is DuckDB SQL."""
        tree = inline_named_windows(tree.copy())  # OVER w as w's definition, before windows are rewritten one by one
        tree = window_filters_for_spark(tree)  # DISTINCT ON and QUALIFY, ordered and limited as DuckDB does
        if self.dialect == "duckdb":
            tree = pivot_counts_for_spark(tree)  # a PIVOT's count of no rows is 0
            tree = list_lambdas_for_spark(tree)  # [f(x) FOR x IN l], and positions counted from 1
            tree = zipped_unnests(tree)  # unnest(a), unnest(b) side by side, not multiplied
            tree = mark_moved_indexes(tree)  # before the casts in l[i] become markers of unknown type
            tree = typed_text_in_values(tree)  # VALUES (DATE '2021-02-03'), ('2020-01-01') is a DATE column
            tree = duckdb_semantics(tree)  # DuckDB's casts and arithmetic (see .semantics)
            tree = duckdb_functions(tree)  # DuckDB's functions Spark names alike but computes differently
            tree = duckdb_literal_types(_duckdb_functions_for_spark(tree), MARKERS)  # 0.5 is DECIMAL(2, 1)
            return spark_text(arithmetic_markers(tree), duckdb_operators=True)
        return spark_text(_duckdb_functions_for_spark(tree))


def named_like_duckdb(query: exp.Expr, source: str) -> exp.Expr:
    """``query`` with each item of its outermost SELECT (the first of a set operation) that has no name of its
    own aliased with the name DuckDB gives it in ``source`` (see :mod:`~airflow_provider_lakehouse.sql.duckdb_names`);
    unchanged where DuckDB is not installed or its items do not line up with sqlglot's."""
    select = query
    while isinstance(select, exp.SetOperation):
        select = select.this
    if not isinstance(select, exp.Select):
        return query
    names = output_names(source)
    if names is None or len(names) != len(select.expressions):
        return query
    for item, name in zip(list(select.expressions), names, strict=True):
        if name == "*" or isinstance(item, (exp.Alias, exp.Column, exp.Star)):
            continue
        item.replace(exp.alias_(item.copy(), name, quoted=True))
    return query


#: window functions Spark runs only over an ordered window, DuckDB over any
_ORDERED_WINDOW_FUNCTIONS = (
    exp.RowNumber,
    exp.Rank,
    exp.DenseRank,
    exp.PercentRank,
    exp.CumeDist,
    exp.Ntile,
    exp.Lag,
    exp.Lead,
)


def _duckdb_functions_for_spark(tree: exp.Expr) -> exp.Expr:
    """DuckDB functions sqlglot leaves as they are but Spark names differently: ``error(msg)`` (a failing
    check, e.g. ``CASE WHEN bad THEN error('...') END``) is Spark's ``raise_error(msg)``, and a map literal
    ``MAP {k: v}`` is ``map(k, v)``; and what DuckDB takes that Spark's parser or analyzer refuses: a filtered
    ``any_value``, a ``MATERIALIZED`` CTE, a ranking or offset window function without ``ORDER BY``."""

    def rename(node: exp.Expr) -> exp.Expr:
        if (
            isinstance(node, exp.IgnoreNulls)
            and isinstance(node.this, exp.AnyValue)
            and isinstance(node.parent, exp.Filter)
        ):
            # DuckDB's any_value skips NULLs: Spark's ANY_VALUE(x, TRUE), which takes a FILTER after it (sqlglot's
            # ANY_VALUE(x) IGNORE NULLS FILTER (...) does not parse in Spark)
            return exp.Anonymous(this="ANY_VALUE", expressions=[node.this.this.copy(), exp.true()])
        if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
            node.set("materialized", None)  # WITH b AS MATERIALIZED (...): a hint DuckDB takes, Spark cannot parse
            return node
        if (
            isinstance(node, exp.Window)
            and isinstance(node.this, _ORDERED_WINDOW_FUNCTIONS)
            and not node.args.get("order")
        ):
            # DuckDB numbers rows in their order without ORDER BY (row_number() OVER ()); Spark requires one
            node.set("order", exp.Order(expressions=[exp.Ordered(this=exp.Literal.number(1))]))
            return node
        if isinstance(node, exp.Anonymous) and node.name.lower() == "error":
            return exp.Anonymous(this="raise_error", expressions=node.expressions)
        if isinstance(node, exp.ToMap) and isinstance(node.this, exp.Struct):
            # DuckDB's map literal MAP {k: v, ...}: Spark's map(k, v, ...) (sqlglot writes MAP STRUCT(v AS k))
            pairs = [part for entry in node.this.expressions for part in (entry.this, entry.expression)]
            return exp.Anonymous(this="map", expressions=pairs)
        return node

    return tree.transform(rename)


class _Refs:
    """Rewrites one statement's table references into view names, collecting what each view must hold."""

    def __init__(self, planner: _Planner, statement: Statement) -> None:
        self.planner = planner
        self.statement = statement
        self.tables: dict[str, TableRef] = {}
        self.files: list[FileRef] = []
        self.catalog: list[CatalogRef] = []
        self.datatables: dict[str, DataTableRef] = {}
        self.params: dict[str, None] = {}
        self._ctes: set[str] = set()
        self._star = False
        self._columns: set[str] = set()

    def read_all_columns(self) -> None:
        """The statement reads every column of its tables though it names none (MERGE's ``UPDATE SET *`` and
        ``INSERT *`` take the source's columns by name)."""
        self._star = True

    def step_fields(self) -> dict[str, Any]:
        tables = []
        for ref in self.tables.values():
            columns = None if (self._star or ref.row_ids) else tuple(sorted(self._columns))
            tables.append(TableRef(**{**asdict(ref), "columns": columns}))
        return {
            "tables": tuple(tables),
            "files": tuple(self.files),
            "catalog": tuple(self.catalog),
            "parameters": tuple(self.params),
            "datatables": tuple(self.datatables.values()),
        }

    def target(self, table: exp.Expr) -> tuple[str, str]:
        """The DML target: registered with row ids, every column."""
        name = self.planner.table_name(self.statement, table)
        schema, _, table_name = name.partition(".")
        view = f"__lake_{_ident(schema)}__{_ident(table_name)}__rowids_{self.planner.token}"
        self.tables[view] = TableRef(view=view, schema=schema, table=table_name, row_ids=True)
        return view, name

    def rewrite(self, tree: exp.Expr) -> exp.Expr:
        tree = tree.copy()
        self._ctes |= {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for placeholder in list(tree.find_all(exp.Placeholder)):
            key = placeholder.name
            if not key:
                raise _fail(self.statement, "'?' placeholders are not supported; use $1 or $name.")
            name = _param_name(key)
            self.params[name] = None
            placeholder.replace(exp.Placeholder(this=name))
        for star in tree.find_all(exp.Star):
            if not isinstance(star.parent, exp.Count):
                self._star = True
        if tree.find(exp.Columns):  # COLUMNS('regex'): the driver picks them from all columns (.star_expressions)
            self._star = True
        for column in tree.find_all(exp.Column):
            if isinstance(column.this, exp.Star):
                self._star = True
            else:
                # every part: in DuckDB's ``st.k`` (and ``t.st.k``) the qualifier may be a STRUCT column, not a
                # table; reading a column whose name only equals an alias costs a column, never a wrong answer
                self._columns |= {part.name.lower() for part in column.parts}
        for join in tree.find_all(exp.Join):
            # USING names its columns as identifiers, not column references; NATURAL joins on every shared name
            self._columns |= {key.name.lower() for key in join.args.get("using") or ()}
            if str(join.args.get("method") or "").upper() == "NATURAL":
                self._star = True
        for table in list(tree.find_all(exp.Table)):
            replacement = self._table(table)
            if replacement is not None:
                if isinstance(replacement, exp.Table) and table.args.get("pivots"):
                    # FROM t PIVOT (...) / UNPIVOT (...): the view keeps the table's pivots (they were dropped,
                    # and the query read the table as it is)
                    replacement.set("pivots", [pivot.copy() for pivot in table.args["pivots"]])
                if table is tree:
                    tree = replacement
                else:
                    table.replace(replacement)
        return tree

    def _table(self, node: exp.Table) -> exp.Expr | None:
        inner = node.this
        alias = node.args.get("alias")
        if isinstance(inner, (exp.ReadParquet, exp.ReadCSV)) or (
            isinstance(inner, exp.Anonymous) and inner.name.lower() in ("read_parquet", "read_csv", "read_csv_auto")
        ):
            return self._file_function(node, inner)
        if isinstance(inner, exp.Anonymous) and inner.name.lower() in CATALOG_FUNCTIONS:
            view = self.planner.next_view("__lake_catalog_")
            self.catalog.append(
                CatalogRef(view=view, function=inner.name.lower(), args=tuple(_literal(a) for a in inner.expressions))
            )
            return exp.to_table(view).as_(alias.name if alias else inner.name.lower())
        if isinstance(inner, exp.Anonymous) and inner.name.lower() == "json_each":
            return self._json_each(node, inner)
        if isinstance(inner, (exp.GenerateSeries, exp.Anonymous)) and inner.sql("duckdb").lower().startswith(
            ("range(", "generate_series(")
        ):
            return self._series(node, inner)
        if isinstance(inner, (exp.Func, exp.Anonymous)) or not isinstance(inner, exp.Identifier):
            name = inner.sql(self.planner.dialect) if inner is not None else "?"
            raise _fail(self.statement, f"table function {name} is not supported.")
        file = file_reference(node)
        if file is not None:
            fmt, options = _spark_file_format(self.statement, file)
            return self._file_view(node, (file.path,), fmt, options)
        catalog, db = node.args.get("catalog"), node.args.get("db")
        if catalog is None and db is None and inner.name.lower() in self._ctes:
            return None
        if catalog is None and db is None and inner.name.lower() in self.planner.temp_objects:
            alias = node.args.get("alias")
            return exp.to_table(self.planner.temp_objects[inner.name.lower()]).as_(alias.name if alias else inner.name)
        datatable = self.planner.datatable_table(node)
        if datatable is not None:
            if node.args.get("when") is not None:
                raise _fail(self.statement, "time travel (AT ...) reads lake tables; a Data Table has one version.")
            ref = self.planner.datatable_ref(datatable)
            self.datatables[ref.view] = ref
            return exp.to_table(ref.view).as_(alias.name if alias else inner.name)
        name = self.planner.table_name(self.statement, node)
        schema, _, table = name.partition(".")
        version: int | str | None = None
        timestamp_sql = None
        when = node.args.get("when")
        if when is not None:
            kind = str(when.args.get("kind") or "").upper()
            value = when.expression
            if kind == "VERSION":
                if isinstance(value, exp.Placeholder):
                    version = f":{_param_name(value.name)}"
                    self.params[_param_name(value.name)] = None
                else:
                    version = int(_literal(value))
            elif kind == "TIMESTAMP":
                timestamp_sql = self.rewrite_scalar(value)
            else:
                raise _fail(self.statement, f"time travel AT ({kind} => ...) is not supported.")
        # One view per occurrence: Spark keeps one pushed-down filter set per data source relation, so two
        # references sharing a relation could prune files with each other's filters.
        suffix = (
            f"__v{version}" if isinstance(version, int) else ("__at" if version is not None or timestamp_sql else "")
        )
        view = self.planner.next_view(f"__lake_{_ident(schema)}__{_ident(table)}{suffix}_")
        self.tables[view] = TableRef(
            view=view,
            schema=schema,
            table=table,
            version=version,
            timestamp_sql=timestamp_sql,
            predicates=_predicates_for(node, alias.name if alias else table),
        )
        return exp.to_table(view).as_(alias.name if alias else table)

    def rewrite_scalar(self, value: exp.Expr) -> str:
        return self.planner.spark_sql(self.rewrite(value))

    def _file_function(self, node: exp.Table, func: exp.Expr) -> exp.Expr:
        args = ([func.this] if func.this is not None and not isinstance(func, exp.Anonymous) else []) + list(
            func.expressions
        )
        paths: list[str] = []
        options: dict[str, Any] = {}
        for arg in args:
            if isinstance(arg, (exp.EQ, exp.Kwarg, exp.PropertyEQ)):
                options[arg.this.name.lower()] = _literal(arg.expression)
            elif isinstance(arg, exp.Array):
                paths += [str(_literal(a)) for a in arg.expressions]
            else:
                paths.append(str(_literal(arg)))
        is_parquet = isinstance(func, exp.ReadParquet) or func.name.lower() == "read_parquet"
        return self._file_view(node, tuple(paths), "parquet" if is_parquet else "csv", options)

    def _file_view(self, node: exp.Table, paths: tuple[str, ...], fmt: str, options: dict[str, Any]) -> exp.Expr:
        view = self.planner.next_view("__lake_file_")
        self.files.append(FileRef(view=view, paths=paths, format=fmt, options=options))
        self._star = True  # file columns are unknown until read
        alias = node.args.get("alias")
        return exp.to_table(view).as_(alias.name if alias else view)

    def _series(self, node: exp.Table, func: exp.Expr) -> exp.Expr:
        """DuckDB's ``range(a[, b[, step]])`` (end exclusive, column ``range``) and ``generate_series`` (end
        inclusive, column ``generate_series``) as Spark's ``range`` (column ``id``)."""
        inclusive = func.sql("duckdb").lower().startswith("generate_series(")
        args = (
            [func.args[k] for k in ("start", "end", "step") if func.args.get(k) is not None]
            if isinstance(func, exp.GenerateSeries)
            else list(func.expressions)
        )
        parts = [self.planner.spark_sql(self.rewrite(a)) for a in args]
        column = "generate_series" if inclusive else "range"
        alias = node.args.get("alias")
        if len(args) == 3 and _temporal_series(args):
            sub = sqlglot.parse_one(f"(SELECT {_moments_between(args, parts, inclusive)} AS {column})", read="spark")
            table_alias = alias.copy() if alias else exp.TableAlias(this=exp.to_identifier(column))
            return exp.Subquery(this=sub.this, alias=table_alias)
        if len(parts) == 1:
            parts = ["0", parts[0]]
        if inclusive:
            parts[1] = f"({parts[1]}) + 1"
        sub = sqlglot.parse_one(f"(SELECT id AS {column} FROM range({', '.join(parts)}))", read="spark")
        table_alias = alias.copy() if alias else exp.TableAlias(this=exp.to_identifier(column))
        return exp.Subquery(this=sub.this, alias=table_alias)

    def _json_each(self, node: exp.Table, func: exp.Anonymous) -> exp.Expr:
        """``json_each(json_array)`` -> one row per element: ``key`` (position) and ``value`` (JSON text)."""
        if len(func.expressions) != 1:
            raise _fail(self.statement, "json_each takes exactly one argument here.")
        (arg,) = func.expressions
        source = self.planner.spark_sql(self.rewrite(arg))
        alias = node.args.get("alias")
        sub = sqlglot.parse_one(
            f"(SELECT CAST(pos AS BIGINT) AS key, value FROM "
            f"(SELECT posexplode(from_json({source}, 'array<string>')) AS (pos, value)))",
            read="spark",
        )
        return exp.Subquery(
            this=sub.this, alias=exp.TableAlias(this=exp.to_identifier(alias.name if alias else "json_each"))
        )


def _temporal_series(args: list[exp.Expr]) -> bool:
    """Whether ``range``/``generate_series`` of ``(start, stop, step)`` counts out times: its step is an interval
    or its start a date or timestamp (DuckDB has no default step for times)."""
    start = annotate_types(args[0].copy(), dialect="duckdb")
    return isinstance(args[2], exp.Interval) or start.is_type(*exp.DataType.TEMPORAL_TYPES)


def _moments_between(args: list[exp.Expr], parts: list[str], inclusive: bool) -> str:
    """Spark SQL of DuckDB's series of times from ``start`` to ``stop`` by ``step`` (``parts``: their Spark SQL),
    one row each: a TIMESTAMP (a TIMESTAMPTZ for a zoned start), empty where the step leads away from ``stop``
    (Spark's ``SEQUENCE`` fails there), ``stop`` itself left out by ``range``."""
    zoned = annotate_types(args[0].copy(), dialect="duckdb").is_type(exp.DataType.Type.TIMESTAMPTZ)
    kind = "TIMESTAMP" if zoned else "TIMESTAMP_NTZ"
    start, stop, step = (f"CAST({parts[0]} AS {kind})", f"CAST({parts[1]} AS {kind})", parts[2])
    towards = (
        f"(({start} <= {stop} AND {start} + {step} > {start}) OR ({start} >= {stop} AND {start} + {step} < {start}))"
    )
    values = f"IF({towards}, SEQUENCE({start}, {stop}, {step}), FILTER(ARRAY({start}), _lh_t -> FALSE))"
    if not inclusive:
        values = f"FILTER({values}, _lh_t -> _lh_t <> {stop})"
    return f"EXPLODE({values})"


_COMPARISONS = {exp.EQ: "=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
_FLIPPED = {"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _predicates_for(node: exp.Table, alias: str) -> tuple[tuple[str, str, Any], ...]:
    """Conditions on ``alias``'s columns that the WHERE clause of the SELECT reading ``node`` requires.

    Only null-rejecting comparisons with a constant are taken, so they hold for every row the statement keeps,
    even when the table is on the outer side of a join.

    >>> tree = sqlglot.parse_one("SELECT * FROM t AS a JOIN u ON a.k = u.k WHERE a.x >= 5 AND 3 > a.y AND u.z = 1 "
    ...                          "AND a.s IN ('p', 'q') OR FALSE", read="duckdb")
    >>> _predicates_for(tree.find(exp.Table), "a")
    ()
    >>> tree = sqlglot.parse_one("SELECT * FROM t AS a JOIN u ON a.k = u.k WHERE a.x >= 5 AND 3 > a.y AND u.z = $v "
    ...                          "AND a.s IN ('p', 'q')", read="duckdb")
    >>> _predicates_for(tree.find(exp.Table), "a")
    (('x', '>=', 5), ('y', '<', 3), ('s', 'in', ('p', 'q')))
    >>> _predicates_for(list(tree.find_all(exp.Table))[1], "u")
    (('z', '=', {'param': 'v'}),)
    """
    scope = node.parent
    if isinstance(scope, (exp.From, exp.Join)):
        scope = scope.parent
    if not isinstance(scope, exp.Select) or scope.args.get("where") is None:
        return ()
    single = not scope.args.get("joins")
    found: list[tuple[str, str, Any]] = []
    for term in (
        scope.args["where"].this.flatten()
        if isinstance(scope.args["where"].this, exp.And)
        else [scope.args["where"].this]
    ):
        found += _comparison(term, alias, single)
    return tuple(found)


def _comparison(term: exp.Expr, alias: str, single: bool) -> list[tuple[str, str, Any]]:
    def mine(side: exp.Expr) -> str | None:
        if isinstance(side, exp.Column) and (side.table.lower() == alias.lower() or (single and not side.table)):
            return side.name
        return None

    def constant(side: exp.Expr) -> tuple[bool, Any]:
        if isinstance(side, exp.Placeholder):
            return True, {"param": _param_name(side.name)}
        if isinstance(side, (exp.Literal, exp.Neg, exp.Boolean)):
            return True, _literal(side)
        return False, None

    for kind, op in _COMPARISONS.items():
        if isinstance(term, kind):
            left, right = term.this, term.expression
            if mine(left) and constant(right)[0]:
                return [(mine(left) or "", op, constant(right)[1])]
            if mine(right) and constant(left)[0]:
                return [(mine(right) or "", _FLIPPED[op], constant(left)[1])]
            return []
    if isinstance(term, exp.In) and mine(term.this) and term.expressions and not term.args.get("query"):
        values = [constant(v) for v in term.expressions]
        if all(ok for ok, _ in values) and not any(isinstance(v, dict) for _, v in values):
            return [(mine(term.this) or "", "in", tuple(v for _, v in values))]
    if isinstance(term, exp.Between) and mine(term.this):
        low, high = constant(term.args["low"]), constant(term.args["high"])
        if low[0] and high[0]:
            return [(mine(term.this) or "", ">=", low[1]), (mine(term.this) or "", "<=", high[1])]
    return []


def _write_target(tree: exp.Expr) -> exp.Table | None:
    """The table a data-changing statement writes (None for a query, a temp object or a schema)."""
    node: exp.Expr | None = None
    if isinstance(tree, (exp.Insert, exp.Delete, exp.Update, exp.Merge, exp.Alter)):
        node = tree.this
    elif isinstance(tree, exp.TruncateTable) and len(tree.expressions) == 1:
        node = tree.expressions[0]
    elif isinstance(tree, exp.Create) and str(tree.args.get("kind") or "").upper() == "TABLE":
        properties = (tree.args.get("properties") or exp.Properties()).expressions
        if not any(isinstance(p, exp.TemporaryProperty) for p in properties):
            node = tree.this
    elif isinstance(tree, exp.Drop) and str(tree.args.get("kind") or "").upper() == "TABLE":
        tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        node = tables[0] if len(tables) == 1 else None
    if isinstance(node, exp.Schema):
        node = node.this
    return node if isinstance(node, exp.Table) else None


def _change_kind(tree: exp.Expr) -> str:
    """The response's kind of a statement Postgres runs for a Data Table."""
    if isinstance(tree, exp.Create):
        return "create_table"
    if isinstance(tree, exp.Drop):
        return "drop_table"
    return type(tree).__name__.lower()  # delete, update, merge, alter


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name).lower()


def _spark_file_format(statement: Statement, file: FilePath) -> tuple[str, dict[str, Any]]:
    """The format (``parquet`` or ``csv``) and reader options the Spark side uses for ``file``; refuses what it
    cannot read or write the way DuckDB would (see .files).

    >>> from airflow_provider_lakehouse.sql.split import split_statements
    >>> statement = split_statements("SELECT 1")[0]
    >>> _spark_file_format(statement, file_path("s3://b/x.tsv.gz")), _spark_file_format(statement, file_path("/d"))
    (('csv', {'delim': '\\t'}), ('parquet', {}))
    """
    if file.home_relative:
        raise _fail(statement, f"{file.path!r}: '~' is not expanded on Spark; give an absolute path or a URI.")
    if file.scheme is not None and file.scheme not in FILE_SCHEMES:
        raise _fail(
            statement,
            f"{file.path!r}: {file.scheme}:// files are not supported ({', '.join(sorted(FILE_SCHEMES))} are).",
        )
    if file.format is None and file.compression:
        raise _fail(statement, f"{file.path!r}: cannot tell the file format; use read_parquet or read_csv.")
    fmt = file.format or "parquet"  # a directory or an extension-less name: Parquet, as before
    if fmt == "tsv":
        return "csv", {"delim": "\t"}  # what DuckDB's CSV sniffer finds in a .tsv
    if fmt not in ("parquet", "csv"):
        raise _fail(statement, f"{file.path!r}: {fmt} files are not supported on Spark (Parquet and CSV are).")
    return fmt, {}


#: constraints DuckDB's ``ducklake`` refuses when it creates a table or adds a column, and its error for each
_REFUSED_CONSTRAINTS: tuple[tuple[tuple[type[exp.Expr], ...], str], ...] = (
    (
        (exp.PrimaryKeyColumnConstraint, exp.PrimaryKey, exp.UniqueColumnConstraint),
        "Not implemented Error: PRIMARY KEY/UNIQUE constraints are not supported in DuckLake",
    ),
    ((exp.CheckColumnConstraint, exp.Check), "Not implemented Error: CHECK constraints are not supported in DuckLake"),
    ((exp.CollateColumnConstraint,), "Invalid Input Error: Collations are not supported in DuckLake storage"),
    ((exp.Reference, exp.ForeignKey), "Binder Error: Failed to create foreign key: DuckLake tables have no keys"),
)


def _constraint_duckdb_refuses(constraints: list[exp.Expr]) -> str | None:
    """DuckDB's error for the first of ``constraints`` (a column's, or a table's) that DuckLake refuses, or None."""
    for constraint in constraints:
        inner = constraint.args.get("kind") if isinstance(constraint, exp.ColumnConstraint) else constraint
        for kinds, message in _REFUSED_CONSTRAINTS:
            if isinstance(inner, kinds):
                return message
    return None


#: DuckDB's error for a MERGE with more than one ``UPDATE`` or ``DELETE`` clause on a lake table
_ONE_MERGE_CHANGE = (
    "Not implemented Error: MERGE INTO with DuckLake only supports a single UPDATE/DELETE action currently"
)
#: DuckDB's error for ``UPDATE ... SET column = DEFAULT`` (and a MERGE's) on a lake table, which it binds per row
_UPDATE_DEFAULT = "Binder Error: SET DEFAULT is not yet supported for updates of a DuckLake table"


def _is_nested(kind: exp.Expr | None) -> bool:
    return isinstance(kind, exp.DataType) and kind.this in (
        exp.DataType.Type.STRUCT,
        exp.DataType.Type.ARRAY,
        exp.DataType.Type.LIST,
        exp.DataType.Type.MAP,
    )


def _nested_default_refusal(column: exp.ColumnDef) -> str | None:
    """DuckDB's refusal of any ``DEFAULT`` (even ``NULL``) on a list, fixed-size array, struct or map column in
    ``CREATE TABLE`` and ``ADD COLUMN`` (``ducklake`` 1.5: "Default value for LIST type not supported"), or None.

    >>> import sqlglot
    >>> _nested_default_refusal(sqlglot.parse_one("CREATE TABLE t (c INT[] DEFAULT NULL)", read="duckdb").find(exp.ColumnDef))
    "column 'c' of type INT[] cannot have a default (as in DuckDB): DuckLake in DuckDB 1.5 supports no LIST default."
    """
    kind = column.args.get("kind")
    if not _is_nested(kind) or not any(
        isinstance(c.args.get("kind"), exp.DefaultColumnConstraint) for c in column.args.get("constraints") or []
    ):
        return None
    assert isinstance(kind, exp.DataType)
    duckdb_kind = {exp.DataType.Type.STRUCT: "STRUCT", exp.DataType.Type.MAP: "MAP"}.get(kind.this, "LIST")
    return (
        f"column {column.name!r} of type {kind.sql('duckdb')} cannot have a default (as in DuckDB): DuckLake in "
        f"DuckDB 1.5 supports no {duckdb_kind} default."
    )


def _default_duckdb_refuses(column: exp.ColumnDef) -> str | None:
    """Why DuckDB refuses ``ALTER TABLE ... ADD COLUMN ... DEFAULT`` for ``column``, or None: DuckDB's ``ducklake``
    (1.5) fills the existing rows with the default only when it is a plain constant (``7``, ``-1``,
    ``'2020-01-01'``, ``NULL``), and refuses a cast (``DATE '2020-01-01'``, ``'x'::VARCHAR``, even ``TRUE``), any
    other expression and a default on a nested column, even ``NULL``; so do we, when the statement runs."""
    for constraint in column.args.get("constraints") or []:
        inner = constraint.args.get("kind")
        if not isinstance(inner, exp.DefaultColumnConstraint):
            continue
        if (nested := _nested_default_refusal(column)) is not None:
            return nested
        value = inner.this
        if isinstance(value, exp.Neg):
            value = value.this
        if not isinstance(value, (exp.Literal, exp.Null)):  # DuckDB binds TRUE as a cast: refused too
            return (
                f"cannot add column {column.name!r} with the non-literal default {inner.this.sql('duckdb')} (as in "
                "DuckDB): give a constant (DATE '2020-01-01' as '2020-01-01'), or add the column without a default "
                "and fill its rows with UPDATE."
            )
    return None


def _check_type(statement: Statement, column: str, kind: exp.DataType) -> None:
    """Fail now, before anything runs, for a column type the lake cannot store (``CREATE``, ``ADD``/``ALTER
    COLUMN``)."""
    from airflow_provider_lakehouse.sql.types import arrow_type

    try:
        arrow_type(kind)
    except UnsupportedStatementError as exc:
        raise _fail(statement, f"column {column!r}: {exc}") from None


def _constant_default(node: exp.Expr | None) -> bool:
    """Whether a column default is a constant the writers fill: a literal, NULL, a boolean, a negated number, a
    list of those, or a typed constant (a cast of a string literal to a type of one value, ``DATE '2020-01-02'``,
    which DuckDB stores as ``CAST('2020-01-02' AS "DATE")``).

    >>> import sqlglot
    >>> [_constant_default(sqlglot.parse_one(s, read="duckdb")) for s in ("-1.5", "DATE '2020-01-02'", "CAST(5 AS TEXT)")]
    [True, True, False]
    """
    while isinstance(node, exp.Paren):
        node = node.this
    if node is None or isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
        return True
    if isinstance(node, exp.Neg):
        return isinstance(node.this, exp.Literal) and node.this.is_number
    if isinstance(node, exp.Array):
        return all(_constant_default(v) for v in node.expressions)
    if isinstance(node, exp.Cast):
        return (
            isinstance(node.this, exp.Literal)
            and node.this.is_string
            and not node.to.is_type(*exp.DataType.NESTED_TYPES)
        )
    return False


#: sqlglot's DuckDB spelling of a type -> DuckDB's, where they differ
_DUCKDB_TYPE_NAMES = {
    "INT": "INTEGER",
    "INT128": "HUGEINT",
    "REAL": "FLOAT",
    "TEXT": "VARCHAR",
    "TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE",
    "TIMETZ": "TIME WITH TIME ZONE",
}
#: the type names DuckDB writes unquoted in a stored expression (its grammar's own); it quotes the others
_UNQUOTED_TYPE_NAMES = {"SMALLINT", "INTEGER", "BIGINT", "FLOAT", "VARCHAR", "BOOLEAN", "TIME", "TIMESTAMP"}


def _typed_constant_text(node: exp.Cast) -> str:
    """A typed constant default as DuckDB stores it: ``DATE '2020-01-02'`` is ``CAST('2020-01-02' AS "DATE")``.

    >>> import sqlglot
    >>> print(_typed_constant_text(sqlglot.parse_one("TIMESTAMPTZ '2020-01-02 10:00:00+01'", read="duckdb")))
    CAST('2020-01-02 10:00:00+01' AS "TIMESTAMP WITH TIME ZONE")
    >>> _typed_constant_text(sqlglot.parse_one("CAST('7' AS INT)", read="duckdb"))
    "CAST('7' AS INTEGER)"
    """
    name = node.to.sql("duckdb").upper()
    name = _DUCKDB_TYPE_NAMES.get(name, name)
    if name not in _UNQUOTED_TYPE_NAMES and not name.startswith("DECIMAL("):
        name = f'"{name}"'
    return f"CAST({node.this.sql('duckdb')} AS {name})"


def _default_literal(node: exp.Expr | None) -> Any:
    """A column default's value: as :func:`_literal`, but a decimal number keeps its digits as text (a float
    would store ``-353225132005.3417231929`` as ``-353225132005.34174``; DuckDB stores the digits). A decimal
    zero has no sign: DuckDB stores ``-0.0`` as ``0.0`` (a DOUBLE column's old rows read 0.0, not -0.0)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        return _typed_constant_text(node)
    number = node.this if isinstance(node, exp.Neg) else node
    if isinstance(number, exp.Literal) and number.is_number and re.fullmatch(r"\d*\.\d+", number.name):
        negative = isinstance(node, exp.Neg) and number.name.strip("0.") != ""
        return ("-" if negative else "") + number.name
    return _literal(node)


def _literal(node: exp.Expr | None) -> Any:
    """A literal's Python value (string, number, boolean, NULL, list); else its DuckDB SQL text."""
    if node is None or isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.name
        text = node.name
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return -_literal(node.this)
    if isinstance(node, exp.Array):
        return [_literal(v) for v in node.expressions]
    if isinstance(node, (exp.Column, exp.Identifier)) and not isinstance(node, exp.Star):
        return node.name  # bare words such as FORMAT parquet
    if isinstance(node, exp.Var):
        return node.name
    return node.sql("duckdb")


def _strip_call(text: str) -> tuple[bool, str]:
    """sqlglot reads ``CALL f(...)`` as an opaque command; parse its argument list as ``SELECT f(...)``."""
    match = re.match(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*CALL\s+", text, re.IGNORECASE | re.DOTALL)
    if not match:
        return False, text
    return True, "SELECT " + text[match.end() :]


def _first_word(text: str) -> str:
    match = re.search(r"[A-Za-z_]+", re.sub(r"--[^\n]*|/\*.*?\*/", " ", text, flags=re.DOTALL))
    return match.group(0).upper() if match else "?"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def spark_value(value: Any) -> Any:
    """A parameter value as Spark binds it: dicts, and lists holding dicts or lists, become JSON text (what
    ``json_each`` and ``->>`` read); other lists become arrays; scalars, dates and decimals stay typed.

    >>> spark_value([{"a": 1}]), spark_value([1, 2]), spark_value({"k": None})
    ('[{"a": 1}]', [1, 2], '{"k": null}')
    """
    import json

    if isinstance(value, Mapping):
        return json.dumps(value, default=str)
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (Mapping, list, tuple)) for v in value):
            return json.dumps(list(value), default=str)
        return list(value)
    return value
