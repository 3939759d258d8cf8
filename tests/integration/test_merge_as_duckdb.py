"""``MERGE`` on Spark as DuckDB 1.5's ``ducklake`` runs it; the same script run by DuckDB on a second lake is the
referee, and DuckDB reads both lakes.

- ``UPDATE SET *``, ``INSERT *`` and the bare ``UPDATE`` / ``INSERT`` take the source's columns by position, as
  DuckDB does; Spark took them by name (a source with its columns in another order stored other rows) and failed
  the bare forms with an ``AttributeError``. ``UPDATE BY NAME`` / ``INSERT BY NAME`` (which sqlglot cannot read)
  take them by name, a subset too.
- A target row several source rows match is changed once, as in DuckDB; Spark failed the statement.
- ``WHEN NOT MATCHED BY SOURCE`` (target rows no source row matches: ``UPDATE SET``, ``DELETE``, ``DO NOTHING``),
  which Spark refused.
- DuckDB's refusals, with its errors: more than one ``UPDATE``/``DELETE`` clause, a source whose column count or
  names do not fit the table.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.integration.test_values_typed_as_duckdb import fails_on_both
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLE = [
    "CREATE TABLE t (i INTEGER, j INTEGER DEFAULT 5, k VARCHAR)",
    "INSERT INTO t VALUES (1, 10, 'a'), (3, 30, 'c'), (4, 40, NULL)",
]
#: a source whose columns are the table's types in another order: by position, j lands in i and i in j
SOURCE = "(SELECT 100 + i AS j, i, 'x' || i AS k FROM range(3, 6) r(i)) s ON t.i = s.i"

SCRIPTS = {
    "bare_actions_by_position": [f"MERGE INTO t USING {SOURCE} WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT"],
    "stars_by_position": [f"MERGE INTO t USING {SOURCE} WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"],
    "by_position_spelled_out": [
        f"MERGE INTO t USING {SOURCE} WHEN MATCHED THEN UPDATE BY POSITION WHEN NOT MATCHED THEN INSERT BY POSITION"
    ],
    "by_name": [f"MERGE INTO t USING {SOURCE} WHEN MATCHED THEN UPDATE BY NAME WHEN NOT MATCHED THEN INSERT BY NAME"],
    "by_name_a_subset_in_other_case": [
        "MERGE INTO t USING (SELECT 100 + i AS J, i AS I FROM range(3, 6) r(i)) s ON t.i = s.i "
        "WHEN MATCHED AND s.I = 3 THEN UPDATE BY NAME WHEN NOT MATCHED THEN INSERT BY NAME"
    ],
    "a_table_source_by_position": [
        "CREATE TABLE src AS SELECT 7 AS i, 70 AS j, 'z' AS k UNION ALL SELECT 3, 33, 'y'",
        "MERGE INTO t USING src ON t.i = src.i WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT *",
    ],
    "several_source_rows_match_one_target_row": [
        "MERGE INTO t USING (SELECT 3 AS i, 0 AS v UNION ALL SELECT 3, 0 UNION ALL SELECT 9, 1) s ON t.i = s.i "
        "WHEN MATCHED THEN UPDATE SET j = s.v WHEN NOT MATCHED THEN INSERT (i, j) VALUES (s.i, s.v)",
        "MERGE INTO t USING (SELECT 4 AS i UNION ALL SELECT 4) s ON t.i = s.i WHEN MATCHED THEN DELETE",
    ],
    "not_matched_by_source_delete_beside_inserts": [
        "MERGE INTO t USING (SELECT i FROM range(3, 7) r(i)) s ON t.i = s.i WHEN MATCHED THEN DO NOTHING "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN NOT MATCHED THEN INSERT (i) VALUES (s.i)"
    ],
    "not_matched_by_source_update": [
        "MERGE INTO t USING (SELECT 3 AS i) s ON t.i = s.i "
        "WHEN NOT MATCHED BY SOURCE AND t.i = 1 THEN DO NOTHING "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET k = 'gone', j = t.j + 1"
    ],
    "do_nothing_then_one_change": [
        "MERGE INTO t USING (SELECT i FROM range(6) r(i)) s ON t.i = s.i "
        "WHEN MATCHED AND t.j > 35 THEN DO NOTHING WHEN MATCHED THEN UPDATE SET k = 'changed' "
        "WHEN NOT MATCHED AND s.i < 2 THEN DO NOTHING WHEN NOT MATCHED THEN INSERT (i) VALUES (s.i)"
    ],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_merges_change_the_rows_duckdb_changes(spark: Any, lakes: tuple[LakeSetup, LakeSetup], name: str) -> None:
    ours, theirs = lakes
    con = run_on_both(spark, ours, theirs, [*TABLE, *SCRIPTS[name]])
    same_table(con, "t")


@pytest.mark.parametrize(
    ("statement", "error"),
    [
        (
            "MERGE INTO keep USING (SELECT 1 AS i, 2 AS j) s ON keep.i = s.i WHEN NOT MATCHED THEN INSERT",
            "table keep has 1 columns but 2 values were supplied",
        ),
        (
            "MERGE INTO keep USING (SELECT 1 AS i, 2 AS j) s ON keep.i = s.i WHEN MATCHED THEN UPDATE SET *",
            "Data provided for UPDATE did not match column count in table - expected 1 columns but got 2",
        ),
        (
            "MERGE INTO keep USING (SELECT 1 AS i, 2 AS zz) s ON keep.i = s.i WHEN NOT MATCHED THEN INSERT BY NAME",
            'Table "keep" does not have a column with name "zz"',
        ),
        (
            "MERGE INTO keep USING (SELECT 1 AS i, 2 AS zz) s ON keep.i = s.i WHEN MATCHED THEN UPDATE BY NAME",
            "Referenced update column zz not found in table",
        ),
        (
            "MERGE INTO keep USING (SELECT 1 AS i) s ON keep.i = s.i "
            "WHEN MATCHED AND keep.i > 5 THEN UPDATE SET i = 0 WHEN MATCHED THEN DELETE",
            "MERGE INTO with DuckLake only supports a single UPDATE/DELETE action currently",
        ),
        (
            "MERGE INTO keep USING (SELECT 1 AS i) s ON keep.i = s.i "
            "WHEN MATCHED THEN UPDATE SET i = 0 WHEN NOT MATCHED BY SOURCE THEN DELETE",
            "MERGE INTO with DuckLake only supports a single UPDATE/DELETE action currently",
        ),
    ],
)
def test_a_merge_duckdb_refuses_fails_with_its_error(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], statement: str, error: str
) -> None:
    fails_on_both(spark, lakes, statement, duckdb_error=error, ours=error)
