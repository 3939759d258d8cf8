"""The Arrow type of a ``GEOMETRY`` column: well-known binary (WKB) as Arrow's ``geoarrow.wkb`` extension type.

pyarrow annotates a column of this type as Parquet ``GEOMETRY``, which is how DuckDB stores its geometry columns
(without the annotation DuckDB reads a ``BLOB``, which it does not cast to ``GEOMETRY``). The type is never
registered with pyarrow: writing needs the type, reading does not, and another library (geoarrow) may register its
own under the same name.
"""

from __future__ import annotations

import pyarrow as pa


class WkbType(pa.ExtensionType):
    """Arrow's ``geoarrow.wkb`` over ``binary``: what makes pyarrow annotate a column as Parquet ``GEOMETRY``."""

    def __init__(self) -> None:
        super().__init__(pa.binary(), "geoarrow.wkb")

    def __arrow_ext_serialize__(self) -> bytes:
        return b"{}"  # no CRS: DuckDB writes ``Geometry(crs=)``

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> WkbType:
        return cls()


#: the storage type of a ``geometry`` column
WKB = WkbType()
