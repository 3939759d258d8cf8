"""The TPC-DS benchmark's in-process Spark configurations: Apache Iceberg on Spark (the peer) and DuckLake on the
same local Spark, each running the pipeline's SQL as Spark SQL.

Iceberg 1.12's newest Spark runtime is built for Spark 4.1 and fails to load in Spark 4.3 (``SparkView can not
implement ...View``), and no runtime for 4.2 or 4.3 is published. So the peer runs on Spark 4.1 from its own
virtual environment (``.lakehouse/bench/spark-4.1``, created on first use from the package registries), and
DuckLake runs both on this project's Spark 4.3 and on that Spark 4.1: the comparison holds on one Spark
version, and the report says which Spark each row ran on.

Both run every task's statements through this provider's planner (:func:`~airflow_provider_lakehouse.spark.plan.
plan_script`), so the Spark SQL is the same string for both formats; only the tables differ: Iceberg tables of a
JDBC catalog in the stack's Postgres with their data on the same SeaweedFS bucket through S3A, or DuckLake
tables read and written by :class:`~airflow_provider_lakehouse.spark.driver.PlanRunner`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.tpcds.pipeline import PipelineTask, preamble

REPO = Path(__file__).resolve().parents[2]
PEER_SPARK = "4.1.4"
ICEBERG = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
POSTGRES_JDBC = "org.postgresql:postgresql:42.7.8"
# what the runners import, at the versions the project is tested with (constraints/constraints-3.11.txt)
_PEER_PACKAGES = (
    "duckdb",
    "sqlglot",
    "sqlglotc",
    "pyarrow",
    "psycopg",
    "psycopg-binary",
    "boto3",
    "numpy",
    "pandas",
    "psutil",
)


def peer_python(state_dir: Path, log: Callable[[str], None] = print) -> Path:
    """The Python of a virtual environment with PySpark :data:`PEER_SPARK` (created once under ``state_dir``)."""
    venv = state_dir / "bench" / f"spark-{PEER_SPARK.rsplit('.', 1)[0]}"
    python = venv / "bin" / "python"
    marker = venv / "complete"
    if marker.exists():
        return python
    log(f"creating {venv} with PySpark {PEER_SPARK} (once) ...")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pins = _pins(REPO / "constraints" / "constraints-3.11.txt")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"pyspark=={PEER_SPARK}", *(pins[p] for p in _PEER_PACKAGES)],
        check=True,
    )
    marker.write_text(PEER_SPARK)
    return python


def _pins(constraints: Path) -> dict[str, str]:
    pins = {}
    for line in constraints.read_text().splitlines():
        name, sep, _version = line.partition("==")
        if sep:
            pins[name.strip().lower()] = line.strip()
    return pins


def maven_jar(coordinates: str) -> Path:
    """A jar from the local Maven repository, fetched with ``mvn dependency:get`` the first time."""
    group, artifact, version = coordinates.split(":")
    path = (
        Path.home() / ".m2" / "repository" / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.jar"
    )
    if not path.exists():
        if shutil.which("mvn") is None:
            raise RuntimeError(f"mvn is not installed: cannot fetch {coordinates}")
        subprocess.run(
            ["mvn", "-q", "dependency:get", f"-Dartifact={coordinates}", "-Dtransitive=false"],
            check=True,
            capture_output=True,
        )
    return path


def s3a_jars_for(python: Path, cache: Path) -> list[Path]:
    """The S3A jars matching the Hadoop bundled with ``python``'s PySpark."""
    from airflow_provider_lakehouse.devstack.jars import s3a_jars

    pyspark_dir = subprocess.run(
        [str(python), "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return s3a_jars(cache, Path(pyspark_dir) / "jars", log=lambda _m: None)


def _local_spark(jars: list[str], extra: dict[str, str], memory: str) -> Any:
    """The runner's local Spark: ``local[2]`` with the heap the Spark Connect server gets (``--driver-memory``)."""
    from airflow_provider_lakehouse.spark.session import local_session

    conf = {
        "spark.master": "local[2]",
        "spark.driver.memory": memory,
        "spark.sql.session.timeZone": "UTC",
        "spark.jars": ",".join(jars),
        **extra,
    }
    return local_session(conf)


# ---------------------------------------------------------------------------------------------- runners


def iceberg_warehouse(data_path: str) -> str:
    """Where the Iceberg peer keeps its data for a lake at ``data_path``: next to it, on the same storage.

    >>> iceberg_warehouse("s3://lakehouse/tpcds_bench_1/"), iceberg_warehouse("/tmp/lakes/tpcds_bench_1/")
    ('s3://lakehouse/tpcds_bench_1_iceberg/', '/tmp/lakes/tpcds_bench_1_iceberg/')
    """
    return data_path.rstrip("/") + "_iceberg/"


def iceberg_runner(lake: dict[str, Any], jars: list[str]) -> Callable[[PipelineTask], None]:
    """Run a pipeline task on Iceberg: the planner's Spark SQL, reads from and writes to catalog ``ice`` (a JDBC
    catalog in database ``lakehouse_iceberg_bench`` of the stack's Postgres, data at :func:`iceberg_warehouse`,
    through S3A for an S3 lake)."""
    import psycopg

    from airflow_provider_lakehouse.spark import steps
    from airflow_provider_lakehouse.spark.files import read_files
    from airflow_provider_lakehouse.spark.native import spark_path
    from airflow_provider_lakehouse.spark.plan import plan_script
    from airflow_provider_lakehouse.spark.semantics import has_markers, resolve, spark_schema_of

    conn, aws = lake["conn"], lake["aws"]
    # A database of its own: the JDBC catalog looks for its tables in every schema it can see and, finding them
    # anywhere, creates none in its own; each run starts from empty catalog tables.
    database = "lakehouse_iceberg_bench"
    login = {"host": conn["host"], "port": conn["port"], "user": conn["login"], "password": conn["password"]}
    with psycopg.connect(dbname=conn["schema"], autocommit=True, **login) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone():
            pg.execute(f'CREATE DATABASE "{database}"')
    with psycopg.connect(dbname=database, autocommit=True, **login) as pg:
        pg.execute("DROP TABLE IF EXISTS iceberg_tables, iceberg_namespace_properties")
    endpoint = aws["extra"]["endpoint_url"]
    data_path = conn["extra"]["data_path"]  # the DuckLake's: Iceberg's data goes next to it, on the same storage
    warehouse = spark_path(iceberg_warehouse(data_path))
    spark = _local_spark(
        jars,
        {
            "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.ice.type": "jdbc",
            "spark.sql.catalog.ice.uri": f"jdbc:postgresql://{conn['host']}:{conn['port']}/{database}",
            "spark.sql.catalog.ice.jdbc.user": conn["login"],
            "spark.sql.catalog.ice.jdbc.password": conn["password"],
            "spark.sql.catalog.ice.jdbc.schema-version": "V1",
            "spark.sql.catalog.ice.warehouse": warehouse,
            "spark.hadoop.fs.s3a.endpoint": endpoint,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": str(endpoint.startswith("https")).lower(),
            "spark.hadoop.fs.s3a.access.key": aws["login"],
            "spark.hadoop.fs.s3a.secret.key": aws["password"],
        },
        lake["driver_memory"],
    )

    # Iceberg's JDBC catalog fails the second of two concurrent CREATE NAMESPACE IF NOT EXISTS (a duplicate key
    # in iceberg_namespace_properties): tasks running at once create each namespace once, under a lock.
    namespaces: set[str] = set()
    namespace_lock = threading.Lock()

    def run(task: PipelineTask) -> None:
        plan = plan_script(preamble("main", task.schema) + task.sql)
        for step in plan.steps:
            details = step.details
            if isinstance(details, (steps.Attach, steps.Use)):
                continue
            if isinstance(details, steps.CreateSchema):
                with namespace_lock:
                    if step.target not in namespaces:
                        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS ice.`{step.target}`")
                        namespaces.add(step.target or "")
                continue
            views = {ref.view: spark.table(f"ice.`{ref.schema}`.`{ref.table}`") for ref in step.tables}
            views.update({file_ref.view: read_files(spark, file_ref, None) for file_ref in step.files})
            for view, read in views.items():
                read.createOrReplaceTempView(view)
            query = step.query or ""
            if has_markers(query):  # DuckDB's semantics for the operands' types, as the DuckLake driver does
                query = resolve(query, {view: spark_schema_of(read) for view, read in views.items()})
            frame = spark.sql(query)
            if isinstance(details, steps.Ctas):
                schema, table = (step.target or "").split(".")
                frame.writeTo(f"ice.`{schema}`.`{table}`").using("iceberg").createOrReplace()
            elif isinstance(details, steps.Select):
                frame.collect()
            else:
                raise NotImplementedError(f"{type(details).__name__} in the Iceberg runner")

    run.spark = spark  # type: ignore[attr-defined]
    return run


def ducklake_local_runner(lake: dict[str, Any], jars: list[str]) -> Callable[[PipelineTask], Any]:
    """Run a pipeline task on DuckLake with this provider's Spark driver in a local session (no Airflow)."""
    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
    from airflow_provider_lakehouse.spark.driver import PlanRunner, RunOptions
    from airflow_provider_lakehouse.spark.plan import plan_script
    from tests.benchmarks.bench_tpcds import _lake_setup

    spark = _local_spark(jars, {}, lake["driver_memory"])
    setup = _lake_setup(lake)
    spec = DuckLakeSpec(
        name="main",
        catalog=setup.store.spec,
        data_path=setup.data_path,
        metadata_schema=setup.store.metadata_schema,
        s3=setup.s3,
    )

    def run(task: PipelineTask) -> Any:
        return PlanRunner(spark, spec, RunOptions()).run(plan_script(preamble("main", task.schema) + task.sql))

    return run


def export_iceberg_results(run: Any, queries: list[str], out: Path) -> None:
    """Write each ``ice.results.qNN`` as Parquet under ``out`` (the parent checks the answers with DuckDB)."""
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    for name in queries:
        pq.write_table(run.spark.table(f"ice.results.{name}").toArrow(), out / f"{name}.parquet")


def peer_jars(python: Path, state_dir: Path, iceberg: bool) -> list[str]:
    """The jars a runner under ``python`` needs: S3A for its Hadoop, and for Iceberg the runtime and the Postgres
    JDBC driver of the JDBC catalog."""
    jars = [str(p) for p in s3a_jars_for(python, state_dir / "jars")]
    if iceberg:
        jars += [str(maven_jar(ICEBERG)), str(maven_jar(POSTGRES_JDBC))]
    return jars


def spark_version(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import pyspark; print(pyspark.__version__)"], check=True, capture_output=True, text=True
    ).stdout.strip()
