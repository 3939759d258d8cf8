"""Extract table, file and column lineage from a SQL script (sqlglot only; no Airflow, no database).

The rules are in ``docs/lineage-rules.md``. Each statement is parsed on its own, so one bad statement
costs only its own lineage; the extractor never raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.lineage.model import (
    Access,
    Dataset,
    DatasetLineage,
    InputColumn,
    Lineage,
    LineageError,
)
from airflow_provider_lakehouse.lineage.names import DEFAULT_SCHEMAS, Names
from airflow_provider_lakehouse.lineage.queries import QueryEvaluator
from airflow_provider_lakehouse.lineage.relations import (
    NO_EDGES,
    Context,
    DerivedRelation,
    Edges,
    FilesRelation,
    FunctionRelation,
    Reads,
    Relation,
    Scope,
    TableRelation,
    compose,
)
from airflow_provider_lakehouse.sql.duckdb_syntax import merge_whole_source, spell_out_merge_by_name, sqlglot_spelling
from airflow_provider_lakehouse.sql.split import split_statements

_FILE_READERS = frozenset(
    {
        "read_parquet",
        "parquet_scan",
        "read_csv",
        "read_csv_auto",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_json_objects",
    }
)
_LIFECYCLE_FINAL = ("CREATE", "OVERWRITE", "DROP", "TRUNCATE", "RENAME")
# Statements that touch no dataset's data but that sqlglot parses only as a generic command; any other
# command (CREATE TABLE with syntax sqlglot does not know, DO blocks, REFRESH ...) is an error.
_NO_DATASET_COMMAND = re.compile(
    r"\s*(?:CALL|(?:FORCE\s+)?INSTALL|LOAD|(?:FORCE\s+)?CHECKPOINT|VACUUM|OPTIMIZE|MSCK\s+REPAIR|ANALY[SZ]E"
    r"|EXPLAIN(?!\s+ANALY[SZ]E)|SHOW|DESCRIBE|RESET|SET|PRAGMA|BEGIN|START|COMMIT|END|ROLLBACK|ABORT|DEALLOCATE"
    r"|DISCARD|LISTEN|UNLISTEN|NOTIFY|LOCK|REINDEX|CLUSTER|GRANT|REVOKE|COMMENT"
    r"|(?:CREATE|DROP|ALTER)\s+(?:OR\s+REPLACE\s+)?(?:PERSISTENT\s+|TEMP(?:ORARY)?\s+)?(?:UNIQUE\s+)?"
    r"(?:SECRET|MACRO|FUNCTION|PROCEDURE|INDEX|SEQUENCE|TYPE|EXTENSION|SCHEMA|DATABASE|ROLE|USER|TRIGGER))\b",
    re.IGNORECASE,
)
_PIVOT_QUERY = re.compile(
    r"(?P<head>\s*(?:CREATE\b.*?\bAS|INSERT\b.*?))\s+(?P<pivot>(?:UN)?PIVOT\b.*)", re.IGNORECASE | re.DOTALL
)
_COMMAND_MESSAGE = (
    "not analysed: syntax the SQL parser does not support (it read the statement only as a generic command)"
)


def extract_lineage(
    sql: str,
    dialect: str = "duckdb",
    default_schema: str | None = None,
    schemas: Mapping[str, Sequence[str]] | None = None,
) -> Lineage:
    """Return what ``sql`` reads and writes, down to columns.

    :param sql: one or more statements separated by ``;``.
    :param dialect: ``duckdb`` (default), ``postgres`` or ``spark`` (any sqlglot dialect works).
    :param default_schema: the schema unqualified tables live in; default: ``public`` for postgres,
        ``main`` for duckdb, ``default`` for spark.
    :param schemas: known column lists by dataset key (``schema.table``, ``ducklake://lake/schema.table``),
        used to expand ``SELECT *`` and to resolve unqualified columns over several tables.
    :returns: a :class:`Lineage`; statements it could not understand are in ``errors``.

    >>> lineage = extract_lineage("INSERT INTO out (total) SELECT sum(amount) FROM orders WHERE paid")
    >>> [str(e) for e in lineage.get("main.out").edges("total")]
    ['main.orders.amount DIRECT AGGREGATION', 'main.orders.paid INDIRECT FILTER']
    """
    if schemas is None:
        return _cached(sql, dialect, default_schema)
    return _extract(sql, dialect, default_schema, schemas)


@lru_cache(maxsize=512)
def _cached(sql: str, dialect: str, default_schema: str | None) -> Lineage:
    # Operators parse their SQL when the DAG file is parsed; the same text comes back on every parse.
    return _extract(sql, dialect, default_schema, None)


def _extract(
    sql: str, dialect: str, default_schema: str | None, schemas: Mapping[str, Sequence[str]] | None
) -> Lineage:
    script = _Script(dialect, default_schema or DEFAULT_SCHEMAS.get(dialect, "main"), schemas or {})
    errors: list[LineageError] = []
    try:
        statements = split_statements(sql)
    except Exception as exc:  # an unterminated quote: nothing to split
        return Lineage(errors=(LineageError(1, sql[:200], f"cannot split the script: {exc}"),))
    for statement in statements:
        try:
            tree = _parse(statement.text, dialect)
        except Exception as exc:
            errors.append(LineageError(statement.index, statement.text, _message(exc)))
            continue
        if isinstance(tree, exp.Command) and not _NO_DATASET_COMMAND.match(f"{tree.this} {tree.expression or ''}"):
            # sqlglot's fallback for syntax it does not know: it holds no tables, so its lineage is unknown.
            errors.append(LineageError(statement.index, statement.text, _COMMAND_MESSAGE))
            continue
        try:
            script.statement(tree, statement.index)
        except Exception as exc:  # the extractor must never fail a task
            errors.append(LineageError(statement.index, statement.text, f"{type(exc).__name__}: {exc}"))
        errors += [
            LineageError(statement.index, statement.text, note, partial=True)
            for note in dict.fromkeys(script.queries.take_notes())
        ]
    return Lineage(script.result(), tuple(errors), script.statement_outputs, len(statements))


def _parse(text: str, dialect: str) -> exp.Expr:
    """One statement's tree. sqlglot knows DuckDB's PIVOT / UNPIVOT statements alone and inside FROM, but
    not as the query of CREATE TABLE ... AS or INSERT: those are read as ``... SELECT * FROM (PIVOT ...)``,
    which means the same."""
    if dialect == "duckdb":
        text = spell_out_merge_by_name(sqlglot_spelling(text))
    try:
        tree: exp.Expr | None = sqlglot.parse_one(text, read=dialect)
        failure: Exception | None = None
    except Exception as exc:
        tree, failure = None, exc
    if tree is None or isinstance(tree, exp.Command):
        pivot = _PIVOT_QUERY.match(text)
        if pivot is not None:
            try:
                return sqlglot.parse_one(f"{pivot['head']} SELECT * FROM ({pivot['pivot']})", read=dialect)
            except Exception:
                pass  # not that either: report the original failure
    if tree is None:
        raise failure  # type: ignore[misc]
    return tree


def _message(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if errors:
        first = errors[0]
        return f"{first.get('description', exc)} (line {first.get('line')}, column {first.get('col')})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


@dataclass
class _Touch:
    """What the script did to one dataset so far."""

    read: bool = False
    written: bool = False
    columns_read: set[str] = field(default_factory=set)
    columns_written: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    column_lineage: dict[str, set[InputColumn]] = field(default_factory=dict)
    dataset_lineage: set[InputColumn] = field(default_factory=set)
    lifecycle: list[str] = field(default_factory=list)


class _Script:
    """State carried from statement to statement: names, temporary objects, views, known schemas."""

    def __init__(self, dialect: str, default_schema: str, schemas: Mapping[str, Sequence[str]]) -> None:
        self.dialect = dialect
        self.names = Names(default_schema.lower())
        self.known: dict[str, tuple[str, ...]] = {k.lower(): tuple(map(str.lower, v)) for k, v in schemas.items()}
        self.temps: dict[str, DerivedRelation] = {}
        self.views: dict[Dataset, DerivedRelation] = {}
        self.touched: dict[Dataset, _Touch] = {}
        self.reads = Reads()
        self.queries = QueryEvaluator(self._table_source)
        self.statement_outputs: dict[int, tuple[Dataset, ...]] = {}
        self._index = 0

    # -- results -----------------------------------------------------------------------------
    def result(self) -> tuple[DatasetLineage, ...]:
        out = []
        for dataset in sorted(self.touched):
            t = self.touched[dataset]
            access: Access = "read_write" if t.read and t.written else "write" if t.written else "read"
            out.append(
                DatasetLineage(
                    dataset=dataset,
                    access=access,
                    columns_read=tuple(sorted(t.columns_read)),
                    columns_written=tuple(sorted(t.columns_written)),
                    column_lineage={c: tuple(sorted(e)) for c, e in sorted(t.column_lineage.items()) if e},
                    dataset_lineage=tuple(sorted(t.dataset_lineage)),
                    lifecycle=_lifecycle(t.lifecycle),  # type: ignore[arg-type]
                )
            )
        return tuple(out)

    def _touch(self, dataset: Dataset) -> _Touch:
        return self.touched.setdefault(dataset, _Touch())

    def _flush_reads(self) -> None:
        for dataset, columns in self.reads.columns.items():
            touch = self._touch(dataset)
            touch.read = True
            touch.columns_read |= columns
        self.reads = Reads()

    def _write(
        self,
        dataset: Dataset,
        columns: Mapping[str, Edges] | Sequence[str] = (),
        rows: Edges = NO_EDGES,
        lifecycle: str | None = None,
    ) -> None:
        touch = self._touch(dataset)
        touch.written = True
        outputs = self.statement_outputs.get(self._index, ())
        if dataset not in outputs:
            self.statement_outputs[self._index] = (*outputs, dataset)
        items = columns.items() if isinstance(columns, Mapping) else ((c, NO_EDGES) for c in columns)
        for column, edges in items:
            if column == "*":
                continue
            touch.columns_written[column] = None
            touch.column_lineage.setdefault(column, set()).update(edges)
        touch.dataset_lineage |= rows
        if lifecycle:
            touch.lifecycle.append(lifecycle)

    # -- table sources -----------------------------------------------------------------------
    def _table_source(self, node: exp.Table, scope: Scope) -> Relation:
        function = node.this if not isinstance(node.this, exp.Identifier) else None
        if function is not None:
            return self._function_source(function, scope)
        if not node.db and not node.catalog:
            name = node.name.lower()
            cte = scope.cte(name)
            if cte is not None:
                return cte
            if name in self.temps:
                return self.temps[name]
        dataset = self.names.table(node)
        if dataset in self.views:
            return self.views[dataset]
        return TableRelation(dataset, self.known.get(dataset.key.lower()), self.reads)

    def _function_source(self, function: exp.Expr, scope: Scope) -> Relation:
        name = _function_name(function)
        if name in _FILE_READERS:
            files = [TableRelation(Dataset("file", lit.name), None, self.reads) for lit in _path_literals(function)]
            return files[0] if len(files) == 1 else FilesRelation(tuple(files))
        edges = self.queries.expression(function, scope, Context().wrapped())
        return FunctionRelation(frozenset(edges))

    # -- statements --------------------------------------------------------------------------
    def statement(self, tree: exp.Expr, index: int) -> None:
        self._index = index
        try:
            self._dispatch(tree)
        finally:
            self._flush_reads()

    def _dispatch(self, tree: exp.Expr) -> None:
        if isinstance(tree, exp.Attach):
            self.names.attach(tree)
        elif isinstance(tree, exp.Detach):
            self.names.detach(tree.this.name)
        elif isinstance(tree, exp.Use):
            self.names.use(tree.this)
        elif (into := _select_into(tree)) is not None:
            self._select_into(tree, into)
        elif isinstance(tree, (exp.Select, exp.SetOperation, exp.Subquery, exp.Values, exp.Pivot)):
            self.queries.query(tree)
        elif isinstance(tree, exp.Insert):
            self._insert(tree)
        elif isinstance(tree, exp.Create):
            self._create(tree)
        elif isinstance(tree, exp.Update):
            self._update(tree)
        elif isinstance(tree, exp.Delete):
            self._delete(tree)
        elif isinstance(tree, exp.Merge):
            self._merge(tree)
        elif isinstance(tree, exp.Copy):
            self._copy(tree)
        elif isinstance(tree, exp.Drop):
            self._drop(tree)
        elif isinstance(tree, exp.Alter):
            self._alter(tree)
        elif isinstance(tree, exp.TruncateTable):
            for table in tree.expressions:
                self._write(self.names.table(table), lifecycle="TRUNCATE")
        # SET, BEGIN/COMMIT, CALL, PRAGMA, INSTALL/LOAD and friends touch no dataset.

    def _insert(self, tree: exp.Insert) -> None:
        target = tree.this
        listed: list[str] = []
        if isinstance(target, exp.Schema):
            listed = [c.name.lower() for c in target.expressions]
            target = target.this
        if not isinstance(target, exp.Table):  # INSERT INTO FUNCTION / DIRECTORY: no table to name
            return
        source = tree.expression
        relation = self.queries.query(source, self._statement_scope(tree)) if source is not None else DerivedRelation()
        name = target.name.lower()
        lifecycle = "OVERWRITE" if tree.args.get("overwrite") else None
        if not target.db and name in self.temps:
            temp = self.temps[name]
            columns = _inserted(tree, listed or list(temp.columns), relation)
            for column, edges in columns.items():
                temp.columns[column] = temp.columns.get(column, NO_EDGES) | edges
            temp.row_edges = temp.row_edges | relation.rows
            return
        dataset = self.names.table(target)
        names = listed or list(self.known.get(dataset.key.lower(), ())) or [n for n, _ in relation.output()]
        columns, rows = _inserted(tree, names, relation), relation.rows
        if tree.args.get("conflict") is not None or tree.args.get("alternative"):
            columns, rows = self._upsert(tree, target, dataset, columns, rows)
        self._write(dataset, columns, rows, lifecycle)

    def _upsert(
        self, tree: exp.Insert, target: exp.Table, dataset: Dataset, inserted: dict[str, Edges], rows: Edges
    ) -> tuple[dict[str, Edges], Edges]:
        """``INSERT ... ON CONFLICT`` (and DuckDB's ``INSERT OR REPLACE / IGNORE``) reads the target's rows to
        find the conflicting ones, like MERGE: the conflict key is a JOIN, DO UPDATE's SET adds its edges
        (``EXCLUDED.c`` is the inserted value of ``c``, ``t.c`` the row already there), its WHERE filters."""
        relation = TableRelation(dataset, self.known.get(dataset.key.lower()), self.reads)
        own = Scope(sources={(target.alias or target.name).lower(): relation})
        # EXCLUDED sits in an outer scope: an unqualified name in DO UPDATE is the target's column.
        scope = Scope(sources=dict(own.sources), parent=Scope(sources={"excluded": DerivedRelation(dict(inserted))}))
        columns = {column: set(edges) for column, edges in inserted.items()}
        row_edges = set(rows)
        conflict = tree.args.get("conflict")
        if conflict is None:
            return inserted, rows
        for key in conflict.args.get("conflict_keys") or ():
            row_edges |= self.queries.expression(key, own, Context(indirect="JOIN"))
            if isinstance(key.this if isinstance(key, exp.Ordered) else key, exp.Column):
                row_edges |= compose(inserted.get(key.name.lower(), NO_EDGES), Context(indirect="JOIN"))
        for assignment in conflict.expressions:  # DO UPDATE SET column = expression
            columns.setdefault(assignment.this.name.lower(), set()).update(
                self.queries.expression(assignment.expression, scope, Context())
            )
        where = conflict.args.get("where")
        if where is not None:
            row_edges |= self.queries.expression(where.this, scope, Context(indirect="FILTER"))
        return {column: frozenset(edges) for column, edges in columns.items()}, frozenset(row_edges)

    def _select_into(self, tree: exp.Expr, into: exp.Into) -> None:
        """Postgres ``SELECT ... INTO [TEMP] t FROM ...`` creates ``t`` from the query: CREATE TABLE t AS."""
        into.pop()
        temporary = exp.Properties(expressions=[exp.TemporaryProperty()]) if into.args.get("temporary") else None
        self._create(exp.Create(this=into.this, kind="TABLE", expression=tree, properties=temporary))

    def _create(self, tree: exp.Create) -> None:
        kind = (tree.args.get("kind") or "").upper()
        if kind not in ("TABLE", "VIEW"):
            return  # CREATE SCHEMA / SECRET / MACRO / INDEX ...
        target = tree.this
        declared: list[str] = []
        if isinstance(target, exp.Schema):
            declared = [c.name.lower() for c in target.expressions if isinstance(c, exp.ColumnDef)]
            target = target.this
        query = tree.expression
        relation = self.queries.query(query, self._statement_scope(tree)) if query is not None else None
        columns: dict[str, Edges] = {}
        if relation is not None:
            columns = _positional(declared, relation) if declared else dict(relation.output())
        else:
            columns = dict.fromkeys(declared, NO_EDGES)
        temporary = any(
            isinstance(p, exp.TemporaryProperty) for p in (tree.args.get("properties") or exp.Properties()).expressions
        )
        if temporary:
            self.temps[target.name.lower()] = DerivedRelation(
                dict(columns), relation.rows if relation else NO_EDGES, relation.open_sources if relation else ()
            )
            return
        dataset = self.names.table(target)
        if declared or (relation is not None and not relation.is_open):  # else: more columns than it can list
            self.known[dataset.key.lower()] = tuple(c for c in columns if c != "*")
        replaced = bool(tree.args.get("replace")) or "DROP" in self._touch(dataset).lifecycle
        # IF NOT EXISTS may create nothing: claim no lifecycle change rather than a false CREATE.
        lifecycle = "OVERWRITE" if replaced else None if tree.args.get("exists") else "CREATE"
        self._write(dataset, columns, relation.rows if relation else NO_EDGES, lifecycle)
        if kind == "VIEW" and relation is not None:
            self.views[dataset] = relation

    def _update(self, tree: exp.Update) -> None:
        scope, dataset = self._target_scope(tree)
        from_ = tree.args.get("from_") or tree.args.get("from")
        self._add_sources(scope, [from_.this] if from_ is not None else [], tree)
        columns: dict[str, Edges] = {}
        for assignment in tree.expressions:
            column = assignment.this.name.lower()
            columns[column] = frozenset(self.queries.expression(assignment.expression, scope, Context()))
        rows = self._where_rows(tree, scope)
        self.reads.dataset(dataset)
        self._write(dataset, columns, frozenset(rows))

    def _delete(self, tree: exp.Delete) -> None:
        scope, dataset = self._target_scope(tree)
        self._add_sources(scope, list(tree.args.get("using") or ()), tree)
        rows = self._where_rows(tree, scope)
        self._write(dataset, (), frozenset(rows))

    def _statement_scope(self, tree: exp.Expr) -> Scope:
        """CTEs written before the statement (``WITH x AS (...) INSERT INTO ...``) are visible to its query."""
        scope = Scope()
        self.queries.add_ctes(tree, scope)
        return scope

    def _target_scope(self, tree: exp.Expr) -> tuple[Scope, Dataset]:
        """The scope of UPDATE / DELETE / MERGE: the target table under its alias (it is read too)."""
        node = tree.this
        dataset = self.names.table(node)
        scope = Scope()
        scope.sources[(node.alias or node.name).lower()] = TableRelation(
            dataset, self.known.get(dataset.key.lower()), self.reads
        )
        return scope, dataset

    def _where_rows(self, tree: exp.Expr, scope: Scope) -> set:
        rows: set = set()
        for source in scope.sources.values():
            rows |= source.rows
        where = tree.args.get("where")
        if where is not None:
            rows |= self.queries.predicate(where.this, scope)
        return rows

    def _add_sources(self, scope: Scope, nodes: list[exp.Expr], tree: exp.Expr) -> None:
        self.queries.add_ctes(tree, scope)
        for node in nodes:
            self.queries.add_source(node, scope)

    def _merge(self, tree: exp.Merge) -> None:
        scope, dataset = self._target_scope(tree)
        self._add_sources(scope, [tree.args["using"]], tree)
        rows: set = set(self.queries.expression(tree.args["on"], scope, Context(indirect="JOIN")))
        for source in scope.sources.values():
            rows |= source.rows
        columns: dict[str, set[InputColumn]] = {}
        whens = tree.args.get("whens")
        for when in whens.expressions if whens is not None else ():
            condition = when.args.get("condition")
            if condition is not None:
                rows |= self.queries.expression(condition, scope, Context(indirect="FILTER"))
            action = when.args.get("then")
            whole = merge_whole_source(action)
            if whole is not None:  # SET *, INSERT *, bare, BY NAME: the source's own columns
                using = scope.sources.get(tree.args["using"].alias_or_name.lower())
                output = using.output() if using is not None else []
                table = list(self.known.get(dataset.key.lower(), ()))
                pairs = (
                    [(name.lower(), edges) for name, edges in output]
                    if whole == "name"
                    else [(column, edges) for column, (_, edges) in zip(table, output, strict=False)]
                )
                for column, edges in pairs:
                    columns.setdefault(column, set()).update(edges)
            elif isinstance(action, exp.Update):
                for assignment in action.expressions:
                    column = assignment.this.name.lower()
                    columns.setdefault(column, set()).update(
                        self.queries.expression(assignment.expression, scope, Context())
                    )
            elif isinstance(action, exp.Insert):
                names = [c.name.lower() for c in _tuple_items(action.this)]
                values = _tuple_items(action.expression)
                if not names and values:
                    names = list(self.known.get(dataset.key.lower(), ()))
                for column, value in zip(names, values, strict=False):
                    columns.setdefault(column, set()).update(self.queries.expression(value, scope, Context()))
        self.reads.dataset(dataset)
        self._write(dataset, {c: frozenset(e) for c, e in columns.items()}, frozenset(rows))

    def _copy(self, tree: exp.Copy) -> None:
        files = [f.name for f in tree.args.get("files") or () if isinstance(f, (exp.Literal, exp.Identifier))]
        source = tree.this
        if tree.args.get("kind"):  # COPY table FROM 'file'
            target = source.this if isinstance(source, exp.Schema) else source
            listed = [c.name.lower() for c in source.expressions] if isinstance(source, exp.Schema) else []
            for path in files:
                self.reads.dataset(Dataset("file", path))
            dataset = self.names.table(target)
            file_relation = TableRelation(Dataset("file", files[0]), None, self.reads) if len(files) == 1 else None
            names = listed or list(self.known.get(dataset.key.lower(), ()))
            columns = {n: (file_relation.column(n) if file_relation else NO_EDGES) or NO_EDGES for n in names}
            self._write(dataset, columns)
            return
        relation = self.queries.query(source)
        for path in files:
            self._write(Dataset("file", path), dict(relation.output()), relation.rows)

    def _drop(self, tree: exp.Drop) -> None:
        kind = (tree.args.get("kind") or "").upper()
        if kind not in ("TABLE", "VIEW"):
            return
        for target in tree.args.get("tables") or ([tree.this] if tree.this is not None else []):
            if not target.db and target.name.lower() in self.temps:
                del self.temps[target.name.lower()]
                continue
            dataset = self.names.table(target)
            self.views.pop(dataset, None)
            self.known.pop(dataset.key.lower(), None)
            self._write(dataset, lifecycle="DROP")

    def _alter(self, tree: exp.Alter) -> None:
        target = tree.this
        if not isinstance(target, exp.Table) or (tree.args.get("kind") or "TABLE").upper() not in ("TABLE", "VIEW"):
            return
        dataset = self.names.table(target)
        for action in tree.args.get("actions") or ():
            if isinstance(action, exp.AlterRename):
                new = action.this
                renamed = exp.Table(
                    this=new.this,
                    db=new.args.get("db") or target.args.get("db"),
                    catalog=new.args.get("catalog") or target.args.get("catalog"),
                )
                new_dataset = self.names.table(renamed)
                if dataset.key.lower() in self.known:
                    self.known[new_dataset.key.lower()] = self.known.pop(dataset.key.lower())
                self._write(dataset, lifecycle="DROP")
                self._write(new_dataset, lifecycle="RENAME")
                return
        self.known.pop(dataset.key.lower(), None)  # the column list changed; do not expand * from it
        self._write(dataset, lifecycle="ALTER")


def _inserted(tree: exp.Insert, names: Sequence[str], relation: DerivedRelation) -> dict[str, Edges]:
    """The target columns an INSERT fills and their edges: by name for DuckDB's ``INSERT ... BY NAME``,
    else by position."""
    if tree.args.get("by_name"):
        return _by_name(names, relation)
    return _positional(names, relation)


def _by_name(names: Sequence[str], relation: DerivedRelation) -> dict[str, Edges]:
    """Each query column goes to the target column of the same name; a ``*`` over an unknown table
    contributes the target's known columns it may hold."""
    columns = dict(relation.output())
    if relation.is_open:
        for name in names:
            edges = relation.column(name) if name not in columns else None
            if edges is not None:
                columns[name] = edges
    return columns


def _select_into(tree: exp.Expr) -> exp.Into | None:
    """The ``INTO`` of ``SELECT ... INTO t`` (on the first SELECT of a set operation), if any."""
    node = tree
    while isinstance(node, exp.SetOperation):
        node = node.this
    return node.args.get("into") if isinstance(node, exp.Select) else None


def _positional(names: Sequence[str], relation: DerivedRelation) -> dict[str, Edges]:
    """Target columns paired with the query's output columns by position."""
    outputs = [edges for name, edges in relation.output()]
    if not outputs and relation.open_sources:  # INSERT INTO t SELECT * FROM <unknown>: match by name
        return {n: relation.column(n) or NO_EDGES for n in names}
    return {name: outputs[i] if i < len(outputs) else NO_EDGES for i, name in enumerate(names)}


def _lifecycle(events: list[str]) -> str | None:
    final = [e for e in events if e in _LIFECYCLE_FINAL]
    if not final:
        return "ALTER" if "ALTER" in events else None
    last = final[-1]
    if last == "CREATE" and "DROP" in final[:-1]:
        return "OVERWRITE"
    return last


def _function_name(function: exp.Expr) -> str:
    if isinstance(function, exp.Anonymous):
        return function.name.lower()
    if isinstance(function, exp.Func):
        return function.sql_name().lower()
    return function.key.lower()


def _path_literals(function: exp.Expr) -> list[exp.Literal]:
    """The path arguments of a file reader: the first argument, a string or a list of strings."""
    this = function.args.get("this")
    first: Any = this if isinstance(this, exp.Expression) else (function.expressions or [None])[0]
    if isinstance(first, exp.Literal) and first.is_string:
        return [first]
    if isinstance(first, exp.Array):
        return [e for e in first.expressions if isinstance(e, exp.Literal) and e.is_string]
    return []


def _tuple_items(node: exp.Expr | None) -> list[exp.Expr]:
    if node is None:
        return []
    if isinstance(node, exp.Tuple):
        return list(node.expressions)
    return [node]
