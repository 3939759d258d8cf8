"""Rows as JSON the browser can show: capped in count, cell size and total bytes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.intervals import interval_text
from airflow_provider_lakehouse.jsonsafe import to_json_safe

MAX_ROWS = 500
MAX_CELL_CHARS = 2_000
MAX_BYTES = 2_000_000


def cell(value: Any) -> Any:
    """A JSON-safe value; long text is cut (the preview is for looking, not for exporting).

    >>> cell("x" * 2500)[-12:]
    '… (500 more)'
    >>> cell(Decimal("12.50")), cell(None)
    ('12.50', None)
    """
    if isinstance(value, Decimal):
        return str(value)  # as DuckDB prints it: decimal(12,2) 12.50 stays "12.50", not the float 12.5
    if isinstance(value, pa.MonthDayNano):
        return interval_text(value)  # as DuckDB prints it: "1 year 2 months 3 days 04:05:06.789"
    safe = to_json_safe(value)
    if isinstance(safe, str) and len(safe) > MAX_CELL_CHARS:
        return f"{safe[:MAX_CELL_CHARS]}… ({len(safe) - MAX_CELL_CHARS} more)"
    if isinstance(safe, (list, dict)):
        text = json.dumps(safe, default=str)
        if len(text) > MAX_CELL_CHARS:
            return f"{text[:MAX_CELL_CHARS]}… ({len(text) - MAX_CELL_CHARS} more)"
    return safe


def capped_rows(rows: Iterable[Sequence[Any]], *, max_bytes: int = MAX_BYTES) -> tuple[list[list[Any]], bool]:
    """Rows with cells made JSON-safe, stopping before ``max_bytes`` of JSON; ``True`` when rows were left out.

    >>> capped_rows([[1, "a"], [2, "b"]], max_bytes=12)
    ([[1, 'a']], True)
    """
    out: list[list[Any]] = []
    size = 0
    for row in rows:
        converted = [cell(v) for v in row]
        size += len(json.dumps(converted, default=str)) + 1
        if size > max_bytes:
            return out, True
        out.append(converted)
    return out, False
