"""Spark DataFrame columns whatever their names hold.

DuckDB names result columns like ``main."substring"(s_city, 1, 30)`` (a dot, quotes), and Spark parses a column
name given as a string as a path. :func:`map_in_arrow` hands a frame's columns to PySpark's ``mapInArrow`` by
position, and :func:`quoted` writes a name into generated Spark SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa


def positional_names(count: int) -> list[str]:
    """Names that resolve under any parsing: ``_0``, ``_1``, ...

    >>> positional_names(3)
    ['_0', '_1', '_2']
    """
    return [f"_{i}" for i in range(count)]


def map_in_arrow(
    frame: Any, function: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], schema: str
) -> Any:
    """``frame.mapInArrow(function, schema)`` for a frame with any column names.

    ``mapInArrow`` looks its input columns up by name, parsing each as a path; renaming by position (``toDF``)
    parses nothing, and ``function`` gets its batches with the real names back.
    """
    names = list(frame.columns)

    def with_real_names(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return function(batch.rename_columns(names) for batch in batches)

    return frame.toDF(*positional_names(len(names))).mapInArrow(with_real_names, schema)


def quoted(name: str) -> str:
    """A column name as a Spark SQL identifier, whatever characters it holds.

    >>> quoted('main."substring"(s, 1, 30)'), quoted("a`b")
    ('`main."substring"(s, 1, 30)`', '`a``b`')
    """
    return "`" + name.replace("`", "``") + "`"
