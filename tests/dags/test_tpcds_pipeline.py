"""The 52-task TPC-DS pipeline with ``airflow dags test`` at SF 0.01 on the DuckDB engine: every query result in the
lake equals DuckDB's answer on the generated files and the generator's reference answer for that scale factor; the
Data Table holds the published aggregates; the graph declares the lake tables as assets between the stages. The same
DAG on Spark (over Spark Connect, SF 0.01, four tasks at once) runs under Airflow's real scheduler in
``tests/scheduler/test_real_scheduler.py``, with the same answer checks; its run here on local Spark in the task's
process repeated that at four minutes of the suite's budget, and the ten queries and eight checks also run on local
Spark in ``tests/integration/test_tpcds_queries.py``."""

from __future__ import annotations

import decimal
import json
import runpy
import uuid
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.definitions.param import ParamValidationError

from airflow_provider_lakehouse.devstack.commands import read_xcoms
from airflow_provider_lakehouse.tpcds.answers import matches_reference, reference_answer
from airflow_provider_lakehouse.tpcds.generate import generate, query_text, tpcds_connection
from airflow_provider_lakehouse.tpcds.pipeline import AGGREGATES_PUBLISHED
from airflow_provider_lakehouse.tpcds.tables import BENCHMARK_QUERIES, SOURCE_TABLES
from tests import referee
from tests.conftest import run_airflow
from tests.dags.runs import lake_env

DAG_FILE = Path(__file__).parents[2] / "dags_examples" / "tpcds_pipeline.py"


def rounded_set(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows with numbers to 2 places, sorted (a table has no order; the query's ORDER BY is not kept)."""

    def value(v: Any) -> Any:
        return round(float(v), 2) if isinstance(v, (float, decimal.Decimal)) else v

    return sorted((tuple(value(v) for v in row) for row in rows), key=repr)


def test_the_graph_has_52_tasks_in_5_stages_with_assets_between_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKEHOUSE_DUCKDB_EXTENSIONS", referee.extension_dir())
    dag = runpy.run_path(str(DAG_FILE))["tpcds_pipeline"]()
    stages: dict[str, list[Any]] = {}
    for task in dag.tasks:
        stages.setdefault(task.task_id.split(".")[0], []).append(task)
    assert {k: len(v) for k, v in stages.items()} == {
        "ingest": 24,
        "validate": 8,
        "denormalize": 3,
        "aggregate": 7,
        "query": 10,
    }
    written = {a.uri for t in stages["ingest"] for a in t.outlets}
    assert written == {f"ducklake://main/tpcds.{t}" for t in SOURCE_TABLES}
    wide = {a.uri for t in stages["denormalize"] for a in t.outlets}
    assert wide == {f"ducklake://main/wide.{c}_sales" for c in ("store", "catalog", "web")}
    assert all({a.uri for a in t.inlets} <= written for t in stages["validate"] + stages["query"])
    aggregates = [t for t in stages["aggregate"] if t.task_id != "aggregate.publish_to_datatable"]
    assert {a.uri for t in aggregates for a in t.inlets} <= wide | written
    (publish,) = [t for t in stages["aggregate"] if t.task_id == "aggregate.publish_to_datatable"]
    # the publish task is lake SQL now: it reads the published aggregates (its Data Table is a run parameter)
    assert {a.uri for a in publish.inlets} == {f"ducklake://main/agg.{t}" for t in AGGREGATES_PUBLISHED}
    assert {a.uri for t in stages["query"] for a in t.outlets} == {
        f"ducklake://main/results.q{n:02d}" for n in BENCHMARK_QUERIES
    }
    assert set(dag.params) == {"landing", "scale_factor", "lake", "datatable", "spark_conn_id", "engine"}
    assert dag.params["engine"] == "spark"  # the pipeline stays on Spark unless a run says otherwise
    assert dag.params.get_param("lake").resolve("main") == "main"
    with pytest.raises(ParamValidationError):  # the assets name lake main's tables: no other lake per run
        dag.params.get_param("lake").resolve("other")


def run_pipeline_and_check_answers(
    stack: Any,
    stack_env: dict[str, str],
    landing: str,
    scale_factor: str,
    engine: str = "spark",
) -> None:
    """``airflow dags test`` of the pipeline on ``landing`` (on the lake's own Spark, or the run parameter
    ``engine``); then every ``results.qNN`` must equal DuckDB's answer on the landing files and the generator's
    reference answer, and the Data Table must hold the published aggregates."""
    env, setup = lake_env(stack_env, None)
    env.update(TPCDS_LANDING=landing, LAKEHOUSE_DUCKDB_EXTENSIONS=referee.extension_dir())
    conf = {"scale_factor": float(scale_factor), "engine": engine}
    result = run_airflow(env, "dags", "test", "tpcds_pipeline", "-c", json.dumps(conf), timeout=1500)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    xcoms = read_xcoms("tpcds_pipeline", env)
    engines = {xcom["engine"] for xcom in xcoms.values() if isinstance(xcom, dict) and "engine" in xcom}
    expected = "duckdb" if engine == "duckdb" else "local"
    assert engines == {expected}
    assert len([x for x in xcoms.values() if isinstance(x, dict) and "engine" in x]) == 52  # all SQL tasks
    check_tpcds_results(env, setup, landing, scale_factor)


def check_tpcds_results(env: dict[str, str], setup: Any, landing: str, scale_factor: str) -> None:
    """Every ``results.qNN`` equals DuckDB's answer on the landing files and the generator's reference answer;
    the Data Table holds the published aggregates."""
    con = referee.connect()
    setup.attach(con)
    for table in SOURCE_TABLES:
        con.execute(f"CREATE VIEW main.{table} AS SELECT * FROM read_parquet('{landing}/{table}.parquet')")
    answers = str(Path(referee.extension_dir()).parent / "tpcds_answers")
    generator = tpcds_connection(referee.extension_dir())
    for number in BENCHMARK_QUERIES:
        query = query_text(generator, number)
        ours = con.execute(f"SELECT * FROM lake.results.q{number:02d}").fetchall()
        assert rounded_set(ours) == rounded_set(con.execute(query).fetchall()), f"query {number}"
        _header, reference = reference_answer(number, scale_factor, answers)  # the generator's own answer file
        difference = matches_reference(ours, reference)
        assert difference is None, f"query {number} at SF {scale_factor}: {difference}"

    conn = json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"])
    conninfo = (
        f"host={conn['host']} port={conn['port']} user={conn['login']} dbname={conn['schema']} "
        f"password={referee._conninfo_value(conn['password'])}"
    )
    con.execute(f"ATTACH {referee.sql_literal(conninfo)} AS dt (TYPE postgres, READ_ONLY)")
    for table in AGGREGATES_PUBLISHED:
        lake_rows = con.execute(f"SELECT count(*) FROM lake.agg.{table}").fetchone()[0]
        assert con.execute(f"SELECT count(*) FROM dt.tpcds.{table}").fetchone()[0] == lake_rows > 0
        for one, other in ((f"lake.agg.{table}", f"dt.tpcds.{table}"), (f"dt.tpcds.{table}", f"lake.agg.{table}")):
            differing = con.execute(f"SELECT count(*) FROM (FROM {one} EXCEPT ALL FROM {other})").fetchone()[0]
            assert differing == 0, f"{table}: {differing} rows of {one} are not in {other}"


@pytest.mark.integration
@pytest.mark.slow
def test_pipeline_answers_match_duckdb_on_the_duckdb_engine(
    stack: Any, stack_env: dict[str, str], airflow_db: None
) -> None:
    """SF 0.01 with the run parameter ``engine=duckdb``: every SQL task runs in the worker on DuckDB."""
    s3 = referee.s3_spec(json.loads(stack_env["AIRFLOW_CONN_LAKEHOUSE_S3"]))
    landing = f"s3://landing/tests/{uuid.uuid4().hex[:8]}"
    generate(0.01, landing, extension_dir=referee.extension_dir(), s3=s3)
    run_pipeline_and_check_answers(stack, stack_env, landing, "0.01", engine="duckdb")
