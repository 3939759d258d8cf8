"""Decode (and encode) values of inlined rows, which DuckDB stores in catalog-database types.

PostgreSQL keeps text-like values as BYTEA, timestamps/dates/nested values as DuckDB's text form;
SQLite keeps floats, decimals, timestamps and nested values as text, booleans as 0/1 (spec 8.3).
Nested text looks like DuckDB's VARCHAR casts: ``[a, b]``, ``{'a': 5, 'b': x}``, ``{k=1}``.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.blob_text import blob_from_text
from airflow_provider_lakehouse.ducklake.geometry import from_wkt
from airflow_provider_lakehouse.ducklake.intervals import parse_interval
from airflow_provider_lakehouse.ducklake.types import NESTED, Column, arrow_type

_TZ_SUFFIX = re.compile(r"([+-]\d\d)(:?\d\d)?$")
#: the integer types (``interval`` also starts with "int")
_INTEGER = re.compile(r"^u?int\d+$")


def parse_timestamp(text: str, *, with_tz: bool) -> dt.datetime:
    """Parse DuckDB's timestamp text (``2024-01-02 03:04:05.5``, ``...+00``, ``...+05:30``)."""
    text = text.strip().replace("T", " ")
    tz: dt.timezone | None = None
    match = _TZ_SUFFIX.search(text) if len(text) > 10 else None
    if match and (":" in text[: -len(match.group(0))] or len(text) > 19):
        hours = int(match.group(1))
        minutes = int(match.group(2).lstrip(":")) if match.group(2) else 0
        tz = dt.timezone(dt.timedelta(hours=hours, minutes=minutes if hours >= 0 else -minutes))
        text = text[: match.start()]
    date_part, _, time_part = text.partition(" ")
    if "." in time_part:
        whole, frac = time_part.split(".", 1)
        time_part = f"{whole}.{(frac + '000000')[:6]}"
    value = dt.datetime.fromisoformat(f"{date_part} {time_part or '00:00:00'}")
    if with_tz:
        value = value.replace(tzinfo=tz or dt.UTC).astimezone(dt.UTC)
    return value


#: the offset at the end of DuckDB's TIMETZ text (``12:00:00.5+02``, ``23:30:00-05:30``)
_TIME_OFFSET = re.compile(r"[+-]\d{2}(?::?\d{2}){0,2}$")


def parse_time(text: str) -> dt.time:
    whole, _, frac = text.strip().partition(".")
    return dt.time.fromisoformat(whole + (f".{(frac + '000000')[:6]}" if frac else ""))


def decode_value(value: Any, column: Column) -> Any:
    """Turn one stored inlined value into the Python value Arrow expects for ``column``."""
    if value is None:
        return None
    kind = column.type
    if kind in NESTED:
        text = bytes(value).decode() if isinstance(value, (bytes, memoryview)) else str(value)
        return _NestedParser(text).parse(column)
    return _scalar(value, column)


def _scalar(value: Any, column: Column) -> Any:
    kind = column.type
    if isinstance(value, memoryview):
        value = bytes(value)
    if kind in ("varchar", "json"):
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)
    if kind == "blob":
        return value if isinstance(value, bytes) else blob_from_text(str(value))
    if kind == "geometry":  # never inlined; a default is DuckDB's text of the geometry
        return value if isinstance(value, bytes) else from_wkt(str(value))
    if kind == "boolean":
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1", "t")
        return bool(value)
    if _INTEGER.match(kind):
        return int(value)
    if kind in ("float32", "float64"):
        return float(value)
    if kind.startswith("decimal"):
        return value if isinstance(value, Decimal) else Decimal(str(value))
    if kind == "uuid":
        return str(value) if isinstance(value, uuid.UUID) else str(uuid.UUID(str(value)))
    if kind == "date":
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value).strip())
    if kind == "timetz":  # DuckDB hands Arrow the time of day as written, without its offset
        if isinstance(value, dt.time):
            return value.replace(tzinfo=None)
        return parse_time(_TIME_OFFSET.sub("", str(value).strip()))
    if kind.startswith("time") and not kind.startswith("timestamp"):
        return value if isinstance(value, dt.time) else parse_time(str(value))
    if kind.startswith("timestamp"):
        if isinstance(value, dt.datetime):
            return value
        return parse_timestamp(str(value), with_tz=kind == "timestamptz")
    if kind == "interval":
        return value if isinstance(value, pa.MonthDayNano) else parse_interval(str(value))
    arrow_type(column)  # a type no reader here supports fails naming it and the column
    return value


class _NestedParser:
    """Recursive-descent parser for DuckDB's text form of LIST / STRUCT / MAP values."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def parse(self, column: Column) -> Any:
        value = self._value(column)
        return value

    def _ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] == " ":
            self.i += 1

    def _peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def _expect(self, ch: str) -> None:
        self._ws()
        if self._peek() != ch:
            raise ValueError(f"Cannot parse inlined nested value {self.text!r}: expected {ch!r} at {self.i}.")
        self.i += 1

    def _value(self, column: Column) -> Any:
        self._ws()
        kind = column.type
        if kind == "list":
            return self._list(column.children[0])
        if kind == "struct":
            return self._struct(column)
        if kind == "map":
            return self._map(column.children[0], column.children[1])
        token, quoted = self._token(stops=",]}=:")
        if not quoted and token == "NULL":
            return None
        return _scalar(token, column)

    def _token(self, stops: str) -> tuple[str, bool]:
        self._ws()
        ch = self._peek()
        if ch in ("'", '"'):
            quote = ch
            self.i += 1
            out = []
            while self.i < len(self.text):
                c = self.text[self.i]
                if c == "\\" and self.i + 1 < len(self.text):
                    out.append(self.text[self.i + 1])
                    self.i += 2
                    continue
                if c == quote:
                    if self.text[self.i + 1 : self.i + 2] == quote:  # doubled quote
                        out.append(quote)
                        self.i += 2
                        continue
                    self.i += 1
                    break
                out.append(c)
                self.i += 1
            return "".join(out), True
        start = self.i
        depth = 0
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in "[{(":
                depth += 1
            elif c in ")]}" and depth:
                depth -= 1
            elif depth == 0 and c in stops:
                break
            self.i += 1
        return self.text[start : self.i].strip(), False

    def _null(self) -> bool:
        """Consume a ``NULL`` literal standing for a whole nested value."""
        if self.text.startswith("NULL", self.i):
            self.i += 4
            return True
        return False

    def _list(self, element: Column) -> list[Any] | None:
        if self._null():
            return None
        self._expect("[")
        items: list[Any] = []
        self._ws()
        if self._peek() == "]":
            self.i += 1
            return items
        while True:
            items.append(self._value(element))
            self._ws()
            if self._peek() == ",":
                self.i += 1
                continue
            self._expect("]")
            return items

    def _struct(self, column: Column) -> dict[str, Any] | None:
        if self._null():
            return None
        self._expect("{")
        by_name = {c.name: c for c in column.children}
        out: dict[str, Any] = {c.name: None for c in column.children}
        self._ws()
        if self._peek() == "}":
            self.i += 1
            return out
        while True:
            key, _ = self._token(stops=":")
            self._expect(":")
            child = by_name.get(key) or next((c for c in column.children if c.name.lower() == key.lower()), None)
            if child is None:
                raise ValueError(f"Inlined struct value {self.text!r} has unknown field {key!r}.")
            out[child.name] = self._value(child)
            self._ws()
            if self._peek() == ",":
                self.i += 1
                continue
            self._expect("}")
            return out

    def _map(self, key_col: Column, value_col: Column) -> list[tuple[Any, Any]] | None:
        if self._null():
            return None
        self._expect("{")
        pairs: list[tuple[Any, Any]] = []
        self._ws()
        if self._peek() == "}":
            self.i += 1
            return pairs
        while True:
            key_text, _ = self._token(stops="=")
            self._expect("=")
            pairs.append((_scalar(key_text, key_col), self._value(value_col)))
            self._ws()
            if self._peek() == ",":
                self.i += 1
                continue
            self._expect("}")
            return pairs
