"""DataFrame columns by position, for Spark APIs that look columns up by name.

PySpark's ``mapInArrow`` passes its input columns to the function by name, and a name is parsed as a column
path: a result column DuckDB names ``main."substring"(s_city, 1, 30)`` (a dot, quotes) no longer resolves.
Renaming by position (``toDF``) parses nothing, so the function gets positional names and the real ones are
restored on the Arrow side.
"""

from __future__ import annotations

from typing import Any


def positional_names(count: int) -> list[str]:
    """Names that resolve under any parsing: ``_0``, ``_1``, ...

    >>> positional_names(3)
    ['_0', '_1', '_2']
    """
    return [f"_{i}" for i in range(count)]


def by_position(frame: Any) -> tuple[Any, tuple[str, ...]]:
    """``frame`` with positional column names, and its real names in order (to give back to the batches)."""
    names = tuple(frame.columns)
    return frame.toDF(*positional_names(len(names))), names


def quoted(name: str) -> str:
    """A column name as a Spark SQL identifier, whatever characters it holds.

    >>> quoted('main."substring"(s, 1, 30)'), quoted("a`b")
    ('`main."substring"(s, 1, 30)`', '`a``b`')
    """
    return "`" + name.replace("`", "``") + "`"
