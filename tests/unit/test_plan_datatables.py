"""How the planner reads Data Tables in lake SQL: which statements change a Data Table, what each engine runs,
and what Postgres runs (no services: the plans themselves)."""

from __future__ import annotations

import json

import pytest

from airflow_provider_lakehouse.exceptions import UnsupportedStatementError
from airflow_provider_lakehouse.spark import steps
from airflow_provider_lakehouse.spark.plan import Plan, plan_script

PREAMBLE = "ATTACH 'datatable://main:analytics' AS dt; ATTACH 'ducklake://main' AS dl; "


def test_reads_are_views_for_spark_and_for_duckdb_while_lake_names_stay_for_duckdb() -> None:
    plan = plan_script(
        PREAMBLE + "CREATE TABLE dl.x AS SELECT s.id FROM dt.src s JOIN dl.y USING (id) WHERE s.v > $v",
        parameters={"v": 1},
    )
    step = plan.steps[2]
    (ref,) = step.datatables
    assert (ref.datatable, ref.schema, ref.table) == ("main", "analytics", "src")
    assert ref.view in (step.query or "") and ref.view in (step.duckdb_text or "")
    assert "dl.y" in (step.duckdb_text or "") and "$v" in (step.duckdb_text or "")
    assert isinstance(step.details, steps.Ctas) and step.target == "main.x"
    assert plan.datatables == ("main",)


@pytest.mark.parametrize(
    "sql, kind, details",
    [
        ("INSERT INTO dt.summary SELECT * FROM dl.y", "insert", steps.DataTableInsert),
        ("INSERT INTO dt.summary BY NAME SELECT * FROM dl.y", "insert", steps.DataTableInsert),
        ("INSERT INTO dt.summary VALUES (1, 'a')", "insert", steps.DataTableInsert),
        ("CREATE OR REPLACE TABLE dt.public.copy AS SELECT * FROM dl.y", "ctas", steps.DataTableCtas),
        ("DELETE FROM dt.summary WHERE n < 3", "delete", steps.DataTableSql),
        ("UPDATE dt.summary SET n = n + 1", "update", steps.DataTableSql),
        ("CREATE TABLE dt.t (a INTEGER, b VARCHAR)", "create_table", steps.DataTableSql),
        ("DROP TABLE IF EXISTS dt.t", "drop_table", steps.DataTableSql),
        ("ALTER TABLE dt.t ADD COLUMN c DOUBLE", "alter", steps.DataTableSql),
        ("CREATE SCHEMA IF NOT EXISTS dt.stage", "create_schema", steps.DataTableSql),
    ],
)
def test_what_changes_a_data_table(sql: str, kind: str, details: type) -> None:
    step = plan_script(PREAMBLE + sql).steps[2]
    assert (step.kind, type(step.details)) == (kind, details)
    assert step.changes_datatable and not step.writes  # the lake's snapshot does not hold it


def test_postgres_gets_its_own_spelling_with_bound_parameters_and_literal_percent_signs() -> None:
    step = plan_script(
        PREAMBLE + "DELETE FROM dt.s WHERE n < $min AND name::VARCHAR LIKE 'a%' AND d = $day",
        parameters={"min": 1, "day": 0},
    ).steps[2]
    assert isinstance(step.details, steps.DataTableSql)
    assert (
        step.details.sql
        == "DELETE FROM \"analytics\".s WHERE n < %(min)s AND CAST(name AS TEXT) LIKE 'a%%' AND d = %(day)s"
    )
    assert step.details.parameters == ("day", "min")


def test_use_selects_the_data_table_for_unqualified_names() -> None:
    plan = plan_script(PREAMBLE + "USE dt; INSERT INTO totals SELECT count(*) FROM dl.y; SELECT * FROM totals")
    use, insert, select = plan.steps[2:]
    assert use.target == "datatable://main/analytics"
    assert isinstance(insert.details, steps.DataTableInsert) and insert.details.schema == "analytics"
    assert [r.table for r in select.datatables] == ["totals"]


def test_a_plan_with_data_tables_survives_the_trip_to_a_spark_submit_job() -> None:
    plan = plan_script(PREAMBLE + "INSERT INTO dt.t SELECT * FROM dl.y JOIN dt.u USING (id)")
    again = Plan.from_json_dict(json.loads(json.dumps(plan.to_json_dict())), plan.parameters)
    assert again == plan


@pytest.mark.parametrize(
    "sql, fragment",
    [
        ("MERGE INTO dt.t USING dl.y AS s ON t.id = s.id WHEN MATCHED THEN DELETE", "read only that Data Table"),
        ("UPDATE dt.t SET v = (SELECT max(v) FROM dl.y)", "reads dl.y"),
        ("INSERT OVERWRITE dt.t SELECT 1", "INSERT OVERWRITE"),
        ("DELETE FROM dt.t WHERE id IN (SELECT id FROM read_parquet('x.parquet'))", "read only that Data Table"),
    ],
)
def test_changes_that_would_need_both_stores_in_postgres_are_refused_before_anything_runs(
    sql: str, fragment: str
) -> None:
    with pytest.raises(UnsupportedStatementError, match=fragment):
        plan_script(PREAMBLE + sql)


def test_unquoted_data_table_names_fold_to_lower_case_as_postgres_folds_them() -> None:
    plan = plan_script(PREAMBLE + 'SELECT * FROM dt.MyTable JOIN dt.Other."Quoted" USING (id); DELETE FROM dt.MyTable')
    assert {(r.schema, r.table) for r in plan.steps[2].datatables} == {("analytics", "mytable"), ("other", "Quoted")}
    delete = plan.steps[3].details
    assert isinstance(delete, steps.DataTableSql) and delete.sql == 'DELETE FROM "analytics".MyTable'


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO dt.t VALUES (1)",
        "DELETE FROM dt.t",
        "CREATE TABLE dt.t AS SELECT 1 AS a",
        "CREATE SCHEMA dt.s",
        "USE dt; DROP TABLE t",
    ],
)
def test_a_data_table_attached_read_only_is_not_written(sql: str) -> None:
    """The write fails when it runs, as in DuckDB (an autocommit script keeps what ran before it)."""
    plan = plan_script("ATTACH 'datatable' AS dt (READ_ONLY); ATTACH 'ducklake' AS dl; " + sql)
    assert plan.steps[-1].duckdb_error == "dt is attached READ_ONLY; it cannot be written."
    assert not any(step.duckdb_error for step in plan.steps[:-1])


@pytest.mark.parametrize(
    "sql",
    ["INSERT INTO t VALUES (1)", "CREATE TABLE dl.t (a INTEGER)", "CALL ducklake_expire_snapshots('dl')"],
)
def test_a_lake_attached_read_only_is_not_written(sql: str) -> None:
    plan = plan_script("ATTACH 'ducklake' AS dl (READ_ONLY); USE dl; " + sql)
    assert plan.steps[-1].duckdb_error == "dl is attached READ_ONLY; it cannot be written."


def test_reads_through_a_read_only_alias_still_plan() -> None:
    plan = plan_script(
        "ATTACH 'datatable' AS dt (READ_ONLY); ATTACH 'ducklake' AS dl; INSERT INTO dl.x SELECT * FROM dt.t"
    )
    assert [r.table for r in plan.steps[2].datatables] == ["t"]
