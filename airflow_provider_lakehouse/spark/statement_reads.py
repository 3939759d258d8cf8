"""The DataFrames a planned statement reads, handed to ``spark.sql`` with its text instead of as temp views.

The planner names every read of a statement (a lake table, files, a catalog function, a Data Table) with a view
name of its own (``__lake_<schema>__<table>_<token>_<n>`` and the like). Registering each as a session temp view
and dropping it afterwards costs two Spark Connect round trips and an analysis per read; TPC-DS's validation
checks read 67 tables. PySpark's ``spark.sql(text, **frames)`` takes the frames with the query instead: Spark
Connect sends them inside the one SQL request, and a classic session registers and drops them itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any


class StatementReads:
    """The frames planned statements read, by the planner's view name."""

    def __init__(self) -> None:
        self._frames: dict[str, Any] = {}

    def add(self, view: str, frame: Any) -> None:
        """Make ``view`` in a statement's text read ``frame``."""
        self._frames[view] = frame

    def read_by(self, text: str) -> dict[str, Any]:
        """The reads ``text`` names, by view name."""
        return {view: frame for view, frame in self._frames.items() if _names(text, view)}

    def sql(self, spark: Any, text: str, args: Mapping[str, Any] | None = None) -> Any:
        """``spark.sql`` of ``text`` with the frames of the reads it names passed along."""
        frames = self.read_by(text)
        if not frames:
            return spark.sql(text, args=dict(args) if args else None)
        return spark.sql(template(text, frames), args=dict(args) if args else None, **frames)

    def clear(self) -> None:
        self._frames.clear()


def template(text: str, views: Collection[str]) -> str:
    """``text`` as PySpark's SQL formatter reads it: braces doubled, each of ``views`` a ``{view}`` field.

    >>> template("SELECT '{}' AS s FROM `__lake_a_1` AS a JOIN __lake_a_10 AS b", ["__lake_a_1", "__lake_a_10"])
    "SELECT '{{}}' AS s FROM {__lake_a_1} AS a JOIN {__lake_a_10} AS b"
    """
    escaped = text.replace("{", "{{").replace("}", "}}")
    if not views:
        return escaped
    names = "|".join(re.escape(view) for view in sorted(views, key=len, reverse=True))
    return re.sub(rf"`?\b({names})\b`?", lambda match: "{" + match.group(1) + "}", escaped)


def _names(text: str, view: str) -> bool:
    return view in text and re.search(rf"\b{re.escape(view)}\b", text) is not None
