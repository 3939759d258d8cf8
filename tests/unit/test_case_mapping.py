"""The characters ``upper`` and ``lower`` map character by character on Spark, and what they map to, derived again
from Unicode (Python's full case mapping, as Java's) and from DuckDB's own ``upper``."""

from __future__ import annotations

import re

from airflow_provider_lakehouse.spark import case_mapping
from tests import referee

EVERY_CHARACTER = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def test_the_special_characters_are_those_whose_full_uppercase_expands() -> None:
    special = re.compile(case_mapping._UPPER_SPECIAL)
    assert [c for c in EVERY_CHARACTER if special.fullmatch(c)] == [c for c in EVERY_CHARACTER if len(c.upper()) > 1]


def test_the_special_characters_map_as_duckdb_maps_them() -> None:
    expands = [c for c in EVERY_CHARACTER if len(c.upper()) > 1]
    duckdbs = referee.connect().execute("SELECT list_transform(?, x -> upper(x))", [expands]).fetchone()[0]
    changed = [(c, d) for c, d in zip(expands, duckdbs, strict=True) if c != d]
    assert "".join(c for c, _ in changed) == case_mapping._UPPER_FROM
    assert "".join(d for _, d in changed) == case_mapping._UPPER_TO
    assert [c for c in EVERY_CHARACTER if len(c.lower()) > 1] == ["İ"]  # and the final sigma: _LOWER_SPECIAL
