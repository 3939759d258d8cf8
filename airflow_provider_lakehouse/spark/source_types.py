"""Lake column types Spark has no type of its own for, carried through a statement as column metadata.

Spark reads an ``UINTEGER`` column as ``bigint``, a ``TIME`` or ``UUID`` as ``string``, a ``TIMESTAMP_NS`` as
microseconds, a ``HUGEINT`` as ``decimal(38,0)``. A ``CREATE TABLE ... AS SELECT`` that only passes such a column through would create the new
table's column from Spark's type, so ``CREATE OR REPLACE TABLE t AS SELECT * FROM t`` turned ``TIME`` into
``VARCHAR`` where DuckDB keeps ``TIME``. Each read of a lake table tags those columns with their DuckLake type;
Spark keeps a column's metadata exactly where the column is passed through unchanged (selected, filtered,
joined, renamed), and drops it wherever an expression computes a new value, so a tag that reaches a statement's
output names the type DuckDB would give that column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.geometry import WKB
from airflow_provider_lakehouse.ducklake.types import LAKE_TYPE_KEY, WIDE_INTEGERS, Column, arrow_type

#: the DuckLake type of a column passed through from a lake table
TYPE_KEY = "ducklake_type"
#: Spark's type of that column when it was read: a tag on a column of another type is not trusted
SPARK_TYPE_KEY = "ducklake_spark_type"
#: the DuckLake types Spark reads as a type that would not give them back
UNTYPED_IN_SPARK = frozenset(
    {
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int128",
        "uint128",
        "time",
        "time_ns",
        "uuid",
        "json",
        "timestamp_s",
        "timestamp_ms",
        "timestamp_ns",
        "geometry",
    }
)


def tag_source_types(frame: Any, columns: Sequence[Column]) -> Any:
    """``frame`` (a read of a lake table with ``columns``) with its columns of :data:`UNTYPED_IN_SPARK` types
    tagged with their DuckLake type; ``frame`` itself when it has none (no extra projection for Spark to plan)."""
    return tag_types(frame, {c.name: c.type for c in columns if c.type in UNTYPED_IN_SPARK})


def tag_types(frame: Any, untyped: Mapping[str, str]) -> Any:
    """``frame`` with each column named in ``untyped`` tagged with the DuckLake type given for it (one of
    :data:`UNTYPED_IN_SPARK`): the type DuckDB would give that column, which Spark's own type would not give back
    (a Data Table's ``uuid`` and ``time``, read as text); ``frame`` itself when ``untyped`` is empty."""
    if not untyped:
        return frame
    spark_types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    # DataFrame.withMetadata, not pyspark.sql.functions: the latter asserts a SparkContext in a Connect client
    # process once the provider has cleared PySpark's Connect flag (see spark/native.py)
    for name, kind in untyped.items():
        if name in spark_types:
            frame = frame.withMetadata(name, {TYPE_KEY: kind, SPARK_TYPE_KEY: spark_types[name]})
    return frame


def passed_through_types(struct: Any) -> dict[str, str]:
    """The DuckLake type of each column of a Spark ``StructType`` that passes a tagged lake column through."""
    found = {}
    for spark_field in struct.fields:
        metadata = spark_field.metadata or {}
        kind = metadata.get(TYPE_KEY)
        if kind in UNTYPED_IN_SPARK and metadata.get(SPARK_TYPE_KEY) == spark_field.dataType.simpleString():
            found[spark_field.name] = kind
    return found


def with_lake_types(schema: pa.Schema, lake_types: dict[str, str]) -> pa.Schema:
    """``schema`` with the fields named in ``lake_types`` given the Arrow type of their DuckLake type.

    >>> with_lake_types(pa.schema([("t", pa.string()), ("n", pa.int64())]), {"t": "time"}).types
    [Time64Type(time64[us]), DataType(int64)]
    """
    fields = []
    for schema_field in schema:
        kind = lake_types.get(schema_field.name)
        if kind is None:
            fields.append(schema_field)
            continue
        typed = schema_field.with_type(_arrow_type_of(kind))
        if kind in WIDE_INTEGERS:  # read as DECIMAL(38, 0), which is also Arrow's type for them: the name says which
            typed = typed.with_metadata({**(typed.metadata or {}), LAKE_TYPE_KEY: kind.encode()})
        fields.append(typed)
    return pa.schema(fields, metadata=schema.metadata)


def _arrow_type_of(kind: str) -> pa.DataType:
    # the Arrow type whose DuckLake type is ``kind`` (text types need their extension type to stay UUID or JSON)
    if kind == "uuid":
        return pa.uuid()
    if kind == "json":
        return pa.json_()
    if kind == "geometry":
        return WKB
    return arrow_type(Column(0, "", kind))
