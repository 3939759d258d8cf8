"""DuckDB's ``INTERVAL`` for the Python reader: months, days and nanoseconds (Arrow's ``month_day_nano_interval``,
what DuckDB hands to Arrow), from the two places a DuckLake keeps them.

- **Data files**: DuckDB writes Parquet's ``INTERVAL`` (a 12-byte fixed-length value: months, days and
  milliseconds, little-endian), so a file keeps milliseconds only. DuckDB reads months and days as signed 32-bit
  integers and milliseconds as unsigned, and so does :func:`from_parquet`.
- **Inlined rows**: the catalog keeps the exact value, in its own type (Postgres ``interval``) or as DuckDB's
  text (SQLite), both read here as text (:func:`parse_interval`).

The Spark engine reads no intervals (Spark's Parquet reader and Arrow conversion have none): see
:func:`airflow_provider_lakehouse.ducklake.types.arrow_type`.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

INTERVAL_TYPE = pa.month_day_nano_interval()
_NANOS_PER_MICRO = 1_000
_MICROS_PER_SECOND = 1_000_000
# "1 year 2 mons 3 days 04:05:06.789" (Postgres) or "… 2 months …" (DuckDB); each part may be negative
_PART = re.compile(r"(-?\d+)\s+(year|years|mon|mons|month|months|day|days)\b", re.IGNORECASE)
_TIME = re.compile(r"(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_MONTHS = {"year": 12, "years": 12, "mon": 1, "mons": 1, "month": 1, "months": 1, "day": 0, "days": 0}
_MONTH_DAY_NANO = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])


def from_parquet(array: pa.Array) -> pa.Array:
    """A Parquet ``INTERVAL`` column (``fixed_size_binary(12)``) as Arrow intervals, read as DuckDB reads it.

    >>> raw = pa.array([b"\\x0e\\x00\\x00\\x00\\x03\\x00\\x00\\x00\\x15\\x03\\x00\\x00", None], pa.binary(12))
    >>> from_parquet(raw).to_pylist()
    [MonthDayNano(months=14, days=3, nanoseconds=789000000), None]
    """
    parts = np.frombuffer(array.buffers()[1], dtype="<u4", count=3 * (array.offset + len(array)))
    parts = parts.reshape(-1, 3)[array.offset :]
    values = np.zeros(len(array), dtype=_MONTH_DAY_NANO)
    values["months"] = parts[:, 0].view("<i4")
    values["days"] = parts[:, 1].view("<i4")
    values["nanos"] = parts[:, 2].astype(np.int64) * 1_000_000
    validity = array.is_valid().buffers()[1] if array.null_count else None
    return pa.Array.from_buffers(INTERVAL_TYPE, len(array), [validity, pa.py_buffer(values.tobytes())])


def parse_interval(text: str) -> pa.MonthDayNano:
    """An interval's text, in Postgres's default style or DuckDB's, as months, days and nanoseconds.

    >>> parse_interval("1 year 2 mons 3 days 04:05:06.789123")
    MonthDayNano(months=14, days=3, nanoseconds=14706789123000)
    >>> parse_interval("-1 years -2 months -04:00:00.5"), parse_interval("00:00:00")
    (MonthDayNano(months=-14, days=0, nanoseconds=-14400500000000), MonthDayNano(months=0, days=0, nanoseconds=0))

    :raises ValueError: for text that is no interval.
    """
    months = days = 0
    for count, unit in _PART.findall(text):
        if _MONTHS[unit.lower()]:
            months += int(count) * _MONTHS[unit.lower()]
        else:
            days += int(count)
    micros = 0
    time = _TIME.search(text)
    if time:
        sign, hours, minutes, seconds, fraction = time.groups()
        micros = (int(hours) * 3600 + int(minutes) * 60 + int(seconds)) * _MICROS_PER_SECOND
        micros += int((fraction or "").ljust(6, "0")[:6])
        micros = -micros if sign else micros
    elif not _PART.search(text):
        raise ValueError(f"not an interval: {text!r}")
    return pa.MonthDayNano([months, days, micros * _NANOS_PER_MICRO])


def interval_text(value: pa.MonthDayNano) -> str:
    """DuckDB's text of an interval (``CAST(iv AS VARCHAR)``).

    >>> interval_text(parse_interval("1 year 2 months 3 days 04:05:06.789"))
    '1 year 2 months 3 days 04:05:06.789'
    >>> interval_text(parse_interval("13 mons")), interval_text(parse_interval("-5 days")), interval_text(parse_interval("0 days"))
    ('1 year 1 month', '-5 days', '00:00:00')
    >>> interval_text(pa.MonthDayNano([-14, 0, -(2**62) - 999]))  # no float on the way: exact to the microsecond
    '-1 year -2 months -1281023:53:38.427388'
    """
    months, days, nanos = value.months, value.days, value.nanoseconds
    years = _toward_zero(months, 12)
    months -= years * 12  # both keep the interval's sign, as DuckDB's do
    parts = [
        f"{count} {unit}{'' if count in (1, -1) else 's'}"
        for count, unit in ((years, "year"), (months, "month"), (days, "day"))
        if count
    ]
    micros = _toward_zero(nanos, _NANOS_PER_MICRO)
    if micros or not parts:
        sign, micros = ("-", -micros) if micros < 0 else ("", micros)
        seconds, fraction = divmod(micros, _MICROS_PER_SECOND)
        text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        parts.append(f"{text}.{fraction:06d}".rstrip("0") if fraction else text)
    return " ".join(parts)


def _toward_zero(value: int, divisor: int) -> int:
    """Integer division rounding toward zero (C's, DuckDB's), exact for any 64-bit value."""
    quotient = abs(value) // divisor
    return -quotient if value < 0 else quotient
