"""Turn a planned MERGE into two Spark queries: the matched target rows (with their action and new values)
and the source rows to insert."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.spark.frames import quoted
from airflow_provider_lakehouse.spark.insert_values import KIND_FIELD
from airflow_provider_lakehouse.spark.steps import DEFAULT_FIELD, DEFAULT_VALUE, Merge, MergeClause

ACTION = "__lakehouse_action"


@dataclass(frozen=True)
class MergeQueries:
    """``matched``: target rows with ``rowid``/file columns, ``__lakehouse_action`` and every column's new
    value; ``not_matched``: rows to insert, by column name; ``unmatched_targets``: as ``matched``, the target rows
    no source row matches (``WHEN NOT MATCHED BY SOURCE``). Each is None when the MERGE has no such clause.
    ``by_kind``: the (lower-case) inserted columns some of whose rows take the column's default, given as the
    writer's struct of a value and a default flag (see :mod:`.insert_values`)."""

    matched: str | None
    not_matched: str | None
    by_kind: frozenset[str] = frozenset()
    unmatched_targets: str | None = None


def merge_queries(
    source_sql: str, merge: Merge, columns: Sequence[str], source_columns: Sequence[str] = (), table: str = ""
) -> MergeQueries:
    """Build the queries for a planned MERGE into ``table``, whose columns are ``columns``.

    :param source_sql: the step's query: the USING source, as Spark SQL.
    :param merge: the step's details.
    :param source_columns: the source's columns, in order (needed by a clause that takes them as they are: ``SET
        *``, ``INSERT *`` and the bare actions by position, ``BY NAME`` by name, as DuckDB).

    :raises LakehouseError: with DuckDB's error, where such a clause's columns do not fit the table's.

    >>> from airflow_provider_lakehouse.spark.plan import plan_script
    >>> step = plan_script("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
    ...                    "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)").steps[0]
    >>> queries = merge_queries(step.query, step.details, ["id", "v"])
    >>> source, target = (ref.view for ref in sorted(step.tables, key=lambda r: r.row_ids))
    >>> f"JOIN {source} AS s ON __LH_OPERANDS(t.id = s.id, " in queries.matched  # the driver types the condition
    True
    >>> f"LEFT ANTI JOIN {target} AS t ON __LH_OPERANDS(t.id = s.id, " in queries.not_matched
    True
    """
    target, source = merge.target_alias, merge.source_alias
    join = f"{merge.target_view} AS {target} JOIN {source_sql} ON {merge.on}"
    matched = [c for c in merge.clauses if c.matched]
    inserts = [c for c in merge.clauses if not c.matched and not c.by_source]
    by_source_clauses = [c for c in merge.clauses if c.by_source]
    unmatched = f"{merge.target_view} AS {target} LEFT ANTI JOIN {source_sql} ON {merge.on}"
    by_source = _SourceColumns(source, list(source_columns), list(columns), table)
    not_matched, by_kind = (
        _insert_query(inserts, columns, target, merge, source_sql, by_source) if inserts else (None, set())
    )
    return MergeQueries(
        matched=_matched_query(matched, columns, target, by_source, join) if matched else None,
        not_matched=not_matched,
        by_kind=frozenset(by_kind),
        unmatched_targets=(
            _matched_query(by_source_clauses, columns, target, by_source, unmatched) if by_source_clauses else None
        ),
    )


def _when(clause: MergeClause) -> str:
    return clause.condition or "TRUE"


@dataclass(frozen=True)
class _SourceColumns:
    """The source's own columns, as a ``SET *``, ``INSERT *``, bare or ``BY NAME`` clause gives them to the table's
    (each method's errors are DuckDB's)."""

    alias: str
    names: list[str]
    table_columns: list[str]
    table: str

    def for_update(self, by_name: bool) -> dict[str, str]:
        """New values by lower-case table column (``BY NAME``: the source's columns the table has)."""
        return self._mapped(
            by_name,
            unknown="Binder Error: Referenced update column {name} not found in table!",
            miscount="Binder Error: Data provided for UPDATE did not match column count in table - expected "
            "{table_count} columns but got {source_count}",
        )

    def for_insert(self, by_name: bool) -> dict[str, str]:
        """Inserted values by lower-case table column (``BY NAME``: the others take their default)."""
        return self._mapped(
            by_name,
            unknown=f'Binder Error: Table "{self.table}" does not have a column with name "{{name}}"',
            miscount=f"Binder Error: table {self.table} has {{table_count}} columns but {{source_count}} values "
            "were supplied",
        )

    def _mapped(self, by_name: bool, unknown: str, miscount: str) -> dict[str, str]:
        """The source's columns by the lower-case table column each fills, or DuckDB's error (``unknown`` for a
        source column the table lacks, by name; ``miscount`` for a source of another width, by position)."""
        if by_name:
            known = {c.lower() for c in self.table_columns}
            for name in self.names:
                if name.lower() not in known:
                    raise LakehouseError(unknown.format(name=name))
            return {n.lower(): f"{self.alias}.{quoted(n)}" for n in self.names}
        if len(self.names) != len(self.table_columns):
            raise LakehouseError(miscount.format(table_count=len(self.table_columns), source_count=len(self.names)))
        return self._by_position()

    def _by_position(self) -> dict[str, str]:
        return {
            column.lower(): f"{self.alias}.{quoted(name)}"
            for column, name in zip(self.table_columns, self.names, strict=True)
        }


def _matched_query(
    clauses: list[MergeClause], columns: Sequence[str], target: str, source: _SourceColumns, join: str
) -> str:
    action = (
        "CASE "
        + " ".join(
            f"WHEN {_when(c)} THEN '{c.action if c.action in ('delete', 'update') else 'nothing'}'" for c in clauses
        )
        + " END"
    )
    projection = [
        f"{target}.{ROWID} AS {ROWID}",
        f"{target}.{FILE_ID} AS {FILE_ID}",
        f"{target}.{FILE_POS} AS {FILE_POS}",
        f"{action} AS {ACTION}",
    ]
    updates = [
        (
            clause,
            source.for_update(clause.by_name) if clause.star else {k.lower(): v for k, v in clause.assignments.items()},
        )
        for clause in clauses
        if clause.action == "update"
    ]
    for name in columns:
        branches = [
            f"WHEN {_when(clause)} THEN {assignments[name.lower()]}"
            for clause, assignments in updates
            if name.lower() in assignments
        ]
        current = f"{target}.{quoted(name)}"
        projection.append(
            f"CASE {' '.join(branches)} ELSE {current} END AS {quoted(name)}"
            if branches
            else f"{current} AS {quoted(name)}"
        )
    return f"SELECT * FROM (SELECT {', '.join(projection)} FROM {join}) WHERE {ACTION} IN ('update', 'delete')"


def _insert_query(
    clauses: list[MergeClause],
    columns: Sequence[str],
    target: str,
    merge: Merge,
    source_sql: str,
    source_columns: _SourceColumns,
) -> tuple[str, set[str]]:
    """The rows the ``WHEN NOT MATCHED`` clauses insert, each by the first clause whose condition holds, and the
    columns some of whose rows take their default: those a clause gives as ``DEFAULT`` or does not name while
    another does (each row is its own clause's: a later clause's value must not reach it)."""
    named: list[str] = []
    values: list[dict[str, str]] = []
    for clause in clauses:
        if clause.action != "insert":
            values.append({})
            continue
        if clause.values is None:  # INSERT *, bare INSERT, INSERT BY NAME: the source's own columns
            mapping = source_columns.for_insert(clause.by_name)
        else:
            names = clause.columns or list(columns)[: len(clause.values)]
            mapping = {n.lower(): v for n, v in zip(names, clause.values, strict=False)}
        values.append(mapping)
        named += [c for c in columns if c.lower() in mapping and c not in named]
    which = "CASE " + " ".join(f"WHEN {_when(c)} THEN {i + 1}" for i, c in enumerate(clauses)) + " END"
    projection = []
    by_kind: set[str] = set()
    inserting = [i for i, c in enumerate(clauses) if c.action == "insert"]
    value_field = KIND_FIELD.format(0)  # the writer's by-kind column: one kind of value and a default flag
    for name in named:
        given = [values[i].get(name.lower(), DEFAULT_VALUE) for i in inserting]
        if DEFAULT_VALUE in given:
            by_kind.add(name.lower())
            given = [
                f"named_struct('{value_field}', NULL, '{DEFAULT_FIELD}', TRUE)"
                if value == DEFAULT_VALUE
                else f"named_struct('{value_field}', {value}, '{DEFAULT_FIELD}', CAST(NULL AS BOOLEAN))"
                for value in given
            ]
        branches = [
            f"WHEN __lakehouse_clause = {i + 1} THEN {value}" for i, value in zip(inserting, given, strict=True)
        ]
        projection.append(f"CASE {' '.join(branches)} END AS {quoted(name)}")
    source = merge.source_alias
    # the clause of each row first, in a subquery named as the source (the values read its columns by that name)
    rows = (
        f"(SELECT {source}.*, {which} AS __lakehouse_clause FROM {source_sql} LEFT ANTI JOIN "
        f"{merge.target_view} AS {target} ON {merge.on}) AS {source}"
    )
    chosen = ", ".join(str(i + 1) for i in inserting) or "NULL"
    return (
        f"SELECT {', '.join([*projection, '__lakehouse_clause'])} FROM {rows} WHERE __lakehouse_clause IN ({chosen})",
        by_kind,
    )
