"""The row order of a sorted table's files (DuckLake's ``SET SORTED BY``): DuckDB sorts every file it writes for
such a table by the sort keys, and so do we, so min/max statistics stay tight and readers skip more.

Only keys that name a column are applied; a key that is an expression (``lower(name)``) leaves the write in
arrival order, which every reader still reads correctly. Arrow cannot order nested values (a ``STRUCT``, list or
``MAP`` key), so the rows are sorted by the keys before the first nested one, and left in arrival order when that
is the first key: the same files DuckDB writes, up to the order of rows those keys tie on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_lakehouse.ducklake.model import SortKey

_PLAIN = re.compile(r'^\s*(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))\s*$')


def column_of(expression: str) -> str | None:
    """The column a sort expression names, None for any other expression.

    >>> column_of('"Odd Name"'), column_of("k"), column_of("lower(k)")
    ('Odd Name', 'k', None)
    """
    match = _PLAIN.match(expression)
    if match is None:
        return None
    return match.group(1).replace('""', '"') if match.group(1) is not None else match.group(2)


def sort_order(keys: Sequence[SortKey], data: pa.Table) -> np.ndarray | None:
    """Row positions of ``data`` in the table's sort order; None when the table is not sorted, a key is not a
    column, the first key is nested (or, before pyarrow 25, when the keys mix NULLS FIRST and NULLS LAST)."""
    if not keys or data.num_rows < 2:
        return None
    by_lower = {name.lower(): name for name in data.column_names}
    sort_keys = []
    for key in keys:
        column = column_of(key.expression)
        if column is None or column.lower() not in by_lower:
            return None
        if pa.types.is_nested(data.schema.field(by_lower[column.lower()]).type):
            break  # Arrow sorts no nested values: the keys before this one decide
        order = "descending" if key.descending else "ascending"
        sort_keys.append((by_lower[column.lower()], order, "at_start" if key.nulls_first else "at_end"))
    if not sort_keys:
        return None
    if _PER_KEY_NULLS:
        return pc.sort_indices(data, sort_keys=sort_keys).to_numpy()
    if len({placement for _c, _o, placement in sort_keys}) > 1:
        return None
    pairs = [(column, order) for column, order, _p in sort_keys]
    return pc.sort_indices(data, sort_keys=pairs, null_placement=sort_keys[0][2]).to_numpy()


# pyarrow 25 places NULLs per sort key (and deprecates the one placement for all keys)
_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25
