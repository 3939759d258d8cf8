"""How ``devstack test`` spreads the suite over its two workers (tests/conftest.py): tests sharing the stack's
Airflow home on one worker, every other module whole on one worker."""

from __future__ import annotations

from tests.conftest import worker_group


def test_tests_sharing_the_airflow_home_run_on_one_worker() -> None:
    nodeids = [
        "tests/dags/test_example_datatable.py::test_example_datatable_dag",
        "tests/dags/test_engine_parity.py::test_every_lake_example[example_ducklake_sentiment]",
        "tests/ui/test_lakehouse_api.py::test_no_response_carries_a_credential",
        "tests/packaging/test_airflow_versions.py::test_lowest_airflow_runs_a_data_table_dag",
    ]
    assert {worker_group(nodeid) for nodeid in nodeids} == {"airflow_home"}


def test_every_other_module_runs_whole_on_one_worker() -> None:
    spark_sql = worker_group("tests/integration/test_spark_sql.py::test_a[sqlite]")
    assert spark_sql == worker_group("tests/integration/test_spark_sql.py::test_b[postgres]")
    assert spark_sql != worker_group("tests/integration/test_spark_values_as_duckdb.py::test_a")
    assert worker_group("tests/packaging/test_spark_versions.py::test_x[4.0.0]") != "airflow_home"
    doctest = "airflow_provider_lakehouse/sql/names.py::airflow_provider_lakehouse.sql.names.quote"
    assert worker_group(doctest) == "airflow_provider_lakehouse/sql/names.py"
