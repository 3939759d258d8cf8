"""DucklakeHook: resolves lake ``NAME`` (connection ``ducklake_<NAME>``) and runs SQL against it on Spark or DuckDB.

The operators import this module whenever a DAG file is parsed, so what only a run needs is imported inside the
methods that run: the Spark driver (the DuckLake engine), the PySpark sessions and the apache-spark provider's hooks.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
import sys
import tempfile
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from airflow_provider_lakehouse.airflow_connections import get_connection, mask
from airflow_provider_lakehouse.connections.lake import (
    DuckLakeSpec,
    check_engine,
    ducklake_conn_id,
    ducklake_spec_from_connection,
    s3_spec_from_aws_connection,
)
from airflow_provider_lakehouse.connections.names import parse_datatable_name
from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.exceptions import InvalidConnectionError, LakehouseError, StatementError
from airflow_provider_lakehouse.hooks._lineage import SqlTarget, report_hook_lineage
from airflow_provider_lakehouse.hooks._task import task_identity
from airflow_provider_lakehouse.sql.names import attached_lake

if TYPE_CHECKING:
    from airflow_provider_lakehouse.connections.specs import PostgresSpec
    from airflow_provider_lakehouse.duckdb_engine.choice import EngineChoice
    from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
    from airflow_provider_lakehouse.spark.driver import RunOptions
    from airflow_provider_lakehouse.spark.interrupt import SparkOperations
    from airflow_provider_lakehouse.spark.plan import Plan
    from airflow_provider_lakehouse.sql.params import Parameters

#: how Spark runs a script (from the lake's ``spark_conn_id``); the engine setting itself is spark, duckdb or auto
SPARK_MODES = ("local", "spark_connect", "spark_submit")


class DucklakeHook(BaseHook):
    """Run SQL against lake ``ducklake`` on Spark or DuckDB.

    On Spark, the lake's connection names the Spark connection in its extra ``spark_conn_id``: a ``spark``
    connection submits the provider's driver application with spark-submit (through the apache-spark provider's
    ``SparkSubmitHook``), a ``spark_connect`` connection runs the statements over Spark Connect; without one,
    Spark runs in this process (``local[*]``, one JVM reused by every task of the process). On DuckDB the script
    runs in this process with DuckDB's ``ducklake`` extension.

    :param ducklake: the lake's name (default ``main``).
    :param spark_conn_id: a Spark connection to use instead of the lake's ``spark_conn_id`` (None: the lake's).
    :param engine: ``spark``, ``duckdb`` or ``auto`` (DuckDB when the script scans at most the lake's
        ``duckdb_max_scan_bytes``, default a quarter of this machine's memory); None: the lake's extra ``engine``,
        else ``spark``.
    """

    conn_name_attr = "ducklake_conn_id"
    default_conn_name = ducklake_conn_id("main")
    conn_type = "ducklake"
    hook_name = "Ducklake (DuckLake lakehouse)"

    def __init__(
        self, ducklake: str = "main", spark_conn_id: str | None = None, engine: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.name = parse_datatable_name(ducklake).name  # same naming rules as data tables
        self.ducklake_conn_id = ducklake_conn_id(self.name)
        self.spark_conn_id = spark_conn_id or None
        self.requested_engine = check_engine(engine, f"Lake {self.name!r}") if engine else None
        self._duckdb_runner: DuckDBPlanRunner | None = None  # while a script runs on DuckDB, for kill()
        self._spark_operations: SparkOperations | None = None  # the last script run on Spark here, for kill()

    def __repr__(self) -> str:
        return f"DucklakeHook(ducklake={self.name!r})"

    @cached_property
    def spec(self) -> DuckLakeSpec:
        """The resolved lake; every secret in it is registered with the secrets masker."""
        conn = get_connection(self.ducklake_conn_id, kind="ducklake", name=self.name)
        extra = conn.extra_dejson or {}
        catalog_conn = None
        if extra.get("catalog_postgres_conn_id"):
            ref = str(extra["catalog_postgres_conn_id"])
            catalog_conn = get_connection(ref, kind="postgres connection", name=ref)
        s3 = None
        if extra.get("aws_conn_id"):
            ref = str(extra["aws_conn_id"])
            s3 = s3_spec_from_aws_connection(get_connection(ref, kind="aws connection", name=ref))
        spec = ducklake_spec_from_connection(self.name, conn, catalog_conn=catalog_conn, s3=s3)
        if self.spark_conn_id:
            spec = dataclasses.replace(spec, spark_conn_id=self.spark_conn_id)
        for secret in spec.secrets:
            mask(secret)
        return spec

    # -- running SQL -------------------------------------------------------------------------
    @property
    def engine(self) -> str:
        """How Spark runs this lake's scripts (the :attr:`spark_mode`; kept under its first name)."""
        return self.spark_mode

    def choose_engine(self, plan: Plan) -> EngineChoice:
        """The engine that runs ``plan``: this hook's ``engine``, else the lake's, else ``spark``; ``auto``
        decides from the bytes the plan scans (see :mod:`airflow_provider_lakehouse.duckdb_engine.choice`)."""
        from airflow_provider_lakehouse.duckdb_engine.choice import choose_engine

        requested = self.requested_engine or self.spec.engine
        return choose_engine(requested, plan, self.spec, self.spec.duckdb_max_scan_bytes)

    @cached_property
    def spark_mode(self) -> str:
        """``local``, ``spark_connect`` or ``spark_submit``, from the lake's ``spark_conn_id``."""
        if not self.spec.spark_conn_id:
            return "local"
        conn = get_connection(self.spec.spark_conn_id, kind="spark connection", name=self.spec.spark_conn_id)
        if conn.conn_type == "spark_connect":
            return "spark_connect"
        if conn.conn_type == "spark":
            return "spark_submit"
        raise InvalidConnectionError(
            f"Lake {self.name!r}: spark_conn_id {self.spec.spark_conn_id!r} has type {conn.conn_type!r}; "
            "use a 'spark' (spark-submit) or 'spark_connect' connection."
        )

    @staticmethod
    def sql_target_of(ducklake: str | None, sql: Any = None, dialect: str = "duckdb") -> SqlTarget:
        """How SQL run on a lake names its tables (lineage): ``ducklake://NAME``, schema ``main``, the dialect.

        :param ducklake: the lake's name; empty or None: the lake the SQL attaches, else ``main``.
        :param sql: the script whose ``ATTACH 'ducklake://NAME'`` names the lake when ``ducklake`` does not (read
            from its tokens, the planner's own reading; anything but a string is ignored).
        :param dialect: the SQL's dialect, ``duckdb`` or ``spark``.
        """
        lake = ducklake
        if not lake and isinstance(sql, str):
            lake = attached_lake(sql)
        return SqlTarget("ducklake", lake or "main", "main", dialect)

    def plan(
        self, sql: str, parameters: Parameters = None, *, dialect: str = "duckdb", autocommit: bool = False
    ) -> Plan:
        """Plan ``sql`` against this lake without running anything; :meth:`run_plan` runs the plan.

        :param parameters: values for ``$name`` (dict) or ``$1..$n`` (list), bound by Spark.
        :param dialect: ``duckdb`` (default) or ``spark``.
        :param autocommit: commit each data-changing statement (or ``BEGIN ... COMMIT`` group) on its own.
        :raises UnsupportedStatementError: a statement the provider cannot run, or one attaching another lake.
        :raises ParameterError: placeholders and values do not match.
        """
        from airflow_provider_lakehouse.spark.plan import plan_script  # lazy: see sql_target_of

        return plan_script(sql, dialect=dialect, lake=self.name, parameters=parameters, autocommit=autocommit)

    def run(
        self,
        sql: str,
        parameters: Parameters = None,
        *,
        dialect: str = "duckdb",
        options: RunOptions | None = None,
        autocommit: bool = False,
    ) -> dict[str, Any]:
        """Plan ``sql`` and run it on Spark; returns the response (``status``, ``result``, ``catalog_info``).

        The script is one transaction: its data changes commit as one snapshot, or none does. Inside a task the
        commit records the task instance, so an Airflow retry of a try that committed does not commit again.
        Data Tables the script attaches (``ATTACH 'datatable://NAME[:SCHEMA]' AS dt``) are resolved from their
        connections; their changes commit with the snapshot. The tables read and written are reported to
        Airflow's hook-lineage collector.

        :param parameters: values for ``$name`` (dict) or ``$1..$n`` (list), bound by Spark.
        :param dialect: ``duckdb`` (default) or ``spark``.
        :param options: how the driver runs the plan (see :meth:`run_plan`).
        :param autocommit: commit each data-changing statement (or ``BEGIN ... COMMIT`` group) on its own.
        :raises StatementError: naming the failing statement; its changes did not land.
        :raises UnsupportedStatementError: before anything ran.
        """
        plan = self.plan(sql, parameters, dialect=dialect, autocommit=autocommit)
        response = self.run_plan(plan, options)
        report_hook_lineage(self, sql, self.sql_target_of(plan.lake, dialect=dialect))
        return response

    def run_plan(self, plan: Plan, options: RunOptions | None = None) -> dict[str, Any]:
        """Run a plan of :meth:`plan` on the engine :meth:`choose_engine` picks (no hook lineage: callers that
        report their own use this). The response's ``engine`` names what ran it (``duckdb`` or the Spark mode),
        ``engine_choice`` what was asked for and why.

        :param options: rows kept per SELECT, the task instance the commit records (default: the running
            task's, if any), the S3 reader; the lake's ``spark_s3a`` applies unless ``options`` set it.
        :raises StatementError: naming the failing statement; its changes did not land.
        """
        from airflow_provider_lakehouse.spark.driver import RunOptions  # lazy: see the module docstring

        options = options or RunOptions(task=task_identity())
        if options.s3a is None and self.spec.spark_s3a is not None:
            options = dataclasses.replace(options, s3a=self.spec.spark_s3a)
        datatables = self.datatable_specs(plan)
        redactor = Redactor([*self.spec.secrets, *(spec.password for spec in datatables.values())])
        choice = self.choose_engine(plan)
        self.log.info("lake %s: engine %s (%s: %s)", self.name, choice.engine, choice.requested, choice.reason)
        if choice.engine == "duckdb":
            from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner

            self._duckdb_runner = DuckDBPlanRunner(self.spec, options, redact=redactor.redact, datatables=datatables)
            try:
                response = self._duckdb_runner.run(plan)
            finally:
                self._duckdb_runner = None
            engine = "duckdb"
        elif self.spark_mode == "spark_submit":
            response = self._submit(plan, options, datatables)
            engine = self.spark_mode
        else:
            response = self._run_here(plan, options, redactor, datatables)
            engine = self.spark_mode
        response["engine"] = engine
        response["engine_choice"] = choice.as_dict()
        return response

    @staticmethod
    def datatable_specs(plan: Plan) -> dict[str, PostgresSpec]:
        """The Postgres connections of the Data Tables ``plan`` attaches (``datatable_<NAME>``), by name; each
        password is registered with the secrets masker."""
        from airflow_provider_lakehouse.hooks.datatable import DataTableHook

        return {name: DataTableHook(datatable=name).spec for name in plan.datatables}

    def _run_here(
        self, plan: Plan, options: RunOptions, redactor: Redactor, datatables: dict[str, PostgresSpec]
    ) -> dict[str, Any]:
        # lazy, as every Spark import here: PySpark loads only in the task that runs
        from airflow_provider_lakehouse.spark.driver import PlanRunner, task_session_conf
        from airflow_provider_lakehouse.spark.interrupt import SparkOperations
        from airflow_provider_lakehouse.spark.progress import progress_lines
        from airflow_provider_lakehouse.spark.session import connect_session, connect_settings, local_session

        if self.spark_mode != "spark_connect":
            spark = local_session(self.spec.spark_conf)
        else:
            from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

            url = SparkConnectHook(conn_id=self.spec.spark_conn_id or "").get_connection_url()
            # shared with other tasks of the same settings and dialect: never stopped here
            spark = connect_session(url, task_session_conf(plan.dialect, self.spec.spark_conf))
            _applied, server_side = connect_settings(self.spec.spark_conf)
            if server_side:  # names only: a value may be anything, a secret included
                self.log.info(
                    "lake %s: Spark Connect sets only spark.sql.* settings per task; the server's own "
                    "configuration decides these of the lake's spark_conf, not applied: %s",
                    self.name,
                    ", ".join(server_side),
                )
        # Tagged, so that kill() (or a timeout raised into the task) stops what Spark still runs for this script.
        with SparkOperations(spark, logger=self.log) as operations, progress_lines(spark, logger=self.log):
            # Kept after the run: an execution_timeout unwinds the run first and calls kill() (on_kill) after.
            self._spark_operations = operations
            runner = PlanRunner(
                spark,
                self.spec,
                options,
                redact=redactor.redact,
                datatables=datatables,
                killed=lambda: operations.interrupted,
            )
            return runner.run(plan)

    def _submit(self, plan: Plan, options: RunOptions, datatables: dict[str, PostgresSpec]) -> dict[str, Any]:
        """spark-submit the driver application; the plan, the lake spec and the Data Tables' connections travel
        in a mode-600 file whose path is passed in the environment, never on the command line."""
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

        from airflow_provider_lakehouse.spark import job
        from airflow_provider_lakehouse.spark.class_archive import ClassArchive
        from airflow_provider_lakehouse.spark.session import LOCAL_CONF, require_spark_submit, spark_home

        workdir = Path(tempfile.mkdtemp(prefix="lakehouse-job-"))  # mode 700
        job_file, result_file = workdir / "job.pkl", workdir / "result.pkl"
        try:
            job_file.touch(mode=0o600)
            job_file.write_bytes(
                pickle.dumps(
                    {
                        "plan": plan.to_json_dict(),
                        "parameters": plan.parameters,
                        "spec": self.spec,
                        "datatables": datatables,
                        "options": options,
                        "result_path": str(result_file),
                        "app_name": f"lakehouse-{self.name}",
                    }
                )
            )
            conf = {k: v for k, v in LOCAL_CONF.items() if k != "spark.ui.enabled"}
            if os.environ.get("SPARK_LOCAL_IP"):
                conf.update(
                    {
                        "spark.driver.host": os.environ["SPARK_LOCAL_IP"],
                        "spark.driver.bindAddress": os.environ["SPARK_LOCAL_IP"],
                    }
                )
            conf.update(self.spec.spark_conf)
            archive = ClassArchive.for_submit(spark_home(), conf) if self.spec.spark_class_archive else None
            if archive is not None:
                conf = archive.with_options(conf)
            self._submit_hook = SparkSubmitHook(
                conf=conf,
                conn_id=self.spec.spark_conn_id or "",
                name=f"lakehouse-{self.name}",
                env_vars={job.JOB_FILE_ENV: str(job_file), "PYSPARK_PYTHON": sys.executable},
            )
            require_spark_submit(self._submit_hook._connection["spark_binary"])
            failure: Exception | None = None
            try:
                self._submit_hook.submit(application=job.__file__)
            except Exception as exc:  # the job reports statement errors in its result file
                failure = exc
            if archive is not None and archive.settle():
                self.log.info("lake %s: wrote the drivers' class-data archive %s", self.name, archive.path)
            if not result_file.exists():
                raise LakehouseError(f"spark-submit of lake {self.name!r} produced no result: {failure}")
            response: dict[str, Any] = pickle.loads(result_file.read_bytes())
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if response.get("status") != "ok":
            if "index" in response:
                raise StatementError(response["index"], response["statement"], response["error"])
            raise LakehouseError(f"The Spark job for lake {self.name!r} failed: {response.get('error')}")
        return response

    def kill(self) -> None:
        """Stop a running script (task killed or timed out): its Spark operations (Spark Connect or local), a
        spark-submit job, or the DuckDB statement. The interrupted statement fails the script; nothing commits."""
        if self._duckdb_runner is not None:
            self._duckdb_runner.interrupt()
        operations = self._spark_operations
        if operations is not None:
            stopped = operations.interrupt()
            self.log.warning(
                "lake %s: task killed; interrupted %d running Spark operation(s) of its script (tag %s)",
                self.name,
                len(stopped),
                operations.tag,
            )
        hook = getattr(self, "_submit_hook", None)
        if hook is not None:
            hook.on_kill()
