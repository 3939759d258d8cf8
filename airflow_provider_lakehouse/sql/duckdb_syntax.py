"""DuckDB statements that sqlglot reads differently from DuckDB, spelled the way both read alike.

Applied to a statement's text before sqlglot parses it, by the planner and the lineage extractor, so the two
agree with each other and with DuckDB.
"""

from __future__ import annotations

import re

# DuckDB reads ``ALTER TABLE t RENAME a TO b`` as a column rename (the COLUMN keyword is optional); sqlglot
# reads a table rename to ``a`` and drops ``TO b``.
_IDENTIFIER = r'(?:"(?:[^"]|"")*"|[A-Za-z_][\w$]*)'
_COLUMN_RENAME_WITHOUT_KEYWORD = re.compile(
    rf"(\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_IDENTIFIER}(?:\s*\.\s*{_IDENTIFIER}){{0,2}}\s+RENAME\s+)"
    rf"(?!(?:TO|COLUMN)\b)(?={_IDENTIFIER}\s+TO\b)",
    re.IGNORECASE,
)


# ``RESET PARTITIONED BY`` (DuckLake: back to unpartitioned writes) is no syntax sqlglot knows; an empty
# ``SET PARTITIONED BY ()`` means the same and parses.
_PARTITION_RESET = re.compile(
    rf"(\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_IDENTIFIER}(?:\s*\.\s*{_IDENTIFIER}){{0,2}}\s+)"
    r"RESET\s+PARTITIONED\s+BY\b",
    re.IGNORECASE,
)


def sqlglot_spelling(text: str) -> str:
    """``text`` with every DuckDB spelling sqlglot misreads written out (see the functions below).

    >>> sqlglot_spelling("ALTER TABLE dl.t RESET PARTITIONED BY")
    'ALTER TABLE dl.t SET PARTITIONED BY ()'
    """
    return spell_out_partition_reset(spell_out_column_rename(text))


def spell_out_partition_reset(text: str) -> str:
    """``ALTER TABLE t RESET PARTITIONED BY`` as ``ALTER TABLE t SET PARTITIONED BY ()``; any other text unchanged.

    >>> spell_out_partition_reset('alter table "s"."t" reset partitioned by;')
    'alter table "s"."t" SET PARTITIONED BY ();'
    """
    return _PARTITION_RESET.sub(r"\1SET PARTITIONED BY ()", text, count=1)


def spell_out_column_rename(text: str) -> str:
    """``ALTER TABLE t RENAME a TO b`` with ``COLUMN`` written out; any other text unchanged.

    >>> spell_out_column_rename("ALTER TABLE dl.s.t RENAME v TO u")
    'ALTER TABLE dl.s.t RENAME COLUMN v TO u'
    >>> spell_out_column_rename('alter table "my t" rename "a b" to c')
    'alter table "my t" rename COLUMN "a b" to c'
    >>> spell_out_column_rename("ALTER TABLE t RENAME TO u")
    'ALTER TABLE t RENAME TO u'
    >>> spell_out_column_rename("ALTER TABLE t RENAME COLUMN v TO u")
    'ALTER TABLE t RENAME COLUMN v TO u'
    """
    return _COLUMN_RENAME_WITHOUT_KEYWORD.sub(r"\1COLUMN ", text, count=1)
