"""Database values become JSON-safe XCom data."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest

from airflow_provider_lakehouse.datatables import to_json_safe


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("12.50"), 12.5),
        (Decimal("7"), 7),
        (Decimal("123456789012345678901234567890"), 123456789012345678901234567890),
        (Decimal("0.1000000000000000000001"), "0.1000000000000000000001"),
        (Decimal("NaN"), "NaN"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "2024-01-02T03:04:05+00:00"),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.time(12, 30), "12:30:00"),
        (dt.timedelta(days=1, seconds=1), 86401.0),
        (uuid.UUID("12345678-1234-5678-1234-567812345678"), "12345678-1234-5678-1234-567812345678"),
        (b"\x00\xff", "AP8="),
        (memoryview(b"ab"), "YWI="),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        ({"a": [Decimal("1.5"), None, True]}, {"a": [1.5, None, True]}),
        ((1, 2), [1, 2]),
    ],
)
def test_values(value: object, expected: object) -> None:
    converted = to_json_safe(value)
    assert converted == expected
    json.dumps(converted, allow_nan=False)  # really JSON-safe
