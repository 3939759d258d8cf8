"""Column lineage kept in Airflow's metadata database: a compact record in each asset event's extra.

A task that writes a table publishes one asset event per output; its ``extra`` carries, under
:data:`EXTRA_KEY`, the column edges that produced that output and the columns the script read from each
input. The Lakehouse views read these records back, so column lineage needs no OpenLineage backend.

Edges are strings ``"<input>|<column>|<TYPE>|<SUBTYPE>[|masked]"`` (an input is an asset URI or, for what
has none, the dataset key): a TPC-DS query with dozens of columns stays a few kilobytes. Stdlib only.

>>> record = LineageRecord(columns={"total": (Edge("ducklake://main/s.orders", "amount", "DIRECT", "AGGREGATION"),)},
...                        rows=(Edge("ducklake://main/s.orders", "day", "INDIRECT", "FILTER"),),
...                        reads={"ducklake://main/s.orders": ("amount", "day")}, snapshot_read=4, try_number=1)
>>> LineageRecord.from_extra(record.to_extra()) == record
True
>>> record.to_extra()[EXTRA_KEY]["columns"]
{'total': ['ducklake://main/s.orders|amount|DIRECT|AGGREGATION']}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EXTRA_KEY = "column_lineage"
VERSION = 1


@dataclass(frozen=True, order=True)
class Edge:
    """One input column reaching an output (a column, or every row of it for dataset-wide edges)."""

    source: str
    column: str
    type: str
    subtype: str
    masking: bool = False

    def encode(self) -> str:
        return "|".join((self.source, self.column, self.type, self.subtype, *(("masked",) if self.masking else ())))

    @classmethod
    def decode(cls, text: str) -> Edge:
        """Split from the right: a source (a file URI) may itself contain ``|``.

        >>> Edge.decode("s3://b/a|b.csv|x|DIRECT|IDENTITY")
        Edge(source='s3://b/a|b.csv', column='x', type='DIRECT', subtype='IDENTITY', masking=False)
        """
        masking = text.endswith("|masked")
        if masking:
            text = text[: -len("|masked")]
        source, column, type_, subtype = text.rsplit("|", 3)
        return cls(source, column, type_, subtype, masking)


@dataclass(frozen=True)
class LineageRecord:
    """What one task try did to one output.

    :param columns: for each written column, the edges of its values (direct, conditional, window).
    :param rows: edges that decide every written row (joins, filters, grouping).
    :param reads: every input of the script with the columns it read (also those that reach no output).
    :param snapshot_read: the lake snapshot the script read (lakes only).
    :param try_number: the task try that wrote it.
    """

    columns: Mapping[str, tuple[Edge, ...]] = field(default_factory=dict)
    rows: tuple[Edge, ...] = ()
    reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    snapshot_read: int | None = None
    try_number: int | None = None

    def to_extra(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "v": VERSION,
            "columns": {c: [e.encode() for e in edges] for c, edges in sorted(self.columns.items())},
            "rows": [e.encode() for e in self.rows],
            "reads": {k: list(v) for k, v in sorted(self.reads.items())},
        }
        if self.snapshot_read is not None:
            body["snapshot_read"] = self.snapshot_read
        if self.try_number is not None:
            body["try_number"] = self.try_number
        return {EXTRA_KEY: body}

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any] | None) -> LineageRecord | None:
        """The record in an asset event's extra; ``None`` when there is none (or of a version not understood)."""
        body = (extra or {}).get(EXTRA_KEY)
        if not isinstance(body, Mapping) or body.get("v") != VERSION:
            return None
        try:
            return cls(
                columns={
                    str(c): tuple(Edge.decode(e) for e in edges) for c, edges in (body.get("columns") or {}).items()
                },
                rows=tuple(Edge.decode(e) for e in body.get("rows") or ()),
                reads={str(k): tuple(str(c) for c in v) for k, v in (body.get("reads") or {}).items()},
                snapshot_read=_int(body.get("snapshot_read")),
                try_number=_int(body.get("try_number")),
            )
        except (TypeError, ValueError):  # hand-edited or foreign extras: no lineage rather than an error page
            return None


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
