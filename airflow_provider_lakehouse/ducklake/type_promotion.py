"""Which column type changes DuckLake allows (``ALTER TABLE … ALTER COLUMN … TYPE``), as DuckDB 1.5 decides them.

DuckDB's ``ducklake`` allows a change when the new type is what DuckDB's implicit casts would widen the two types
to (``MaxLogicalType(old, new) == new``): a wider integer, a float, a decimal with room for every old value, a
finer timestamp. Files written before the change keep the old type; readers cast them (see
:func:`~airflow_provider_lakehouse.ducklake.reader.widened`). The rules below are DuckDB's, measured against it
for every pair of scalar types (``tests/unit/test_type_promotion.py`` keeps them honest against DuckDB itself).
"""

from __future__ import annotations

import re

#: the decimal digits of each integer type, as DuckDB counts them when it widens an integer to a DECIMAL
_INTEGER_DIGITS = {
    "int8": 3,
    "int16": 5,
    "int32": 10,
    "int64": 19,
    "int128": 38,
    "uint8": 3,
    "uint16": 5,
    "uint32": 10,
    "uint64": 20,
}
_MAX_DECIMAL_WIDTH = 38
#: integer and boolean types, each with the integer types it widens to
_INTEGER_WIDENINGS = {
    "int8": {"int16", "int32", "int64", "int128"},
    "int16": {"int32", "int64", "int128"},
    "int32": {"int64", "int128"},
    "int64": {"int128"},
    "int128": set(),
    "uint8": {"int16", "int32", "int64", "int128", "uint16", "uint32", "uint64"},
    "uint16": {"int32", "int64", "int128", "uint32", "uint64"},
    "uint32": {"int64", "int128", "uint64"},
    "uint64": {"int128"},
    "boolean": {"int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64"},
}
_TEMPORAL_WIDENINGS = {
    "date": {"timestamp", "timestamptz", "timestamp_s", "timestamp_ms", "timestamp_ns"},
    "timestamp_s": {"timestamp", "timestamp_ms", "timestamp_ns"},
    "timestamp_ms": {"timestamp", "timestamp_ns"},
    "timestamp": {"timestamptz", "timestamp_ns"},
    "float32": {"float64"},
}
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_FLOATS = {"float32", "float64"}


def promotion_allowed(old: str, new: str) -> bool:
    """Whether DuckDB lets a column of DuckLake type ``old`` become ``new`` (it lets an unchanged type be "changed"
    too: the statement changes nothing).

    >>> promotion_allowed("int32", "int64"), promotion_allowed("int64", "int32")
    (True, False)
    >>> promotion_allowed("int16", "decimal(10,2)"), promotion_allowed("int16", "decimal(4,1)")
    (True, False)
    >>> promotion_allowed("decimal(10,2)", "decimal(12,3)"), promotion_allowed("decimal(10,2)", "decimal(10,3)")
    (True, False)
    >>> promotion_allowed("decimal(38,5)", "decimal(38,0)"), promotion_allowed("decimal(20,0)", "decimal(38,30)")
    (True, False)
    >>> promotion_allowed("date", "timestamp"), promotion_allowed("varchar", "int64")
    (True, False)
    """
    old, new = _normal(old), _normal(new)
    if old == new:
        return True
    new_decimal = _DECIMAL.match(new)
    if old in _INTEGER_WIDENINGS:
        if new in _INTEGER_WIDENINGS[old]:
            return True
        if old == "boolean":
            return False
        if new in _FLOATS:
            return True
        return new_decimal is not None and _fits(_INTEGER_DIGITS[old], 0, new_decimal)
    old_decimal = _DECIMAL.match(old)
    if old_decimal is not None:
        if new in _FLOATS:
            return True
        return new_decimal is not None and _wider_decimal(old_decimal, new_decimal)
    return new in _TEMPORAL_WIDENINGS.get(old, set())


#: DuckDB's names of the DuckLake types, as its error messages print them
_DUCKDB_NAMES = {
    "boolean": "BOOLEAN",
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "int128": "HUGEINT",
    "uint8": "UTINYINT",
    "uint16": "USMALLINT",
    "uint32": "UINTEGER",
    "uint64": "UBIGINT",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "varchar": "VARCHAR",
    "json": "JSON",
    "blob": "BLOB",
    "uuid": "UUID",
    "date": "DATE",
    "time": "TIME",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
    "timestamp_s": "TIMESTAMP_S",
    "timestamp_ms": "TIMESTAMP_MS",
    "timestamp_ns": "TIMESTAMP_NS",
}


def promotion_refused(column: str, old: str, new: str) -> str:
    """DuckDB's error for a type change it does not allow.

    >>> promotion_refused("a", "int64", "int32")
    'Catalog Error: Cannot change type of column a from BIGINT to INTEGER - only widening type promotions are allowed'
    """
    return (
        f"Catalog Error: Cannot change type of column {column} from {duckdb_type_name(old)} to "
        f"{duckdb_type_name(new)} - only widening type promotions are allowed"
    )


def duckdb_type_name(kind: str) -> str:
    """How DuckDB prints a DuckLake type (``decimal(12,2)`` → ``DECIMAL(12,2)``)."""
    kind = _normal(kind)
    return _DUCKDB_NAMES.get(kind) or kind.upper()


def _fits(integer_digits: int, scale: int, target: re.Match[str]) -> bool:
    """Whether ``DECIMAL(p, s)`` holds every value with ``integer_digits`` digits before the point and ``scale``
    after it (DuckDB caps the width it would need at 38 digits)."""
    precision, target_scale = int(target.group(1)), int(target.group(2))
    return target_scale >= scale and precision >= min(_MAX_DECIMAL_WIDTH, integer_digits + target_scale)


def _wider_decimal(old: re.Match[str], new: re.Match[str]) -> bool:
    """Whether ``new`` is the decimal DuckDB widens ``old`` and ``new`` to: the larger count of integer digits and the
    larger scale, the scale cut back to stay within 38 digits."""
    old_precision, old_scale, precision, scale = (int(g) for g in (*old.groups(), *new.groups()))
    integer_digits = max(old_precision - old_scale, precision - scale)
    wide_scale = max(old_scale, scale)
    if integer_digits + wide_scale > _MAX_DECIMAL_WIDTH:
        wide_scale = _MAX_DECIMAL_WIDTH - integer_digits
    return (integer_digits + wide_scale, wide_scale) == (precision, scale)


def _normal(kind: str) -> str:
    return re.sub(r"\s+", "", kind.lower())
