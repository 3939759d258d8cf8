"""DuckDB's ``GEOMETRY`` columns: well-known binary (WKB) values, their Parquet type and their statistics.

DuckDB 1.5 hands a geometry to Arrow and Python as its WKB bytes, and stores it in Parquet as ``BYTE_ARRAY``
with the ``GEOMETRY`` logical type; without that annotation its reader sees a ``BLOB``, which it does not cast to
``GEOMETRY``. pyarrow writes the annotation for a column of the ``geoarrow.wkb`` extension type, so files are
written with :data:`~airflow_provider_lakehouse.sql.wkb.WKB`.

DuckDB keeps no min/max for geometry. Its ``extra_stats`` hold a bounding box and the geometry types seen, as
JSON in one fixed layout (``%f`` numbers, ``null`` for an axis without values, types sorted by name), per file and
per table::

    {"bbox": {"xmin": 0.000000, "xmax": 7.000000, ..., "mmax": null}, "types": ["point", "point_z"]}

A collection counts as its own type (``geometrycollection``), its members' coordinates count for the box, and
an empty geometry counts its type and no coordinates.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pyarrow as pa

from airflow_provider_lakehouse.exceptions import TerminalError
from airflow_provider_lakehouse.sql.wkb import WKB, WkbType

__all__ = [
    "WKB",
    "GeometryStats",
    "InvalidGeometryError",
    "WkbType",
    "from_wkt",
    "geometry_stats",
    "merge_geometry_stats",
    "well_known_binary",
    "wkt",
]

_BASE_TYPES = {
    1: "point",
    2: "linestring",
    3: "polygon",
    4: "multipoint",
    5: "multilinestring",
    6: "multipolygon",
    7: "geometrycollection",
}
# EWKB (PostGIS) flags; ISO WKB adds 1000 (Z), 2000 (M) or 3000 (ZM) to the type instead
_EWKB_Z, _EWKB_M, _EWKB_SRID = 0x80000000, 0x40000000, 0x20000000
_AXES = ("x", "y", "z", "m")


def well_known_binary(array: pa.Array | pa.ChunkedArray, column_name: str) -> pa.Array | pa.ChunkedArray:
    """Values written into geometry column ``column_name`` as ``binary`` well-known binary: another geometry's
    bytes, or text parsed as DuckDB casts it into a geometry (see :func:`from_wkt`).

    :raises InvalidGeometryError: for text that is not well-known text, or values of another type (numbers),
        naming the column.
    """
    if isinstance(array.type, pa.BaseExtensionType):
        array = (
            array.storage
            if isinstance(array, pa.Array)
            else pa.chunked_array([chunk.storage for chunk in array.chunks], array.type.storage_type)
        )
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        parsed = []
        for text in array.to_pylist():
            try:
                parsed.append(None if text is None else from_wkt(text))
            except InvalidGeometryError as exc:
                raise InvalidGeometryError(f"GEOMETRY column {column_name!r}: {exc}") from None
        return pa.array(parsed, pa.binary())
    if not (pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type) or pa.types.is_null(array.type)):
        raise InvalidGeometryError(
            f"GEOMETRY column {column_name!r} takes geometries and their well-known text; {array.type} values "
            "cannot be converted to GEOMETRY."
        )
    return array.cast(pa.binary())


class InvalidGeometryError(TerminalError, ValueError):
    """Bytes that are not well-known binary."""


@dataclass
class GeometryStats:
    """A bounding box per axis and the geometry types seen, merged over values, files and tables."""

    low: dict[str, float] = field(default_factory=dict)
    high: dict[str, float] = field(default_factory=dict)
    types: set[str] = field(default_factory=set)

    def add_coordinate(self, axis: str, value: float) -> None:
        if math.isnan(value):
            return
        self.low[axis] = min(self.low.get(axis, value), value)
        self.high[axis] = max(self.high.get(axis, value), value)

    def merge(self, other: GeometryStats) -> None:
        for axis, value in other.low.items():
            self.add_coordinate(axis, value)
        for axis, value in other.high.items():
            self.add_coordinate(axis, value)
        self.types |= other.types

    def to_json(self) -> str:
        """DuckDB's ``extra_stats`` text for these statistics."""
        box = ", ".join(
            f'"{axis}{end}": {_number(bound.get(axis))}'
            for axis in _AXES
            for end, bound in (("min", self.low), ("max", self.high))
        )
        names = ", ".join(f'"{name}"' for name in sorted(self.types))
        return f'{{"bbox": {{{box}}}, "types": [{names}]}}'

    @classmethod
    def from_json(cls, text: str) -> GeometryStats:
        """Statistics from DuckDB's ``extra_stats`` text."""
        document = json.loads(text)
        stats = cls(types=set(document.get("types") or ()))
        for axis in _AXES:
            for end in ("min", "max"):
                value = (document.get("bbox") or {}).get(f"{axis}{end}")
                if value is not None:
                    stats.add_coordinate(axis, float(value))
        return stats


def _number(value: float | None) -> str:
    return "null" if value is None else f"{value:f}"


def geometry_stats(values: Iterable[bytes | None]) -> str:
    """DuckDB's ``extra_stats`` for a file's geometry column holding ``values`` (WKB, ``None`` for NULL).

    >>> geometry_stats([bytes.fromhex("0101000000000000000000f03f0000000000000040"), None])
    '{"bbox": {"xmin": 1.000000, "xmax": 1.000000, "ymin": 2.000000, "ymax": 2.000000, "zmin": null, "zmax": null, \
"mmin": null, "mmax": null}, "types": ["point"]}'
    """
    stats = GeometryStats()
    for value in values:
        if value is not None:
            _Reader(value, stats).geometry(top_level=True)
    return stats.to_json()


def merge_geometry_stats(current: str | None, new: str | None) -> str | None:
    """Two ``extra_stats`` texts as one; unknown (``None``) when either is."""
    if current is None or new is None:
        return None
    merged = GeometryStats.from_json(current)
    merged.merge(GeometryStats.from_json(new))
    return merged.to_json()


@dataclass(frozen=True)
class _Header:
    little: bool
    base: int
    has_z: bool
    has_m: bool

    @property
    def suffix(self) -> str:
        """`` Z``, `` M``, `` ZM`` or nothing, as well-known text follows a type name with it."""
        return " ZM" if self.has_z and self.has_m else " Z" if self.has_z else " M" if self.has_m else ""


class _Cursor:
    """Reads one WKB value front to back: its headers, counts and coordinates."""

    def __init__(self, data: bytes) -> None:
        self.data, self.offset = data, 0

    def _unpack(self, fmt: str, little: bool) -> tuple[float | int, ...]:
        layout = ("<" if little else ">") + fmt
        size = struct.calcsize(layout)
        if self.offset + size > len(self.data):
            raise InvalidGeometryError(f"well-known binary ends after {len(self.data)} bytes")
        values = struct.unpack_from(layout, self.data, self.offset)
        self.offset += size
        return values

    def header(self) -> _Header:
        """The next geometry's byte order, type and dimensions (ISO WKB or PostGIS's EWKB)."""
        (order,) = self._unpack("B", True)
        if order not in (0, 1):
            raise InvalidGeometryError(f"not well-known binary (byte order {order})")
        little = order == 1
        code = self._count(little)
        has_z, has_m = bool(code & _EWKB_Z), bool(code & _EWKB_M)
        if code & _EWKB_SRID:
            self._unpack("I", little)
        code &= 0x0FFFFFFF
        dimensions, base = divmod(code, 1000)
        if base not in _BASE_TYPES:
            raise InvalidGeometryError(f"unknown well-known binary geometry type {code}")
        return _Header(little, base, has_z or dimensions in (1, 3), has_m or dimensions in (2, 3))

    def _count(self, little: bool) -> int:
        return int(self._unpack("I", little)[0])


class _Reader(_Cursor):
    """One WKB value, read into :class:`GeometryStats`."""

    def __init__(self, data: bytes, stats: GeometryStats) -> None:
        super().__init__(data)
        self.stats = stats

    def geometry(self, *, top_level: bool = False) -> None:
        head = self.header()
        little, base, has_z, has_m = head.little, head.base, head.has_z, head.has_m
        if top_level:
            self.stats.types.add(_BASE_TYPES[base] + head.suffix.replace(" ", "_").lower())
        axes = ("x", "y") + (("z",) if has_z else ()) + (("m",) if has_m else ())
        if base == 1:
            self._points(1, axes, little)
        elif base == 2:
            self._points(self._count(little), axes, little)
        elif base == 3:
            for _ring in range(self._count(little)):
                self._points(self._count(little), axes, little)
        else:
            for _member in range(self._count(little)):
                self.geometry()

    def _points(self, count: int, axes: tuple[str, ...], little: bool) -> None:
        for _point in range(count):
            for axis, value in zip(axes, self._unpack("d" * len(axes), little), strict=True):
                self.stats.add_coordinate(axis, float(value))


def wkt(data: bytes) -> str:
    """DuckDB's text of a geometry (``CAST(g AS VARCHAR)``): well-known text, numbers in their shortest form.

    >>> wkt(bytes.fromhex("01e9030000000000000000f03f00000000000000400000000000000840"))
    'POINT Z (1 2 3)'
    """
    return _TextReader(data).text()


def _number_text(value: float) -> str:
    text = repr(value)  # the shortest text that reads back as the same double, as DuckDB prints it
    return text[:-2] if text.endswith(".0") else text


class _TextReader(_Cursor):
    """One WKB value, read into DuckDB's well-known text."""

    def text(self) -> str:
        name, dimensions, body = self._parts()
        return f"{name.upper()}{dimensions} {body}"

    def _parts(self) -> tuple[str, str, str]:
        """A geometry's type name, its dimension suffix (`` Z``, `` M``, `` ZM`` or nothing) and its body."""
        head = self.header()
        little, base, name, suffix = head.little, head.base, _BASE_TYPES[head.base], head.suffix
        width = 2 + head.has_z + head.has_m
        if base == 1:
            point = self._point(width, little)
            return name, suffix, "EMPTY" if point is None else f"({point})"
        if base == 2:
            return name, suffix, self._sequence(width, little)
        if base == 3:
            rings = [self._sequence(width, little) for _ring in range(self._count(little))]
            return name, suffix, _listed(rings)
        members = [self._parts() for _member in range(self._count(little))]
        if base == 7:  # a collection's members keep their names
            return name, suffix, _listed([f"{m[0].upper()}{m[1]} {m[2]}" for m in members])
        if base == 4:  # a multipoint's points without their parentheses
            return name, suffix, _listed([m[2][1:-1] if m[2] != "EMPTY" else m[2] for m in members])
        return name, suffix, _listed([m[2] for m in members])

    def _sequence(self, width: int, little: bool) -> str:
        return _listed([self._point(width, little) or "EMPTY" for _point in range(self._count(little))])

    def _point(self, width: int, little: bool) -> str | None:
        values = [float(v) for v in self._unpack("d" * width, little)]
        if all(math.isnan(v) for v in values):
            return None
        return " ".join(_number_text(v) for v in values)


def _listed(parts: list[str]) -> str:
    return f"({', '.join(parts)})" if parts else "EMPTY"


#: what ISO WKB adds to a geometry's type code for its dimensions, by well-known text's tag
_ISO_DIMENSIONS = {"": 0, "Z": 1000, "M": 2000, "ZM": 3000}
_WKT_TOKEN = re.compile(r"\s*(?:([A-Za-z]+)|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)|([(),]))")
_TYPE_CODES = {name.upper(): code for code, name in _BASE_TYPES.items()}


def from_wkt(text: str) -> bytes:
    """A geometry's well-known binary from its text, as DuckDB encodes it (little-endian ISO WKB, an empty point
    as NaN coordinates): for the defaults DuckDB stores as text (``ADD COLUMN g GEOMETRY DEFAULT 'POINT(1 2)'``).

    >>> from_wkt("POINT Z (1 2 3)").hex()
    '01e9030000000000000000f03f00000000000000400000000000000840'

    :raises InvalidGeometryError: for text that is not well-known text.
    """
    return _WktParser(text).geometry()  # what follows the geometry is ignored, as DuckDB 1.5.5 ignores it


class _WktParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        position = 0
        while position < len(text.rstrip()):
            match = _WKT_TOKEN.match(text, position)
            if match is None or match.end() == position:
                break  # the parser fails if it needs what follows, and ignores it otherwise
            self.tokens.append(match.group(match.lastindex or 0).upper())
            position = match.end()
        self.index = 0

    def _peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise InvalidGeometryError(f"not well-known text: {self.text!r}")
        self.index += 1
        return token

    def geometry(self, collection: str | None = None) -> bytes:
        """One tagged geometry; a collection's member must carry the collection's own tag (DuckDB's rule)."""
        name = self._take()
        if name not in _TYPE_CODES:
            raise InvalidGeometryError(f"not well-known text: {self.text!r}")
        dimensions = self._take() if self._peek() in ("Z", "M", "ZM") else ""
        if collection is not None and dimensions != collection:
            raise InvalidGeometryError(f"geometry has inconsistent Z/M dimensions: {self.text!r}")
        return self._body(_TYPE_CODES[name], dimensions)

    def _body(self, base: int, dimensions: str) -> bytes:
        width = 2 + len(dimensions)
        head = _wkb_header(base, dimensions)
        empty = self._peek() == "EMPTY"
        if empty:
            self._take()
        if base == 1:
            return head + (_empty_point(width) if empty else self._wrapped_point(width))
        if empty:
            return head + struct.pack("<I", 0)
        if base == 2:
            return head + self._sequence(width)
        if base == 3:
            return head + self._listed(lambda: self._sequence(width))
        if base == 4:
            return head + self._listed(lambda: self._multipoint_member(width, dimensions))
        if base == 7:
            return head + self._listed(lambda: self.geometry(dimensions))
        member = 2 if base == 5 else 3
        return head + self._listed(lambda: self._body(member, dimensions))

    def _listed(self, item: Callable[[], bytes]) -> bytes:
        self._take("(")
        parts = [item()]
        while self._peek() == ",":
            self._take()
            parts.append(item())
        self._take(")")
        return struct.pack("<I", len(parts)) + b"".join(parts)

    def _sequence(self, width: int) -> bytes:
        if self._peek() == "EMPTY":
            self._take()
            return struct.pack("<I", 0)
        return self._listed(lambda: self._coordinates(width))

    def _wrapped_point(self, width: int) -> bytes:
        self._take("(")
        point = self._coordinates(width)
        self._take(")")
        return point

    def _multipoint_member(self, width: int, dimensions: str) -> bytes:
        head = _wkb_header(1, dimensions)
        if self._peek() == "EMPTY":
            self._take()
            return head + _empty_point(width)
        return head + (self._wrapped_point(width) if self._peek() == "(" else self._coordinates(width))

    def _coordinates(self, width: int) -> bytes:
        values = []
        for _axis in range(width):
            try:
                values.append(float(self._take()))
            except ValueError:
                raise InvalidGeometryError(f"not well-known text: {self.text!r}") from None
        return struct.pack(f"<{width}d", *values)


def _wkb_header(base: int, dimensions: str) -> bytes:
    """A little-endian ISO WKB header: the byte order, then the type code with its dimensions."""
    return struct.pack("<BI", 1, base + _ISO_DIMENSIONS[dimensions])


def _empty_point(width: int) -> bytes:
    """An empty point's coordinates, as DuckDB writes them: NaN on every axis."""
    return struct.pack(f"<{width}d", *[math.nan] * width)
