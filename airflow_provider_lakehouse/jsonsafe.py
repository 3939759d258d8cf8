"""Turn database values into data that JSON (and so XCom) carries without loss or surprise."""

from __future__ import annotations

import base64
import datetime as dt
import math
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def to_json_safe(value: Any) -> Any:
    """Convert ``value`` (recursively) to str/int/float/bool/None/list/dict.

    - dates, times and timestamps become ISO 8601 strings;
    - decimals become ints when integral, floats when the float reads back as the same decimal,
      strings otherwise (exactness wins over type);
    - UUIDs, IP addresses and ranges become strings; bytes become base64; intervals become seconds;
    - NaN and infinities become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

    >>> to_json_safe({"d": Decimal("12.50"), "n": Decimal("10"), "big": Decimal("0.1000000000000000000001")})
    {'d': 12.5, 'n': 10, 'big': '0.1000000000000000000001'}
    >>> to_json_safe([dt.date(2024, 1, 2), b"hi", float("nan")])
    ['2024-01-02', 'aGk=', 'NaN']
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): to_json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json_safe(v) for v in value]
    return str(value)  # ranges, inet, enums of other drivers: their text form is what users expect


def _decimal(value: Decimal) -> int | float | str:
    if not value.is_finite():
        return "NaN" if value.is_nan() else ("Infinity" if value > 0 else "-Infinity")
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    return as_float if Decimal(repr(as_float)) == value.normalize() else str(value)
