"""``ducklake_snapshot_changes.changes_made``: DuckDB's change tokens, written and parsed (spec 3.3).

Only DuckDB's own tokens may appear: any other makes DuckDB throw "Unsupported change type".
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field

TOKEN_ORDER = (
    "dropped_schema",
    "dropped_table",
    "dropped_view",
    "created_schema",
    "created_table",
    "created_view",
    "created_scalar_macro",
    "created_table_macro",
    "dropped_scalar_macro",
    "dropped_table_macro",
    "inserted_into_table",
    "deleted_from_table",
    "altered_table",
    "altered_view",
    "inlined_insert",
    "inlined_delete",
    "inline_flush",
    "flushed_inlined",
    "merge_adjacent",
    "rewrite_delete",
    "compacted_table",
)


def quote(name: str) -> str:
    """SQL-style double quoting, ``"`` doubled.

    >>> quote('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


@dataclass
class ChangeSet:
    """What one commit did (or what several commits did, when parsed from a range)."""

    created_schemas: set[str] = field(default_factory=set)
    dropped_schemas: set[int] = field(default_factory=set)
    created_tables: set[tuple[str, str]] = field(default_factory=set)
    dropped_tables: set[int] = field(default_factory=set)
    created_views: set[tuple[str, str]] = field(default_factory=set)
    dropped_views: set[int] = field(default_factory=set)
    inserted: set[int] = field(default_factory=set)
    deleted: set[int] = field(default_factory=set)
    altered: set[int] = field(default_factory=set)
    inlined_insert: set[int] = field(default_factory=set)
    inlined_delete: set[int] = field(default_factory=set)
    flushed: set[int] = field(default_factory=set)
    compacted: set[int] = field(default_factory=set)
    other: list[tuple[str, str]] = field(default_factory=list)

    def tokens(self) -> list[str]:
        """The ``changes_made`` entries, in DuckDB's order."""
        by_kind: dict[str, list[str]] = {
            "dropped_schema": [str(i) for i in sorted(self.dropped_schemas)],
            "dropped_table": [str(i) for i in sorted(self.dropped_tables)],
            "dropped_view": [str(i) for i in sorted(self.dropped_views)],
            "created_schema": [quote(s) for s in sorted(self.created_schemas)],
            "created_table": [f"{quote(s)}.{quote(t)}" for s, t in sorted(self.created_tables)],
            "created_view": [f"{quote(s)}.{quote(v)}" for s, v in sorted(self.created_views)],
            "inserted_into_table": [str(i) for i in sorted(self.inserted)],
            "deleted_from_table": [str(i) for i in sorted(self.deleted)],
            "altered_table": [str(i) for i in sorted(self.altered)],
            "inlined_insert": [str(i) for i in sorted(self.inlined_insert)],
            "inlined_delete": [str(i) for i in sorted(self.inlined_delete)],
            "inline_flush": [str(i) for i in sorted(self.flushed)],
            "merge_adjacent": [str(i) for i in sorted(self.compacted)],
        }
        return [f"{kind}:{value}" for kind in TOKEN_ORDER for value in by_kind.get(kind, [])]

    def text(self) -> str:
        return ",".join(self.tokens())

    @property
    def empty(self) -> bool:
        return not self.tokens()


def _split(text: str) -> Iterable[str]:
    """Split on commas outside double quotes."""
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            yield "".join(current)
            current = []
        else:
            current.append(ch)
    if current:
        yield "".join(current)


def _unquote_parts(value: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(value):
        ch = value[i]
        if ch == '"':
            i += 1
            while i < len(value):
                if value[i] == '"' and value[i + 1 : i + 2] == '"':
                    current.append('"')
                    i += 2
                elif value[i] == '"':
                    i += 1
                    break
                else:
                    current.append(value[i])
                    i += 1
        elif ch == ".":
            parts.append("".join(current))
            current = []
            i += 1
        else:
            current.append(ch)
            i += 1
    parts.append("".join(current))
    return parts


def parse(texts: Iterable[str | None]) -> ChangeSet:
    """Parse one or more ``changes_made`` strings into one :class:`ChangeSet`.

    >>> c = parse(['created_table:"main"."t,1"', "inserted_into_table:3,deleted_from_table:3"])
    >>> sorted(c.created_tables), c.inserted, c.deleted
    ([('main', 't,1')], {3}, {3})
    """
    result = ChangeSet()
    for text in texts:
        for token in _split(text or ""):
            kind, _, value = token.partition(":")
            if not kind:
                continue
            ids = {
                "dropped_schema": result.dropped_schemas,
                "dropped_table": result.dropped_tables,
                "dropped_view": result.dropped_views,
                "inserted_into_table": result.inserted,
                "deleted_from_table": result.deleted,
                "altered_table": result.altered,
                "inlined_insert": result.inlined_insert,
                "inlined_delete": result.inlined_delete,
                "inline_flush": result.flushed,
                "flushed_inlined": result.flushed,
                "merge_adjacent": result.compacted,
                "rewrite_delete": result.compacted,
                "compacted_table": result.compacted,
            }
            if kind in ids:
                ids[kind].add(int(value))
            elif kind == "created_schema":
                result.created_schemas.add(_unquote_parts(value)[0])
            elif kind in ("created_table", "created_view"):
                schema, name = ([*_unquote_parts(value), ""])[:2]
                (result.created_tables if kind == "created_table" else result.created_views).add((schema, name))
            else:
                result.other.append((kind, value))
    return result


def conflict(
    mine: ChangeSet,
    theirs: ChangeSet,
    *,
    my_deleted_files: set[int],
    their_deleted_files: set[int],
    my_schema_ids_used: Set[int] = frozenset(),
    their_table_ids_in_dropped_schemas: Set[int] = frozenset(),
) -> str | None:
    """DuckDB's logical conflict matrix (spec 5.1): a reason string, or None if ``mine`` can be rebased."""
    for name in mine.created_schemas & theirs.created_schemas:
        return f"schema {name!r} was created concurrently"
    for schema_id in mine.dropped_schemas & theirs.dropped_schemas:
        return f"schema {schema_id} was dropped concurrently"
    for st in mine.created_tables & theirs.created_tables:
        return f"table {st[0]}.{st[1]} was created concurrently"
    # tables and views share one namespace per schema
    for st in (mine.created_views & (theirs.created_views | theirs.created_tables)) | (
        mine.created_tables & theirs.created_views
    ):
        return f"{st[0]}.{st[1]} was created concurrently"
    for vid in mine.dropped_views & theirs.dropped_views:
        return f"view {vid} was dropped concurrently"
    if my_schema_ids_used & theirs.dropped_schemas:
        return "a schema this commit writes into was dropped concurrently"
    for tid in mine.dropped_tables & theirs.dropped_tables:
        return f"table {tid} was dropped concurrently"
    touched_theirs_structure = theirs.dropped_tables | theirs.altered
    for tid in (mine.inserted | mine.inlined_insert) & (
        touched_theirs_structure | theirs.deleted | theirs.inlined_delete
    ):
        return f"table {tid} was dropped, altered or deleted from concurrently while this commit inserted into it"
    for tid in mine.deleted & (touched_theirs_structure | theirs.compacted | theirs.inserted | theirs.inlined_insert):
        return f"table {tid} changed concurrently while this commit deleted from it"
    for tid in mine.deleted & theirs.deleted:
        if my_deleted_files & their_deleted_files:
            return f"rows of the same data file of table {tid} were deleted concurrently"
    for tid in mine.inlined_delete & (
        touched_theirs_structure | theirs.inlined_delete | theirs.flushed | theirs.inserted | theirs.inlined_insert
    ):
        return f"inlined rows of table {tid} changed concurrently"
    for tid in mine.flushed & (theirs.dropped_tables | theirs.inlined_delete | theirs.flushed):
        return f"table {tid} changed concurrently while flushing inlined rows"
    for tid in mine.compacted & (theirs.dropped_tables | theirs.deleted | theirs.compacted):
        return f"table {tid} changed concurrently while compacting"
    for tid in mine.altered & (theirs.dropped_tables | theirs.altered):
        return f"table {tid} was altered or dropped concurrently"
    return None
