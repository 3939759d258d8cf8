"""The core packages import neither Airflow nor PySpark (checked in a clean interpreter)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = [
    "airflow_provider_lakehouse",
    "airflow_provider_lakehouse.exceptions",
    "airflow_provider_lakehouse.connections",
    "airflow_provider_lakehouse.connections.lake",
    "airflow_provider_lakehouse.sql",
    "airflow_provider_lakehouse.datatables",
    "airflow_provider_lakehouse.get_provider_info",
    "airflow_provider_lakehouse.lineage",
    "airflow_provider_lakehouse.lineage.openlineage",
    "airflow_provider_lakehouse.assets.uris",
    "airflow_provider_lakehouse.jsonsafe",
    # the Spark package's pure part: the planner and the helpers the driver and task processes share
    "airflow_provider_lakehouse.spark.plan",
    "airflow_provider_lakehouse.spark.steps",
    "airflow_provider_lakehouse.sql.names",
    "airflow_provider_lakehouse.spark.semantics",
    "airflow_provider_lakehouse.spark.s3a",
    "airflow_provider_lakehouse.spark.progress",
    "airflow_provider_lakehouse.spark.jvm_output",
    "airflow_provider_lakehouse.spark.py4j_logging",
    "airflow_provider_lakehouse.spark.thread_logging",
]


# The DuckLake core works on Arrow data, so pyarrow is expected there; Airflow and PySpark are not.
DUCKLAKE = [
    "airflow_provider_lakehouse.ducklake.catalog",
    "airflow_provider_lakehouse.ducklake.transaction",
    "airflow_provider_lakehouse.ducklake.maintenance",
    "airflow_provider_lakehouse.ducklake.introspect",
    "airflow_provider_lakehouse.ducklake.change_feed",
    # what Spark executors run: Arrow data in, lake files out
    "airflow_provider_lakehouse.spark.merge",
    "airflow_provider_lakehouse.spark.tasks",
    "airflow_provider_lakehouse.spark.parquet_copy",
    "airflow_provider_lakehouse.spark.maintenance",
]


@pytest.mark.parametrize("module", DUCKLAKE)
def test_ducklake_core_imports_no_airflow_or_pyspark(module: str) -> None:
    code = f"import sys\nsys.modules['airflow'] = None\nsys.modules['pyspark'] = None\nimport {module}\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_airflow_or_pyspark(module: str) -> None:
    code = (
        "import sys\n"
        "sys.modules['airflow'] = None\n"  # any `import airflow` now raises ImportError
        "sys.modules['pyspark'] = None\n"
        f"import {module}\n"
        "heavy = [m for m in ('psycopg', 'pyarrow', 'duckdb') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"{module} imports {result.stdout.strip()} at import time"


def test_no_spark_module_hides_a_standard_library_module() -> None:
    """spark-submit runs ``spark/job.py`` as a script, which puts ``spark/`` first on ``sys.path``: a module there
    named like a standard library one (``copy.py``) would replace it for PySpark and everything else."""
    from pathlib import Path

    import airflow_provider_lakehouse.spark as spark_package

    names = {path.stem for path in Path(spark_package.__file__).parent.glob("*.py")}
    assert names & set(sys.stdlib_module_names) == set()
