"""SQL column types (as sqlglot parses them, DuckDB or Spark spelling) -> Arrow types for DuckLake tables."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from airflow_provider_lakehouse.exceptions import UnsupportedStatementError
from airflow_provider_lakehouse.sql.wkb import WKB

_T = exp.DataType.Type
_SIMPLE: dict[exp.DType, pa.DataType] = {
    _T.BOOLEAN: pa.bool_(),
    _T.TINYINT: pa.int8(),
    _T.SMALLINT: pa.int16(),
    _T.INT: pa.int32(),
    _T.BIGINT: pa.int64(),
    _T.UTINYINT: pa.uint8(),
    _T.USMALLINT: pa.uint16(),
    _T.UINT: pa.uint32(),
    _T.UBIGINT: pa.uint64(),
    # DuckDB's 128-bit integers, as DuckDB hands them to Arrow (see :func:`wide_integer_type`)
    _T.INT128: pa.decimal128(38, 0),
    _T.UINT128: pa.decimal128(38, 0),
    _T.FLOAT: pa.float32(),
    _T.DOUBLE: pa.float64(),
    _T.VARCHAR: pa.string(),
    _T.TEXT: pa.string(),
    _T.CHAR: pa.string(),
    _T.NVARCHAR: pa.string(),
    _T.NCHAR: pa.string(),
    _T.BLOB: pa.binary(),
    _T.VARBINARY: pa.binary(),
    _T.BINARY: pa.binary(),
    _T.DATE: pa.date32(),
    _T.TIME: pa.time64("us"),
    _T.TIMESTAMP: pa.timestamp("us"),
    _T.DATETIME: pa.timestamp("us"),
    _T.TIMESTAMPNTZ: pa.timestamp("us"),
    _T.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
    _T.TIMESTAMPLTZ: pa.timestamp("us", tz="UTC"),
    _T.TIMESTAMP_S: pa.timestamp("s"),
    _T.TIMESTAMP_MS: pa.timestamp("ms"),
    _T.TIMESTAMP_NS: pa.timestamp("ns"),
    _T.UUID: pa.uuid(),
    _T.JSON: pa.json_(),
    _T.GEOMETRY: WKB,  # well-known binary, annotated GEOMETRY in files (see .wkb)
}


def arrow_type(dtype: exp.DataType) -> pa.DataType:
    """The Arrow type of a column declared as ``dtype``.

    >>> import sqlglot
    >>> arrow_type(sqlglot.parse_one("CAST(x AS DECIMAL(10, 2))", read="duckdb").to)
    Decimal128Type(decimal128(10, 2))
    >>> arrow_type(sqlglot.parse_one("CAST(x AS STRUCT(a INT, b VARCHAR[]))", read="duckdb").to)
    StructType(struct<a: int32, b: list<item: string>>)

    :raises UnsupportedStatementError: for a type DuckLake cannot store, or the Spark engine cannot write
        (``INTERVAL``).
    """
    kind = dtype.this
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == _T.DECIMAL:
        params = [int(p.this.this) for p in dtype.expressions if isinstance(p, exp.DataTypeParam)]
        precision, scale = (params + [18, 3][len(params) :])[:2] if params else (18, 3)  # DuckDB's default
        return pa.decimal128(precision, scale)
    if kind in (_T.ARRAY, _T.LIST):
        (element,) = dtype.expressions
        return pa.list_(arrow_type(_as_type(element)))
    if kind == _T.STRUCT:
        fields = []
        for member in dtype.expressions:
            if not isinstance(member, exp.ColumnDef):
                raise UnsupportedStatementError(f"Struct field without a name in {dtype.sql('duckdb')}.")
            fields.append(pa.field(member.name, arrow_type(_as_type(member.args["kind"]))))
        return pa.struct(fields)
    if kind == _T.MAP:
        key, value = dtype.expressions
        return pa.map_(arrow_type(_as_type(key)), arrow_type(_as_type(value)))
    if kind in _NOT_ON_SPARK:
        raise not_on_spark(dtype.sql("duckdb"), _NOT_ON_SPARK[kind])
    raise UnsupportedStatementError(f"Column type {dtype.sql('duckdb')} cannot be stored in a DuckLake table.")


def not_on_spark(type_name: str, why: str) -> UnsupportedStatementError:
    """The refusal of a type DuckLake stores but the Spark engine cannot write, naming the engine that can."""
    return UnsupportedStatementError(
        f"Column type {type_name} is not supported on the Spark engine ({why}); DuckDB stores it in DuckLake "
        "tables: run this statement with engine='duckdb'."
    )


#: types DuckLake stores that the Spark engine cannot write, and why (see docs/ducklake.md, Known limits)
_NOT_ON_SPARK: dict[exp.DType, str] = {
    _T.INTERVAL: "Spark's Parquet writer has no interval",
    _T.TIMETZ: "Spark has no time with a time zone",
    _T.VARIANT: "Arrow, which carries rows to and from Spark, has no variant",
}


#: the declared types whose Arrow type (``decimal128(38, 0)``) is another lake type's too
_WIDE_INTEGERS = {_T.INT128: "int128", _T.UINT128: "uint128"}


def wide_integer_type(dtype: exp.DataType) -> str | None:
    """The DuckLake type of a declared 128-bit integer (``HUGEINT``: ``int128``), whose Arrow type
    :func:`arrow_type` gives as ``decimal128(38, 0)`` as DuckDB does; None for every other type.

    >>> import sqlglot
    >>> [wide_integer_type(sqlglot.parse_one(f"CAST(x AS {t})", read="duckdb").to) for t in ("UHUGEINT", "DECIMAL(38, 0)")]
    ['uint128', None]
    """
    return _WIDE_INTEGERS.get(dtype.this)


def _as_type(node: exp.Expression) -> exp.DataType:
    if isinstance(node, exp.DataType):
        return node
    return exp.DataType.build(node.sql("duckdb"), dialect="duckdb")
