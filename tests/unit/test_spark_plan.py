"""The Spark planner: statement kinds, refusals before anything runs, parameters, views and predicates."""

from __future__ import annotations

import json
import pickle

import pytest

from airflow_provider_lakehouse.exceptions import ParameterError, StatementError, UnsupportedStatementError
from airflow_provider_lakehouse.spark.plan import Plan, plan_script, spark_value
from airflow_provider_lakehouse.spark.steps import (
    WRITE_KINDS,
    AddColumn,
    Call,
    ColumnDef,
    CreateTable,
    Insert,
    Merge,
    MergeClause,
    RenameColumn,
    RenameTable,
)


def kinds(sql: str, **kwargs: object) -> list[str]:
    return [s.kind for s in plan_script(sql, **kwargs).steps]  # type: ignore[arg-type]


def test_every_supported_statement_has_a_kind() -> None:
    sql = """
        ATTACH 'ducklake://sales' AS dl; USE dl.analytics;
        CREATE SCHEMA IF NOT EXISTS analytics; CREATE TABLE t (id INTEGER NOT NULL, v VARCHAR DEFAULT 'x');
        CREATE OR REPLACE TABLE c AS SELECT * FROM t; INSERT INTO t (id) VALUES (1); DELETE FROM t WHERE id = 1;
        UPDATE t SET v = 'y' WHERE id = 2; MERGE INTO t USING c ON t.id = c.id WHEN MATCHED THEN DELETE;
        ALTER TABLE t ADD COLUMN w DOUBLE; ALTER TABLE t RENAME TO t2; DROP TABLE IF EXISTS c;
        CREATE TEMP VIEW tv AS SELECT 1 AS one; DROP VIEW tv; COPY (SELECT 1) TO '/tmp/x.csv' (FORMAT csv);
        CALL ducklake_expire_snapshots('dl', versions => [1, 2]); BEGIN; SELECT 1; COMMIT
    """
    plan = plan_script(sql, autocommit=True)  # CALLs after data changes need autocommit
    assert plan.lake == "sales"
    assert [s.kind for s in plan.steps] == [
        "attach",
        "use",
        "create_schema",
        "create_table",
        "ctas",
        "insert",
        "delete",
        "update",
        "merge",
        "alter",
        "alter",
        "drop_table",
        "temp_view",
        "drop_temp",
        "copy",
        "call",
        "begin",
        "select",
        "commit",
    ]
    create = plan.steps[3]
    assert create.target == "analytics.t"  # USE dl.analytics sets the default schema
    assert create.details == CreateTable(
        columns=(ColumnDef("id", "INT", nullable=False), ColumnDef("v", "TEXT", default="x"))
    )
    assert plan.steps[9].details == AddColumn(ColumnDef("w", "DOUBLE"))
    assert plan.steps[10].details == RenameTable("t2")
    assert plan.steps[15].details == Call(positional=(), named={"versions": "ARRAY(1, 2)"})
    assert [s.writes for s in plan.steps] == [k in WRITE_KINDS for k in kinds(sql, autocommit=True)]


@pytest.mark.parametrize(
    "sql, fragment",
    [
        ("CREATE SEQUENCE seq", "CREATE SEQUENCE"),
        ("ATTACH 'datatable' AS dt; CREATE VIEW v AS SELECT * FROM dt.orders", "a lake view cannot read a Data Table"),
        ("CREATE TEMP TABLE tmp AS SELECT 1 AS x; CREATE VIEW v AS SELECT * FROM tmp", "temporary tmp"),
        ("PRAGMA version", "PRAGMA"),
        ("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", "ON CONFLICT"),
        ("CALL drop_everything()", "CALL drop_everything"),
        ("ATTACH 'ducklake:postgres:dbname=x' AS dl", "only ATTACH 'ducklake://NAME'"),
        ("SELECT * FROM elsewhere.s.t", "unknown catalog 'elsewhere'"),
        ("CREATE TABLE t (iv INTERVAL)", "column 'iv': Column type INTERVAL"),
        ("BEGIN; SELECT 1", "BEGIN without COMMIT"),
    ],
)
def test_unsupported_statements_are_refused_by_the_planner(sql: str, fragment: str) -> None:
    with pytest.raises(UnsupportedStatementError, match=fragment):
        plan_script("SELECT 1; " + sql if not sql.startswith("BEGIN") else sql)


def test_the_refusal_names_the_statement() -> None:
    with pytest.raises(UnsupportedStatementError) as failure:
        plan_script("INSERT INTO t VALUES (1); CREATE SEQUENCE seq")
    assert "Statement 2" in str(failure.value) and "CREATE SEQUENCE seq" in str(failure.value)


def test_parse_errors_and_lake_mismatch() -> None:
    with pytest.raises(StatementError, match="Statement 1 failed: cannot parse"):
        plan_script("SELECT (1")
    with pytest.raises(UnsupportedStatementError, match="attaches lake 'b' but runs against lake 'a'"):
        plan_script("ATTACH 'ducklake://b' AS dl", lake="a")
    with pytest.raises(ParameterError, match="dialect"):
        plan_script("SELECT 1", dialect="mysql")


def test_parameters_become_spark_markers_and_are_checked() -> None:
    plan = plan_script("SELECT * FROM t WHERE a = $1 AND b = $2", parameters=[1, "x"])
    assert plan.steps[0].query.endswith("WHERE a = :p1 AND b = :p2")
    assert plan.parameters == {"p1": 1, "p2": "x"}
    assert plan.steps[0].parameters == ("p1", "p2")
    with pytest.raises(ParameterError):
        plan_script("SELECT $who", parameters={"whom": 1})
    assert spark_value([{"a": 1}, {"a": 2}]) == '[{"a": 1}, {"a": 2}]'
    assert spark_value(("x", "y")) == ["x", "y"]


def test_each_table_occurrence_is_its_own_view_with_its_own_predicates() -> None:
    step = plan_script("SELECT * FROM t a JOIN t b ON a.k = b.k WHERE a.x = 1 AND b.x > $v", parameters={"v": 2}).steps[
        0
    ]
    first, second = step.tables
    assert first.view != second.view and first.name == second.name == "main.t"
    assert first.predicates == (("x", "=", 1),)
    assert second.predicates == (("x", ">", {"param": "v"}),)
    assert step.query.startswith(f"SELECT * FROM {first.view} AS a JOIN {second.view} AS b")


def test_time_travel_ctes_temp_tables_and_files() -> None:
    plan = plan_script("""
        CREATE TEMP TABLE recent AS SELECT * FROM events AT (VERSION => 3);
        WITH c AS (SELECT * FROM recent) SELECT * FROM c, read_parquet('s3://b/*.parquet') f,
             events AT (TIMESTAMP => TIMESTAMP '2026-01-01 00:00:00') e
    """)
    temp, query = plan.steps
    assert temp.tables[0].version == 3
    assert [t.name for t in query.tables] == ["main.events"]  # the CTE and the temp table are not lake tables
    assert query.tables[0].timestamp_sql == "CAST('2026-01-01 00:00:00' AS TIMESTAMP_NTZ)"
    assert query.files[0].paths == ("s3://b/*.parquet",) and query.files[0].format == "parquet"


def test_spark_dialect_is_taken_as_spark_sql() -> None:
    step = plan_script(
        "SELECT id, explode(array(1, 2)) AS x FROM t LATERAL VIEW explode(tags) AS tag", dialect="spark"
    ).steps[0]
    assert "EXPLODE(ARRAY(1, 2))" in step.query and "LATERAL VIEW EXPLODE(tags)" in step.query


def test_plan_round_trips_through_the_job_file_form() -> None:
    plan = plan_script(
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v; SELECT * FROM t WHERE id IN (1, 2)"
    )
    again = Plan.from_json_dict(plan.to_json_dict(), plan.parameters)
    assert again == plan
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_every_kind_of_details_round_trips_through_the_job_file_form() -> None:
    sql = """
        ATTACH 'ducklake://sales' AS dl; USE dl.analytics;
        CREATE SCHEMA IF NOT EXISTS analytics; CREATE TABLE t (id INTEGER NOT NULL, v VARCHAR DEFAULT 'x');
        CREATE OR REPLACE TABLE c AS SELECT * FROM t; INSERT INTO t (id) VALUES (1); DELETE FROM t WHERE id = 1;
        UPDATE t SET v = 'y' WHERE id = 2;
        MERGE INTO t USING c ON t.id = c.id WHEN MATCHED AND c.v IS NULL THEN DO NOTHING WHEN MATCHED THEN UPDATE SET v = c.v
            WHEN NOT MATCHED THEN INSERT (id, v) VALUES (c.id, c.v);
        ALTER TABLE t ADD COLUMN w DOUBLE DEFAULT 1.5; ALTER TABLE t DROP COLUMN w; ALTER TABLE t RENAME COLUMN v TO u;
        ALTER TABLE t RENAME TO t2; DROP TABLE IF EXISTS c; CREATE TEMP TABLE tt AS SELECT 1 AS one; DROP TABLE tt;
        CREATE TEMP VIEW tv AS SELECT 1 AS one; DROP VIEW tv; COPY (SELECT 1) TO '/tmp/x.tsv';
        CALL ducklake_expire_snapshots('dl', versions => [1, 2]); BEGIN; SELECT 1; ROLLBACK; BEGIN; COMMIT; DROP SCHEMA analytics
    """
    plan = plan_script(sql, autocommit=True)
    again = Plan.from_json_dict(json.loads(json.dumps(plan.to_json_dict())), plan.parameters)
    assert [s.details for s in again.steps] == [s.details for s in plan.steps]
    assert pickle.loads(pickle.dumps(plan)) == plan
    assert len({type(s.details) for s in plan.steps}) == 24  # every kind of details
    merge = next(s.details for s in plan.steps if isinstance(s.details, Merge))
    assert [(c.matched, c.action, c.star) for c in merge.clauses] == [
        (True, "nothing", False),
        (True, "update", False),
        (False, "insert", False),
    ]
    assert merge.clauses[2] == MergeClause(False, "insert", None, columns=("id", "v"), values=("c.id", "c.v"))
    assert next(s.details for s in plan.steps if isinstance(s.details, Insert)) == Insert(columns=("id",))


def test_maintenance_calls_cannot_follow_data_changes_of_the_script_transaction() -> None:
    script = "CREATE TABLE t (a INT); CALL ducklake_merge_adjacent_files('dl')"
    with pytest.raises(UnsupportedStatementError, match=r"Statement 2 .*cannot follow a data change.*autocommit=True"):
        plan_script(script)
    assert [s.kind for s in plan_script(script, autocommit=True).steps] == ["create_table", "call"]
    assert [s.kind for s in plan_script("CALL ducklake_flush_inlined_data('dl'); DELETE FROM t WHERE a = 1").steps] == [
        "call",
        "delete",
    ]
    with pytest.raises(UnsupportedStatementError, match="outside BEGIN"):
        plan_script("BEGIN; CALL ducklake_flush_inlined_data('dl'); COMMIT", autocommit=True)


def test_autocommit_travels_with_the_plan_to_a_spark_submit_job() -> None:
    plan = plan_script("DELETE FROM t WHERE a = 1", autocommit=True)
    assert Plan.from_json_dict(plan.to_json_dict(), {}).autocommit is True
    assert Plan.from_json_dict(plan_script("SELECT 1").to_json_dict(), {}).autocommit is False


def test_a_plan_read_back_from_json_equals_the_plan_in_predicates_with_parameter_lists() -> None:
    """The spark-submit job reads the plan from a JSON file: its IN lists come back as the tuples the driver binds
    and prunes with, as in the plan the task made."""
    plan = plan_script("SELECT * FROM t WHERE k IN (1, 2) AND v >= $low", parameters={"low": 3})
    again = Plan.from_json_dict(json.loads(json.dumps(plan.to_json_dict())), plan.parameters)
    assert again == plan
    assert again.steps[0].tables[0].predicates == (("k", "in", (1, 2)), ("v", ">=", {"param": "low"}))


def test_rename_without_the_column_keyword_renames_the_column_as_in_duckdb() -> None:
    """DuckDB reads ``ALTER TABLE t RENAME v TO u`` as a column rename; sqlglot alone reads a table rename."""
    (step,) = plan_script("ALTER TABLE t RENAME v TO u").steps
    assert step.details == RenameColumn("v", "u") and step.target == "main.t"
    (table_rename,) = plan_script("ALTER TABLE t RENAME TO u").steps
    assert table_rename.details == RenameTable("u")


def test_merge_update_set_star_takes_every_column_from_the_source() -> None:
    (step,) = plan_script(
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    ).steps
    update, insert = step.details.clauses
    assert (update.action, update.star, dict(update.assignments)) == ("update", True, {})
    assert (insert.action, insert.values) == ("insert", None)
    with pytest.raises(UnsupportedStatementError, match=r"UPDATE SET \* cannot be combined"):
        plan_script("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *, v = 1")


def _concrete_details(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        if sub.kind:
            found.append(sub)
        found.extend(_concrete_details(sub))
    return found


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE t SET PARTITIONED BY (year(ts), region)",  # once missing from the registry: spark-submit failed
        "ALTER TABLE t ALTER COLUMN a SET DATA TYPE BIGINT",
        "ALTER TABLE t ALTER COLUMN a SET DEFAULT 'x'",
        "ALTER TABLE t ALTER COLUMN a DROP NOT NULL",
    ],
)
def test_a_plan_survives_json_as_a_spark_submit_job_receives_it(sql: str) -> None:
    plan = plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}")
    again = Plan.from_json_dict(json.loads(json.dumps(plan.to_json_dict())), {})
    assert again.steps[-1].details == plan.steps[-1].details


def test_every_kind_of_step_is_registered_for_json() -> None:
    import airflow_provider_lakehouse.spark.steps as steps

    assert sorted(c.__name__ for c in _concrete_details(steps.StepDetails)) == sorted(steps.DETAILS)
