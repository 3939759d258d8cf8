"""What each kind of planned statement carries: one frozen dataclass per kind (``Step.details``).

The driver dispatches on these types; ``kind`` (the name responses, logs and stored outcomes use) is a class
attribute, so a step's kind can never disagree with what it holds. Pure: no Spark, no catalog.

>>> CreateTable(columns=(ColumnDef("id", "INT", nullable=False),)).kind, AddColumn(ColumnDef("v", "DOUBLE")).kind
('create_table', 'alter')
>>> details_from_json(details_to_json(Insert(columns=("a",), by_name=False)))
Insert(columns=('a',), by_name=False, overwrite=False, by_kind=())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class StepDetails:
    """Base of every step's details. ``kind``: the statement kind's name; ``writes``: it changes the lake."""

    kind: ClassVar[str] = ""
    writes: ClassVar[bool] = False


# -- no details of their own ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attach(StepDetails):
    kind: ClassVar[str] = "attach"


@dataclass(frozen=True)
class Use(StepDetails):
    kind: ClassVar[str] = "use"


@dataclass(frozen=True)
class Begin(StepDetails):
    kind: ClassVar[str] = "begin"


@dataclass(frozen=True)
class Commit(StepDetails):
    kind: ClassVar[str] = "commit"


@dataclass(frozen=True)
class Rollback(StepDetails):
    kind: ClassVar[str] = "rollback"


@dataclass(frozen=True)
class Select(StepDetails):
    kind: ClassVar[str] = "select"


@dataclass(frozen=True)
class Delete(StepDetails):
    """``DELETE``: the step's query selects the doomed rows' ids."""

    kind: ClassVar[str] = "delete"
    writes: ClassVar[bool] = True


# -- temporary objects and files ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TempTable(StepDetails):
    """``CREATE TEMP TABLE name AS ...``: the step's target is the Spark view holding it."""

    kind: ClassVar[str] = "temp_table"
    name: str = ""
    or_replace: bool = False


@dataclass(frozen=True)
class TempView(StepDetails):
    kind: ClassVar[str] = "temp_view"
    name: str = ""
    or_replace: bool = False


@dataclass(frozen=True)
class DropTemp(StepDetails):
    kind: ClassVar[str] = "drop_temp"
    name: str = ""
    if_exists: bool = False


@dataclass(frozen=True)
class Copy(StepDetails):
    """``COPY (query) TO path``: ``format`` is ``parquet`` or ``csv``; ``options`` as written (``delim`` ...)."""

    kind: ClassVar[str] = "copy"
    format: str = "parquet"
    options: Mapping[str, Any] = field(default_factory=dict)


# -- catalog changes ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnDef:
    """A declared column: ``type`` in DuckDB spelling; ``default`` a literal's Python value."""

    name: str
    type: str
    nullable: bool = True
    default: Any = None


@dataclass(frozen=True)
class CreateSchema(StepDetails):
    kind: ClassVar[str] = "create_schema"
    writes: ClassVar[bool] = True
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropSchema(StepDetails):
    kind: ClassVar[str] = "drop_schema"
    writes: ClassVar[bool] = True
    if_exists: bool = False


@dataclass(frozen=True)
class CreateTable(StepDetails):
    kind: ClassVar[str] = "create_table"
    writes: ClassVar[bool] = True
    columns: tuple[ColumnDef, ...] = ()
    if_not_exists: bool = False
    or_replace: bool = False


@dataclass(frozen=True)
class Ctas(StepDetails):
    """``CREATE TABLE ... AS SELECT``: the step's query gives the rows."""

    kind: ClassVar[str] = "ctas"
    writes: ClassVar[bool] = True
    if_not_exists: bool = False
    or_replace: bool = False


@dataclass(frozen=True)
class DropTable(StepDetails):
    kind: ClassVar[str] = "drop_table"
    writes: ClassVar[bool] = True
    if_exists: bool = False


@dataclass(frozen=True)
class CreateView(StepDetails):
    """``CREATE VIEW``: the step's query is the view's, planned for Spark (run to check it binds and to count its
    columns); ``sql`` is the text stored in the catalog, DuckDB SQL with the lake's alias written
    ``{DUCKLAKE_CATALOG}``, as DuckDB stores it."""

    kind: ClassVar[str] = "create_view"
    writes: ClassVar[bool] = True
    sql: str = ""
    column_aliases: tuple[str, ...] = ()
    if_not_exists: bool = False
    or_replace: bool = False


@dataclass(frozen=True)
class DropView(StepDetails):
    kind: ClassVar[str] = "drop_view"
    writes: ClassVar[bool] = True
    if_exists: bool = False


@dataclass(frozen=True)
class AddColumn(StepDetails):
    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: ColumnDef = ColumnDef("", "")
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropColumn(StepDetails):
    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: str = ""
    if_exists: bool = False


@dataclass(frozen=True)
class RenameColumn(StepDetails):
    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: str = ""
    new_name: str = ""


@dataclass(frozen=True)
class ChangeColumnType(StepDetails):
    """``ALTER TABLE … ALTER COLUMN column [SET DATA] TYPE new_type`` (in DuckDB spelling)."""

    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: str = ""
    new_type: str = ""


@dataclass(frozen=True)
class SetColumnDefault(StepDetails):
    """``ALTER TABLE … ALTER COLUMN column SET DEFAULT literal`` (``default`` its Python value) or ``DROP DEFAULT``
    (``default`` None, as ``SET DEFAULT NULL``); ``expression``: a default that is no constant, in DuckDB SQL."""

    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: str = ""
    default: Any = None
    expression: str | None = None


@dataclass(frozen=True)
class SetColumnNullable(StepDetails):
    """``ALTER TABLE … ALTER COLUMN column SET NOT NULL`` (``nullable`` False: the step's query counts the
    column's NULLs, which must be none) or ``DROP NOT NULL``."""

    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    column: str = ""
    nullable: bool = True


@dataclass(frozen=True)
class SetPartitionedBy(StepDetails):
    """``ALTER TABLE … SET PARTITIONED BY (keys)``; no keys is ``RESET PARTITIONED BY``.

    :param columns: each key's column; ``transforms`` its transform (identity, year, …, ``bucket(N)``).
    """

    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    columns: tuple[str, ...] = ()
    transforms: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetSortedBy(StepDetails):
    """``ALTER TABLE … SET SORTED BY (keys)``; no keys is ``RESET SORTED BY``.

    :param expressions: each key's text as DuckDB stores it; ``descending`` and ``nulls_first`` its order.
    :param columns: the columns the keys name (the table must have each).
    :param if_exists: ``ALTER TABLE IF EXISTS``: a missing table is no error.
    """

    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    expressions: tuple[str, ...] = ()
    descending: tuple[bool, ...] = ()
    nulls_first: tuple[bool, ...] = ()
    columns: tuple[str, ...] = ()
    if_exists: bool = False


@dataclass(frozen=True)
class RenameTable(StepDetails):
    kind: ClassVar[str] = "alter"
    writes: ClassVar[bool] = True
    new_name: str = ""


# -- data changes ---------------------------------------------------------------------------------------------
#: the field of an ``INSERT``'s column planned by kind that is true where the row's value is the column's
#: ``DEFAULT`` (see :mod:`~airflow_provider_lakehouse.spark.insert_values`)
DEFAULT_FIELD = "default"
#: a :class:`MergeClause`'s inserted value that is the column's ``DEFAULT`` (``INSERT VALUES (s.id, DEFAULT)``):
#: no Spark SQL expression reads so (a column named so is quoted)
DEFAULT_VALUE = "DEFAULT"


@dataclass(frozen=True)
class Insert(StepDetails):
    """``INSERT``: ``columns`` listed (None: by position), ``by_name`` (``INSERT ... BY NAME``), ``overwrite``, and
    ``by_kind``: the positions of the ``VALUES`` columns planned as one struct field per kind of value, which the
    writer casts to the column's type one by one (see :mod:`~airflow_provider_lakehouse.spark.insert_values`)."""

    kind: ClassVar[str] = "insert"
    writes: ClassVar[bool] = True
    columns: tuple[str, ...] | None = None
    by_name: bool = False
    overwrite: bool = False
    by_kind: tuple[int, ...] = ()


@dataclass(frozen=True)
class Update(StepDetails):
    """``UPDATE``: new values by column (Spark SQL) and the target's alias in the step's query."""

    kind: ClassVar[str] = "update"
    writes: ClassVar[bool] = True
    assignments: Mapping[str, str] = field(default_factory=dict)
    alias: str = ""


@dataclass(frozen=True)
class MergeClause:
    """One ``WHEN [NOT] MATCHED [AND condition] THEN action`` of a MERGE; expressions are Spark SQL.

    :param action: ``update``, ``insert``, ``delete`` or ``nothing``.
    :param star: ``UPDATE SET *`` or a bare ``UPDATE``: every column from the source, by position (by name with
        ``by_name``: ``UPDATE BY NAME``).
    :param by_name: ``UPDATE BY NAME`` / ``INSERT BY NAME``: the source's columns matched to the table's by name.
    :param by_source: ``WHEN NOT MATCHED BY SOURCE``: the clause changes target rows no source row matches
        (``matched`` is False).
    :param values: inserted values (None: ``INSERT *`` or a bare ``INSERT``, the source's columns by position, or
        by name with ``by_name``) for ``columns`` (None: the table's columns in order).
    """

    matched: bool
    action: str
    condition: str | None = None
    assignments: Mapping[str, str] = field(default_factory=dict)
    star: bool = False
    columns: tuple[str, ...] | None = None
    values: tuple[str, ...] | None = None
    by_name: bool = False
    by_source: bool = False

    @property
    def takes_source_columns(self) -> bool:
        """Whether the clause takes the source's columns as they are (``SET *``, ``INSERT *``, bare, ``BY NAME``)."""
        return self.star or (self.action == "insert" and self.values is None)


@dataclass(frozen=True)
class Merge(StepDetails):
    """``MERGE``: the step's query is the source; ``target_view`` the target registered with row ids."""

    kind: ClassVar[str] = "merge"
    writes: ClassVar[bool] = True
    on: str = ""
    clauses: tuple[MergeClause, ...] = ()
    target_alias: str = ""
    source_alias: str = ""
    source_is_query: bool = False
    target_view: str = ""


# -- Data Table changes (``ATTACH 'datatable://NAME' AS dt``): they change Postgres, not the lake --------------
@dataclass(frozen=True)
class DataTableChange(StepDetails):
    """A statement that changes a table of Data Table ``datatable`` (not the lake: ``writes`` stays False).

    Its changes join the script's Postgres transaction, which commits together with the lake's snapshot.

    :param create_schema: a schema to create first if missing: the one ``ATTACH 'datatable://NAME:SCHEMA'``
        named, when the statement writes into it (as ``DataTableOperator(datatable="NAME:SCHEMA")`` does).
    """

    changes_datatable: ClassVar[bool] = True
    datatable: str = ""
    create_schema: str | None = None


@dataclass(frozen=True)
class DataTableInsert(DataTableChange):
    """``INSERT INTO dt.schema.table ...``: the engine computes the step's query; its rows go to Postgres.

    :param columns: listed columns (None: the table's columns by position, or by name with ``by_name``).
    """

    kind: ClassVar[str] = "insert"
    schema: str = ""
    table: str = ""
    columns: tuple[str, ...] | None = None
    by_name: bool = False


@dataclass(frozen=True)
class DataTableCtas(DataTableChange):
    """``CREATE [OR REPLACE] TABLE dt.schema.table AS ...``: the table is created with the query's columns."""

    kind: ClassVar[str] = "ctas"
    schema: str = ""
    table: str = ""
    if_not_exists: bool = False
    or_replace: bool = False


@dataclass(frozen=True)
class DataTableSql(DataTableChange):
    """A statement that reads only the Data Table it changes (``DELETE``, ``UPDATE``, ``MERGE``, ``DROP``,
    ``ALTER``, ``CREATE TABLE``): Postgres runs ``sql`` (its dialect; ``%(name)s`` parameters ``parameters``).

    :param statement_kind: what the response names it (``delete``, ``update`` ...).
    """

    kind: ClassVar[str] = "datatable"
    sql: str = ""
    parameters: tuple[str, ...] = ()
    statement_kind: str = ""


@dataclass(frozen=True)
class Call(StepDetails):
    """A maintenance ``CALL``: the step's target names the function; ``named`` arguments are Spark SQL."""

    kind: ClassVar[str] = "call"
    writes: ClassVar[bool] = True
    positional: tuple[Any, ...] = ()
    named: Mapping[str, str] = field(default_factory=dict)


DETAILS: dict[str, type[StepDetails]] = {
    cls.__name__: cls
    for cls in (
        Attach,
        Use,
        Begin,
        Commit,
        Rollback,
        Select,
        Delete,
        TempTable,
        TempView,
        DropTemp,
        Copy,
        CreateSchema,
        DropSchema,
        CreateTable,
        Ctas,
        DropTable,
        CreateView,
        DropView,
        AddColumn,
        DropColumn,
        RenameColumn,
        ChangeColumnType,
        SetColumnDefault,
        SetColumnNullable,
        SetPartitionedBy,
        SetSortedBy,
        RenameTable,
        Insert,
        Update,
        Merge,
        Call,
        DataTableInsert,
        DataTableCtas,
        DataTableSql,
    )
}
#: the kinds of data-changing statements
WRITE_KINDS = frozenset(cls.kind for cls in DETAILS.values() if cls.writes)


def details_to_json(details: StepDetails) -> dict[str, Any]:
    """A JSON-ready form, tagged with the class name (the ALTER actions share one kind)."""
    return {"type": type(details).__name__, **asdict(details)}


def details_from_json(data: Mapping[str, Any]) -> StepDetails:
    """The inverse of :func:`details_to_json`: JSON's lists become the tuples the planner builds."""
    values = dict(data)
    cls = DETAILS[values.pop("type")]
    if cls is CreateTable:
        values["columns"] = tuple(ColumnDef(**c) for c in values["columns"])
    elif cls is AddColumn:
        values["column"] = ColumnDef(**values["column"])
    elif cls is Merge:
        values["clauses"] = tuple(MergeClause(**_tuples(MergeClause, c)) for c in values["clauses"])
    return cls(**_tuples(cls, values))


def _tuples(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the lists of ``cls``'s tuple-typed fields as tuples."""
    tuple_fields = {f.name for f in fields(cls) if str(f.type).startswith("tuple")}
    return {k: tuple(v) if k in tuple_fields and isinstance(v, list) else v for k, v in values.items()}
