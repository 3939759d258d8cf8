"""Spark schemas as Arrow schemas, on every PySpark 4 release.

PySpark's ``to_arrow_schema`` names the session time zone with ``timezone=`` since 4.3 (and asserts without it
for a ``TIMESTAMP``); 4.0 to 4.2 take ``timestamp_utc=True`` instead. The provider supports Spark 4.x, so it
asks for whichever this PySpark has.
"""

from __future__ import annotations

import inspect
from typing import Any

import pyarrow as pa


def to_arrow_schema(struct: Any, zone: str = "UTC") -> pa.Schema:
    """The Arrow schema of a Spark ``StructType``, its ``TIMESTAMP`` columns as timestamps in ``zone``."""
    from pyspark.sql.pandas import types

    convert = types.to_arrow_schema
    if "timezone" in inspect.signature(convert).parameters:
        return convert(struct, timezone=zone)
    return convert(struct, timestamp_utc=True)  # type: ignore[call-arg]  # PySpark 4.0-4.2: always UTC, the provider's session zone
