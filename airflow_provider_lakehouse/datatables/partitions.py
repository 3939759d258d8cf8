"""Data Table rows read and written by many workers at once (Spark executors), consistent with one transaction.

- **Reads** split a table into ranges of pages (``ctid``). Each worker opens its own ``REPEATABLE READ``
  transaction on the snapshot the script's transaction exported (``pg_export_snapshot``), so every range shows the
  state the script sees, whoever reads it.
- **Writes** go to an ``UNLOGGED`` staging table first. Each worker replaces its partition's rows there in one
  transaction: a retried Spark task never doubles them. The script's transaction then moves the staged rows into
  place with one ``INSERT ... SELECT`` and drops the staging table, so the target changes only when the script
  commits.

Everything here runs where the work is (a worker): it needs the Data Table's spec, which travels inside the
pickled function, never as a Spark option.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.datatables.arrow import (
    ResultColumns,
    csv_chunks,
    csv_writable,
    prepare_cursor,
    rows_of,
)

#: the staged rows' partition, a column of every staging table (dropped when the rows move into place)
PART_COLUMN = "__lakehouse_part"
_FETCH_ROWS = 50_000


@dataclass(frozen=True)
class PageRange:
    """Pages ``[first, end)`` of a table (``end`` None: to the table's end), read at ``snapshot``."""

    spec: PostgresSpec
    snapshot: str
    schema: str
    table: str
    first: int
    end: int | None


def page_ranges(spec: PostgresSpec, snapshot: str, schema: str, table: str, pages: int, pieces: int) -> list[PageRange]:
    """``pieces`` ranges covering a table of ``pages`` pages; the last one is open-ended.

    >>> spec = PostgresSpec("h", 5432, "u", "db")
    >>> [(r.first, r.end) for r in page_ranges(spec, "s", "public", "t", 10, 3)]
    [(0, 4), (4, 8), (8, None)]
    """
    pieces = max(1, min(pieces, pages))
    step = -(-pages // pieces)
    starts = list(range(0, max(pages, 1), step))
    return [
        PageRange(spec, snapshot, schema, table, first, starts[i + 1] if i + 1 < len(starts) else None)
        for i, first in enumerate(starts)
    ]


def read_page_range(piece: PageRange) -> Iterator[pa.RecordBatch]:
    """The rows of ``piece``, as Arrow batches, at the exported snapshot."""
    import psycopg
    from psycopg import sql

    condition = sql.SQL("ctid >= {}::tid").format(sql.Literal(f"({piece.first},0)"))
    if piece.end is not None:
        condition = sql.SQL("{} AND ctid < {}::tid").format(condition, sql.Literal(f"({piece.end},0)"))
    query = sql.SQL("SELECT * FROM {}.{} WHERE {}").format(
        sql.Identifier(piece.schema), sql.Identifier(piece.table), condition
    )
    with psycopg.connect(**piece.spec.connect_kwargs()) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(piece.snapshot)))
        with conn.cursor(name="lakehouse_range") as cur:
            prepare_cursor(cur)
            cur.execute(query)
            columns = ResultColumns.of(cur.description or [])
            while rows := cur.fetchmany(_FETCH_ROWS):
                yield columns.batch(rows)


@dataclass(frozen=True)
class StagingTable:
    """Where workers stage rows for one statement: ``schema.name``, the query's columns ``columns`` stored as
    ``c0, c1, ...`` (a query may repeat a name) plus :data:`PART_COLUMN`."""

    spec: PostgresSpec
    schema: str
    name: str
    columns: tuple[str, ...]

    @property
    def stored_columns(self) -> tuple[str, ...]:
        return tuple(f"c{i}" for i in range(len(self.columns)))


def stage_partition(staging: StagingTable, part: int, batches: Iterable[pa.RecordBatch]) -> int:
    """Replace partition ``part``'s staged rows with ``batches``' in one transaction; returns the rows staged."""
    import psycopg
    from psycopg import sql

    target = sql.SQL("{}.{}").format(sql.Identifier(staging.schema), sql.Identifier(staging.name))
    names = sql.SQL(", ").join(map(sql.Identifier, (*staging.stored_columns, PART_COLUMN)))
    count = 0
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(target, names)
    with psycopg.connect(**staging.spec.connect_kwargs()) as conn:  # commits at the end of the block
        conn.execute(sql.SQL("DELETE FROM {} WHERE {} = %s").format(target, sql.Identifier(PART_COLUMN)), (part,))
        with conn.cursor() as cur:
            for batch in batches:
                rows = pa.Table.from_batches([batch])
                if csv_writable(rows.schema):  # Arrow's CSV writer: far faster than a Python row per row
                    tagged = rows.append_column(PART_COLUMN, pa.array([part] * rows.num_rows, pa.int32()))
                    with cur.copy(sql.SQL("{} (FORMAT csv)").format(statement)) as copy:
                        for chunk in csv_chunks(tagged):
                            copy.write(chunk)
                else:
                    with cur.copy(statement) as copy:
                        for row in rows_of(rows):
                            copy.write_row((*row, part))
                count += batch.num_rows
    return count
