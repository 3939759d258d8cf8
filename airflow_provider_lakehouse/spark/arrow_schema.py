"""Spark schemas as Arrow schemas and back, on every PySpark 4 release.

PySpark's ``to_arrow_schema`` names the session time zone with ``timezone=`` since 4.3 (and asserts without it
for a ``TIMESTAMP``); 4.0 to 4.2 take ``timestamp_utc=True`` instead. The provider supports Spark 4.x, so it
asks for whichever this PySpark has.
"""

from __future__ import annotations

import inspect
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.exceptions import UnsupportedStatementError


def to_arrow_schema(struct: Any, zone: str = "UTC") -> pa.Schema:
    """The Arrow schema of a Spark ``StructType``, its ``TIMESTAMP`` columns as timestamps in ``zone``.

    :raises UnsupportedStatementError: for a column of Spark's ``INTERVAL`` (what a DuckDB ``INTERVAL`` is in Spark
        SQL), which has no Arrow type, naming the column and the engine that writes it.
    """
    from pyspark.sql.pandas import types

    for spark_field in struct.fields:
        if type(spark_field.dataType).__name__ == "CalendarIntervalType":
            from airflow_provider_lakehouse.sql.types import not_on_spark  # sqlglot: only for this refusal

            refusal = not_on_spark("INTERVAL", "Spark cannot hand an interval to Arrow")
            raise UnsupportedStatementError(f"column {spark_field.name!r}: {refusal}")

    convert = types.to_arrow_schema
    if "timezone" in inspect.signature(convert).parameters:
        return convert(struct, timezone=zone)
    return convert(struct, timestamp_utc=True)  # type: ignore[call-arg]  # PySpark 4.0-4.2: always UTC, the provider's session zone


def spark_struct_type(schema: pa.Schema) -> Any:
    """The Spark ``StructType`` of Arrow ``schema``, a timestamp without a zone as ``TIMESTAMP_NTZ``.

    DuckDB's ``TIMESTAMP`` has no zone, and Spark's ``TIMESTAMP_NTZ`` is its match. PySpark's ``from_arrow_schema``
    prefers it by default only from 4.2 on; 4.0 and 4.1 make it a ``TIMESTAMP`` (in the session's zone), which
    turned inlined ``TIMESTAMP`` rows into zoned values there. So the preference is always given.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


def spark_types_of(schema: pa.Schema) -> dict[str, str]:
    """``{column: spark type}`` of a lake read with Arrow ``schema`` (a scan's output schema), as the driver gives
    it to Spark (:func:`.tasks.spark_arrow_schema`, then :func:`spark_struct_type`): what Spark would answer for
    the read's frame, without asking it."""
    from airflow_provider_lakehouse.spark.semantics import named_types
    from airflow_provider_lakehouse.spark.tasks import spark_arrow_schema

    return named_types(spark_struct_type(spark_arrow_schema(schema)))
