"""The Spark driver application: executes a :class:`~airflow_provider_lakehouse.spark.plan.Plan` on a SparkSession.

The driver owns the catalog: it resolves snapshots, registers every lake table a statement reads as a temporary
view, lets executors read and write Parquet, and commits one DuckLake snapshot per data-changing statement (or
per ``BEGIN ... COMMIT``). The same code runs in-process (local Spark), over Spark Connect, and inside a
spark-submit job (see :mod:`airflow_provider_lakehouse.spark.job`).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import urlparse

import pyarrow as pa

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.datatables.transaction import (
    DataTableTransactions,
    resolve_earlier_tries,
    task_gid_prefix,
)
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.defaults import stored_default
from airflow_provider_lakehouse.ducklake.model import SortKey, TableInfo, ViewInfo
from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID, output_schema
from airflow_provider_lakehouse.ducklake.task_commits import (
    OUTCOME_FIELD,
    TaskIdentity,
)
from airflow_provider_lakehouse.ducklake.transaction import Savepoint, Transaction
from airflow_provider_lakehouse.ducklake.types import LAKE_TYPE_KEY, Column, arrow_type, columns_from_arrow
from airflow_provider_lakehouse.exceptions import (
    LakehouseError,
    NoSuchTableError,
    StatementError,
    TaskKilledError,
    UnsupportedStatementError,
)
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark import steps
from airflow_provider_lakehouse.spark.arrow_schema import spark_types_of
from airflow_provider_lakehouse.spark.datatable_changes import QueryRows, change_datatable
from airflow_provider_lakehouse.spark.datatables import DEFAULT_PARTITION_BYTES, datatable_frame, stage_frame
from airflow_provider_lakehouse.spark.frames import map_in_arrow, quoted
from airflow_provider_lakehouse.spark.parquet_copy import (
    CopyTask,
    copy_pieces,
    plain_parquet_copy,
    same_as_spark,
    work_items,
)
from airflow_provider_lakehouse.spark.pivot_statements import has_pivot_values, with_pivot_values
from airflow_provider_lakehouse.spark.plan import (
    MAX_VIEW_DEPTH,
    CatalogRef,
    FileRef,
    Plan,
    Step,
    TableRef,
    spark_value,
    view_query_step,
)
from airflow_provider_lakehouse.spark.responses import (
    StepResult,
    build_response,
    outcome_of,
    response_of_earlier_try,
)
from airflow_provider_lakehouse.spark.semantics import (
    duckdb_output_types,
    has_markers,
    named_types,
    resolve,
    spark_schema_of,
)
from airflow_provider_lakehouse.spark.set_operations import has_set_operation
from airflow_provider_lakehouse.spark.source_types import (
    UNTYPED_IN_SPARK,
    passed_through_types,
    tag_source_types,
    with_lake_types,
)
from airflow_provider_lakehouse.spark.star_expressions import may_have_star_expressions
from airflow_provider_lakehouse.spark.statement_reads import StatementReads
from airflow_provider_lakehouse.spark.tasks import (
    META_COLUMN,
    ROW_ID_INPUT,
    ScanTask,
    WriteLease,
    WriteTask,
    spark_arrow_schema,
    table_to_ipc,
    to_spark_table,
    write_batches,
    written_files,
)
from airflow_provider_lakehouse.spark.worker_errors import without_worker_traceback

log = logging.getLogger(__name__)
DEFAULT_MAX_ROWS = 1000
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.fieldId.read.enabled": "true",
    # Casts that cannot convert, overflows and out-of-range values fail, as in DuckDB; where DuckDB succeeds
    # differently (division by zero, rounding casts, //) the planner writes DuckDB's semantics (.semantics).
    "spark.sql.ansi.enabled": "true",
}

#: Settings applied unless the lake's ``spark_conf`` sets them itself.
SESSION_DEFAULTS = {
    # Rows go to the Python workers that write lake files in batches of ``arrow.maxRecordsPerBatch`` (10,000)
    # rows, without Spark measuring the batch after every row: that check walks every column's Arrow vector
    # per row and took a third of a wide-table write (TPC-DS catalog_sales_wide: 4.8 s -> 3.2 s). A lake whose
    # rows are very large (big blobs or texts) sets a byte limit back in its ``spark_conf``.
    "spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1),
}


#: Set (to anything) to check every lake read's Spark types, which the driver derives from the lake's types,
#: against Spark's own (a round trip per read; the test suite sets it).
VERIFY_READ_TYPES_ENV = "LAKEHOUSE_VERIFY_READ_TYPES"

#: Settings by the script's dialect. Decimal arithmetic whose exact type needs more than 38 digits keeps the
#: operands' scale in DuckDB (which fails only on an actual overflow), where Spark by default drops scale digits
#: to make room for integer digits and rounds silently (``DECIMAL(20, 6) * DECIMAL(20, 6)`` keeps 9 of 12,
#: ``DECIMAL(38, 10) + 1`` keeps 9 of 10). Spark-dialect scripts keep Spark's own default, or the lake's
#: ``spark_conf``.
DIALECT_CONF = {
    "duckdb": {"spark.sql.decimalOperations.allowPrecisionLoss": "false"},
    "spark": {"spark.sql.decimalOperations.allowPrecisionLoss": "true"},
}


def dialect_conf(dialect: str, spark_conf: Mapping[str, str]) -> dict[str, str]:
    """The session settings a script of ``dialect`` runs with (:data:`DIALECT_CONF`; a Spark-dialect script takes
    the lake's ``spark_conf`` where it sets them). A Spark Connect task opens its shared session with them, so that
    tasks of the two dialects never share one (a setting changed by one task mid-way through another's statement).

    >>> dialect_conf("duckdb", {"spark.sql.decimalOperations.allowPrecisionLoss": "true"})
    {'spark.sql.decimalOperations.allowPrecisionLoss': 'false'}
    >>> dialect_conf("spark", {"spark.sql.decimalOperations.allowPrecisionLoss": "false"})
    {'spark.sql.decimalOperations.allowPrecisionLoss': 'false'}
    """
    return {
        key: str(spark_conf.get(key, value)) if dialect == "spark" else value
        for key, value in DIALECT_CONF[dialect].items()
    }


def task_session_conf(dialect: str, spark_conf: Mapping[str, str]) -> dict[str, str]:
    """The lake's ``spark_conf`` with a ``dialect`` script's settings (:func:`dialect_conf`): what a Spark Connect
    task opens its shared session with, one session per dialect.

    >>> task_session_conf("duckdb", {"spark.sql.shuffle.partitions": "4"}) != task_session_conf("spark", {})
    True
    """
    return {**spark_conf, **dialect_conf(dialect, spark_conf)}


@dataclass(frozen=True)
class TableRead:
    """A lake table as one statement reads it.

    :param frame: its rows, a DataFrame.
    :param scan: what the scan read (files, pruned files, inlined rows, the reader), reported per statement.
    :param spark_types: ``{column: Spark type}`` of ``frame``, known from the lake's types (asking Spark took a
        round trip per read over Spark Connect: 0.5 s for the 17 reads of one TPC-DS check); None: asked of Spark
        when a statement needs them (a view's).
    :param lake_types: ``{column: DuckLake type}`` of its columns of a type Spark holds in another (see
        :mod:`.source_types`), known with ``spark_types``.
    """

    frame: Any
    scan: dict[str, Any]
    spark_types: dict[str, str] | None
    inner_scans: tuple[dict[str, Any], ...] = ()  # a view's: the scans of the tables it reads
    #: ``{column: DuckLake type}`` of its columns Spark holds in another type (``uint8`` as ``smallint``), known
    #: with ``spark_types``
    lake_types: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOptions:
    """How the driver runs a plan.

    :param max_rows: rows kept per SELECT in the result (the count is always exact).
    :param native_reads: read filesystem lakes with Spark's own Parquet reader where it is exact.
    :param s3a: read S3 lakes with Spark's own ``s3a://`` reader: None (default) when the cluster has hadoop-aws
        (probed once per session; credentials are set per session, see .s3a), True always, False never (executors
        read the files with pyarrow, see .scans).
    :param author: stored as each snapshot's author (default: the task's ``dag_id.task_id``).
    :param message: each snapshot's commit message (default: names the task instance and try).
    :param task: the Airflow task instance the script runs for: recorded in the commit, and a retry of a try
        that already committed returns that commit's outcome instead of committing again.
    :param datatable_partition_bytes: a Data Table table larger than this is read by the executors, in page
        ranges of about this size (smaller ones, and tables the script changed, by the driver).
    """

    max_rows: int = DEFAULT_MAX_ROWS
    native_reads: bool = True
    s3a: bool | None = None
    author: str | None = None
    message: str | None = None
    task: TaskIdentity | None = None
    datatable_partition_bytes: int = DEFAULT_PARTITION_BYTES

    @property
    def commit_author(self) -> str | None:
        return self.author or (self.task.author if self.task else None)

    @property
    def commit_message(self) -> str | None:
        return self.message or (self.task.message if self.task else None)


class PlanRunner:
    """Executes one plan against one lake on one SparkSession.

    The script is one transaction unless the plan is ``autocommit``: every statement reads the snapshot the
    script started from plus the script's own changes, and all data changes commit as one snapshot at the end
    (or nothing does). Explicit ``BEGIN ... COMMIT`` blocks inside it are savepoints (``ROLLBACK`` undoes the
    block). With ``autocommit`` each data-changing statement, or ``BEGIN ... COMMIT`` group, commits on its own.

    :param spark: a SparkSession (classic or Spark Connect).
    :param spec: the lake (catalog credentials stay in this process).
    :param redact: applied to every error message before it leaves (removes secrets).
    :param datatables: the Postgres connections of the Data Tables the script attaches, by name (they stay in
        this process: Data Table rows are read and written here, in the script's transaction on each).
    :param killed: asked before each statement; once true (the task was killed between two statements), the run
        stops there instead of starting the next one, and nothing more commits.
    """

    def __init__(
        self,
        spark: Any,
        spec: DuckLakeSpec,
        options: RunOptions | None = None,
        redact: Callable[[str], str] = lambda text: text,
        datatables: Mapping[str, PostgresSpec] | None = None,
        killed: Callable[[], bool] = lambda: False,
    ) -> None:
        self.spark = spark
        self._killed = killed
        self.spec = spec
        self.options = options or RunOptions()
        self.redact = redact
        self.datatable_specs = dict(datatables or {})
        task_key = self.options.task.key if self.options.task else None
        self._datatables = DataTableTransactions(self.datatable_specs, task_gid_prefix(task_key), redact)
        self.lake = DuckLake.from_spec(spec, create=True)  # a script may be the lake's first write
        self._autocommit = False
        self._tx: Transaction | None = None  # the script's transaction, or an autocommit BEGIN block's
        self._savepoint: tuple[Savepoint, int] | None = None  # and how many results were pending at BEGIN
        self._pending: list[StepResult] = []  # write results waiting for their transaction's snapshot id
        self._committed: list[int] = []  # snapshots this run committed, in order
        self._temp_views: set[str] = set()  # the script's temp tables and views: session temp views
        self._reads = StatementReads()  # what statements read: given to spark.sql with their text
        self._view_schemas: dict[str, dict[str, str]] = {}
        self._view_lake_types: dict[str, dict[str, str]] = {}  # their columns of a type Spark holds in another
        self._s3a: bool | None = None  # Spark reads this S3 lake itself (decided at the first read)
        self._cached: list[Any] = []
        self._view_depth = 0  # views being expanded, innermost last (a view may read another)
        for key, value in SESSION_CONF.items():
            self._set_conf(key, value)
        for key, value in SESSION_DEFAULTS.items():
            if key not in spec.spark_conf:
                self._set_conf(key, value)

    def _set_conf(self, key: str, value: str) -> None:
        try:
            self.spark.conf.set(key, value)
        except Exception:  # static confs (already set at session start) cannot change; that is fine
            pass

    # -- entry -------------------------------------------------------------------------------
    def run(self, plan: Plan) -> dict[str, Any]:
        """Run every step; returns the response (NoETL's shape: ``status``, ``result``, ``catalog_info``).

        :raises StatementError: naming the failing statement; nothing of its transaction landed.
        """
        started = time.monotonic()
        self._autocommit = plan.autocommit
        for key, value in dialect_conf(plan.dialect, self.spec.spark_conf).items():
            self._set_conf(key, value)
        recorded = response_of_earlier_try(self.lake, self.options.task, plan, started)
        self._finish_earlier_tries(plan, lake_committed=recorded is not None)
        if recorded is not None:
            return recorded
        before = self.lake.current_snapshot_id()
        results: list[StepResult] = []
        try:
            for step in plan.steps:
                result = StepResult(step.index, step.kind)
                step_started = time.monotonic()
                try:
                    if self._killed():
                        raise TaskKilledError()
                    self._run_step(step, plan.parameters, result)
                except Exception as exc:  # Spark, Arrow and catalog errors all name the statement
                    raise self._error(step, exc) from None
                result.data["elapsed_s"] = round(
                    time.monotonic() - step_started, 3
                )  # the task log's line per statement
                results.append(result)
            if not self._autocommit and self._tx is not None:
                before = self._tx.base.snapshot_id
                last = plan.steps[-1] if plan.steps else None
                try:
                    self._commit_script(results)
                except Exception as exc:
                    raise self._error(last, exc, commit=True) from None
            elif not self._autocommit:
                self._datatables.commit()  # a script that only changed Data Tables
        finally:
            if self._tx is not None:
                self._tx.abort()
                self._tx = None
            self._datatables.rollback()  # whatever did not commit
            self._drop_temp_views()
        return self._response(plan, results, before, started)

    def _finish_earlier_tries(self, plan: Plan, *, lake_committed: bool) -> None:
        """Resolve the Postgres transactions an earlier try of this task prepared but never finished."""
        task_key = self.options.task.key if self.options.task else None
        for line in resolve_earlier_tries(self.datatable_specs, task_key, lake_committed):
            log.warning("%s", line)

    def _commit_script(self, results: list[StepResult]) -> None:
        """The script's single commit, recording the task instance and the outcome a retry would return; the
        Data Tables it changed commit with it (see :mod:`airflow_provider_lakehouse.datatables.transaction`)."""
        tx, self._tx = self._tx, None
        assert tx is not None
        if self.options.task is not None:
            tx.annotate(**self.options.task.commit_fields(), **{OUTCOME_FIELD: outcome_of(results)})
        snapshot = self._datatables.commit(tx.commit)
        if snapshot is not None:
            self._landed(snapshot.snapshot_id)

    def _landed(self, snapshot_id: int) -> None:
        self._committed.append(snapshot_id)
        for pending in self._pending:
            pending.data["snapshot_id"] = snapshot_id
        self._pending = []

    def _response(self, plan: Plan, results: list[StepResult], before: int, started: float) -> dict[str, Any]:
        return build_response(plan.lake, results, before, self._committed, started)

    def _error(self, step: Step | None, exc: BaseException, *, commit: bool = False) -> StatementError:
        if isinstance(exc, StatementError):
            return exc
        if self._tx is not None:
            self._tx.abort()
            self._tx = None
        self._datatables.rollback()
        message = str(exc).strip() or type(exc).__name__
        if "\n\nJVM stacktrace:" in message:
            message = message.split("\n\nJVM stacktrace:")[0]
        message = without_worker_traceback(message)
        if commit:
            message = f"the script's commit failed, nothing was committed: {message}"
        elif self._killed() and not isinstance(exc, TaskKilledError):
            message = TaskKilledError.while_running(message)
        return StatementError(step.index if step else 0, step.text if step else "", self.redact(message[:4000]))

    # -- transactions --------------------------------------------------------------------------
    def _new_transaction(self) -> Transaction:
        return self.lake.transaction(author=self.options.commit_author, message=self.options.commit_message)

    def _reading_transaction(self) -> Transaction | None:
        """The transaction reads go through: the script's (started by its first statement that touches the lake)
        or an autocommit ``BEGIN`` block's; None when reads see the latest snapshot."""
        if self._tx is None and not self._autocommit:
            self._tx = self._new_transaction()
        return self._tx

    # -- steps -------------------------------------------------------------------------------
    def _run_step(self, step: Step, parameters: Mapping[str, Any], result: StepResult) -> None:
        if step.duckdb_error:  # DuckDB fails the statement when it reaches it, before running anything of it
            raise StatementError(step.index, step.text, step.duckdb_error)
        args = {name: spark_value(parameters[name]) for name in step.parameters if name in parameters}
        details = step.details
        if isinstance(details, (steps.Attach, steps.Use)):
            result.data["status"] = "executed"
            return
        if isinstance(details, (steps.Begin, steps.Commit, steps.Rollback)):
            result.data["status"] = "executed"
            self._block(details, result)
            return
        if isinstance(details, steps.Call):
            self._before_call()
            self._register_reads(step, args, result)
            self._step_call(step, details, args, result)
            return
        self._reading_transaction()
        if isinstance(details, steps.DataTableChange):
            self._register_reads(step, args, result)
            self._step_datatable(step, details, parameters, args, result)
            if self._autocommit and self._tx is None:  # not inside BEGIN ... COMMIT: it commits on its own
                self._datatables.commit()
            return
        self._register_reads(step, args, result)
        reader = self._READERS.get(type(details))
        if reader is not None:
            reader(self, step, details, args, result)
            return
        writer = self._WRITERS[type(details)]
        tx = self._tx or self._new_transaction()
        own = tx is not self._tx  # an autocommit statement outside BEGIN ... COMMIT
        try:
            writer(self, step, details, args, result, tx)
        except BaseException:
            if own:
                tx.abort()
            raise
        self._pending.append(result)
        if own:
            self._finish(tx)
        elif self._autocommit and self._tx is None:
            self._datatables.commit()  # an autocommit read of a Data Table ends its transaction

    def _finish(self, tx: Transaction) -> None:
        """Commit an autocommit statement's or block's transaction (and the Data Table changes made in it);
        its results get the snapshot id."""
        snapshot = self._datatables.commit(tx.commit)
        if snapshot is not None:
            self._landed(snapshot.snapshot_id)
        self._pending = []

    def _block(self, block: steps.Begin | steps.Commit | steps.Rollback, result: StepResult) -> None:
        """``BEGIN`` / ``COMMIT`` / ``ROLLBACK``: savepoints in the script's transaction, or (autocommit) a
        transaction of their own."""
        if not self._autocommit:
            tx = self._reading_transaction()
            assert tx is not None
            if isinstance(block, steps.Begin):
                self._savepoint = (tx.savepoint(), len(self._pending))
                self._datatables.savepoint()
            elif isinstance(block, steps.Commit):
                self._pending.append(result)  # the script's snapshot, once it commits
            elif self._savepoint is not None:
                savepoint, pending = self._savepoint
                tx.rollback_to(savepoint)
                self._datatables.rollback_to_savepoint()
                for undone in self._pending[pending:]:
                    undone.data["status"] = "rolled_back"
                del self._pending[pending:]
            if not isinstance(block, steps.Begin):
                self._savepoint = None
            return
        if isinstance(block, steps.Begin):
            self._tx = self._new_transaction()
            return
        tx, self._tx = self._tx, None
        assert tx is not None  # the planner pairs BEGIN with COMMIT/ROLLBACK
        if isinstance(block, steps.Rollback):
            tx.abort()
            self._datatables.rollback()
            for undone in self._pending:
                undone.data["status"] = "rolled_back"
            self._pending = []
            return
        self._pending.append(result)
        self._finish(tx)

    def _before_call(self) -> None:
        """Maintenance commits on its own: a script transaction that only read so far starts afresh after it."""
        if self._tx is not None and not self._autocommit:
            if self._tx.has_changes:  # the planner refuses this order; never commit half a script
                raise UnsupportedStatementError(
                    "A maintenance CALL cannot follow a data change in the same transaction."
                )
            self._tx.abort()
            self._tx = None

    def _step_datatable(
        self,
        step: Step,
        details: steps.DataTableChange,
        parameters: Mapping[str, Any],
        args: dict[str, Any],
        result: StepResult,
    ) -> None:
        """A change to a Data Table, in the script's transaction on it: Postgres runs a statement that reads
        only that Data Table; for ``INSERT`` and ``CREATE TABLE AS`` the executors stage the rows Spark computes
        and the script's transaction moves them into place (see :mod:`.datatables`)."""

        def staged_rows() -> QueryRows:
            frame = self._sql(step.query, args=args or None)
            columns = _postgres_columns_of(frame)
            staging = self._datatables.open_staging(details.datatable, columns)
            stage_frame(frame, staging)
            return staging, columns

        affected = change_datatable(self._datatables, details, parameters, staged_rows)
        result.data.update(affected_rows=affected, status="executed", target=step.target)

    def _step_select(self, step: Step, details: steps.Select, args: dict[str, Any], result: StepResult) -> None:
        frame = self._sql(step.query, args=args or None)
        limit = self.options.max_rows
        try:
            rows = frame.limit(limit + 1).toArrow()
        except Exception:
            # Checked only on failure: asking for the schema first cost every SELECT an analysis of its whole
            # plan (0.26 s for a TPC-DS check over Spark Connect), and only nested NULL types need it
            typed = _without_nested_void(frame)
            if typed is frame:
                raise
            frame = typed
            rows = frame.limit(limit + 1).toArrow()
        truncated = rows.num_rows > limit
        count = frame.count() if truncated else rows.num_rows
        rows = rows.slice(0, limit)
        result.data.update(
            row_count=count, columns=rows.column_names, rows=to_json_safe(rows.to_pylist()), truncated=truncated
        )

    def _step_temp_table(self, step: Step, details: steps.TempTable, args: dict[str, Any], result: StepResult) -> None:
        frame = _without_nested_void(self._sql(step.query, args=args or None))
        # A temp table is a snapshot of its query: materialize it so later statements see fixed rows.
        table = frame.toArrow()
        self._temp_view(step.target or "", self._frame(table))
        result.data.update(affected_rows=table.num_rows, status="executed")

    def _step_temp_view(self, step: Step, details: steps.TempView, args: dict[str, Any], result: StepResult) -> None:
        self._temp_view(step.target or "", self._sql(step.query, args=args or None))
        result.data["status"] = "executed"

    def _step_drop_temp(self, step: Step, details: steps.DropTemp, args: dict[str, Any], result: StepResult) -> None:
        self.spark.catalog.dropTempView(step.target)
        self._temp_views.discard(step.target or "")
        result.data["status"] = "executed"

    def _step_copy(self, step: Step, details: steps.Copy, args: dict[str, Any], result: StepResult) -> None:
        from airflow_provider_lakehouse.spark.files import write_single_file

        frame = self._sql(step.query, args=args or None)
        rows = write_single_file(frame, step.target or "", details.format, details.options, self.spec.s3)
        result.data.update(affected_rows=rows, target=step.target, status="executed")

    # -- catalog changes -----------------------------------------------------------------------
    def _step_create_schema(
        self, step: Step, details: steps.CreateSchema, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.create_schema(step.target or "", if_not_exists=details.if_not_exists)
        result.data.update(status="executed", target=step.target)

    def _step_drop_schema(
        self, step: Step, details: steps.DropSchema, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.drop_schema(step.target or "", if_exists=details.if_exists)
        result.data.update(status="executed", target=step.target)

    def _step_create_table(
        self, step: Step, details: steps.CreateTable, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        fields = [_declared_field(c.name, c.type, nullable=c.nullable) for c in details.columns]
        columns = list(columns_from_arrow(pa.schema(fields)))
        for i, column in enumerate(details.columns):
            if column.default is not None:
                text, is_expression = stored_default(column.default)
                # as DuckDB records it: an expression default has no initial default
                initial = None if is_expression else text
                columns[i] = replace(
                    columns[i], default_value=text, default_is_expression=is_expression, initial_default=initial
                )
        created = tx.create_table(
            step.target or "",
            columns,
            if_not_exists=details.if_not_exists,
            or_replace=details.or_replace,
        )
        result.data.update(status="executed" if created else "exists", target=step.target)

    def _step_create_view(
        self, step: Step, details: steps.CreateView, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        # Spark analyses the query as DuckDB binds a view at creation: a missing table or column fails here
        columns = self._sql(step.query, args=args or None).columns
        if len(details.column_aliases) > len(columns):
            raise LakehouseError(
                f"More view aliases ({len(details.column_aliases)}) than columns in the query result ({len(columns)})."
            )
        created = tx.create_view(
            step.target or "",
            details.sql,
            column_aliases=details.column_aliases,
            or_replace=details.or_replace,
            if_not_exists=details.if_not_exists,
        )
        result.data.update(status="executed" if created else "exists", target=step.target)

    def _step_drop_view(
        self, step: Step, details: steps.DropView, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        dropped = tx.drop_view(step.target or "", if_exists=details.if_exists)
        result.data.update(status="executed" if dropped else "absent", target=step.target)

    def _step_drop_table(
        self, step: Step, details: steps.DropTable, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        dropped = tx.drop_table(step.target or "", if_exists=details.if_exists)
        result.data.update(status="executed" if dropped else "absent", target=step.target)

    def _step_add_column(
        self, step: Step, details: steps.AddColumn, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        column = details.column
        tx.add_column(
            step.target or "",
            column.name,
            _declared_field(column.name, column.type),
            default=column.default,
            if_not_exists=details.if_not_exists,
        )
        result.data.update(status="executed", target=step.target or "")

    def _step_drop_column(
        self, step: Step, details: steps.DropColumn, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.drop_column(step.target or "", details.column, if_exists=details.if_exists)
        result.data.update(status="executed", target=step.target or "")

    def _step_rename_column(
        self, step: Step, details: steps.RenameColumn, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.rename_column(step.target or "", details.column, details.new_name)
        result.data.update(status="executed", target=step.target or "")

    def _step_change_column_type(
        self, step: Step, details: steps.ChangeColumnType, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        (column,) = columns_from_arrow(pa.schema([_declared_field(details.column, details.new_type)]))
        tx.change_column_type(step.target or "", details.column, column.type)
        result.data.update(status="executed", target=step.target or "")

    def _step_set_column_default(
        self, step: Step, details: steps.SetColumnDefault, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        if details.expression is not None:
            # DuckDB stores the expression and evaluates it per insert, but for a nested column, whose inserts
            # store NULL; the Spark engine's writers fill defaults from constants only, so only that one is taken
            tx.set_nested_column_default(step.target or "", details.column, details.expression)
        else:
            tx.set_column_default(step.target or "", details.column, details.default)
        result.data.update(status="executed", target=step.target or "")

    def _step_set_column_nullable(
        self, step: Step, details: steps.SetColumnNullable, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        nulls = 0 if step.query is None else int(self._sql(step.query, args=args or None).collect()[0][0])
        tx.set_column_nullable(step.target or "", details.column, details.nullable, nulls=nulls)
        result.data.update(status="executed", target=step.target or "")

    def _step_set_partitioned_by(
        self, step: Step, details: steps.SetPartitionedBy, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.set_partitioned_by(step.target or "", list(zip(details.columns, details.transforms, strict=True)))
        result.data.update(status="executed", target=step.target or "")

    def _step_set_sorted_by(
        self, step: Step, details: steps.SetSortedBy, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        keys = [
            SortKey(expression, descending, nulls_first)
            for expression, descending, nulls_first in zip(
                details.expressions, details.descending, details.nulls_first, strict=True
            )
        ]
        try:
            tx.set_sorted_by(step.target or "", keys, details.columns)
        except NoSuchTableError:
            if not details.if_exists:
                raise
            result.data.update(status="absent", target=step.target or "")
            return
        result.data.update(status="executed", target=step.target or "")

    def _step_rename_table(
        self, step: Step, details: steps.RenameTable, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        tx.rename_table(step.target or "", details.new_name)
        result.data.update(status="executed", target=step.target or "")

    # -- data changes -------------------------------------------------------------------------
    def _step_ctas(
        self, step: Step, details: steps.Ctas, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        frame = self._sql(step.query, args=args or None)
        # columns passed through from a lake table keep their DuckLake type where Spark has none (TIME, UINTEGER),
        # a sum of integers is DuckDB's HUGEINT (Spark's BIGINT, or DECIMAL(38, 0) for BIGINTs), u8 + 1 a UTINYINT
        lake_types = passed_through_types(frame.schema)
        query = step.query or ""
        # only a statement with markers computes what DuckDB types otherwise; the others need no schemas (a round
        # trip per read over Spark Connect)
        computed = duckdb_output_types(query, *self._schemas_of(query)) if has_markers(query) else {}
        lake_types.update(computed)
        hugeints = [name for name, kind in computed.items() if kind == "int128"]
        if hugeints:
            frame = frame.selectExpr(
                *(
                    f"CAST({quoted(c)} AS DECIMAL(38, 0)) AS {quoted(c)}" if c in hugeints else quoted(c)
                    for c in frame.columns
                )
            )
        schema = with_lake_types(_arrow_schema_of(frame), lake_types)
        created = tx.create_table(
            step.target or "",
            schema,
            if_not_exists=details.if_not_exists,
            or_replace=details.or_replace,
        )
        if not created:
            result.data.update(status="exists", affected_rows=0, target=step.target)
            return
        files = plain_parquet_copy(step)
        rows = self._copy(tx, step.target or "", files, schema) if files is not None else None
        if rows is None:
            rows = self._write(tx, step.target or "", frame)
        else:
            result.data["write"] = "parquet-copy"  # executors copied the files' row groups (see .parquet_copy)
        result.data.update(status="executed", affected_rows=rows, target=step.target)

    def _step_insert(
        self, step: Step, details: steps.Insert, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        target = step.target or ""
        frame = self._sql(step.query, args=args or None)
        columns = tx.table_columns(target)
        names = list(details.columns) if details.columns is not None else None
        if details.by_name:
            names = list(frame.columns)
        elif names is None:
            if len(frame.columns) > len(columns):
                raise LakehouseError(
                    f"INSERT gives {len(frame.columns)} values but {target} has {len(columns)} columns."
                )
            names = [c.name for c in columns[: len(frame.columns)]]
        elif len(names) != len(frame.columns):
            raise LakehouseError(f"INSERT names {len(names)} columns but the query gives {len(frame.columns)}.")
        by_kind = frozenset(names[i].lower() for i in details.by_kind)
        _refuse_fresh_nested_defaults(tx, target, {n.lower() for n in names} - by_kind)
        if details.overwrite:
            tx.delete_where(target, _true_expression())
        rows = self._write(tx, target, frame.toDF(*names), by_kind=by_kind)
        result.data.update(affected_rows=rows, target=target, status="executed")

    def _step_delete(
        self, step: Step, details: steps.Delete, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        doomed = self._sql(step.query, args=args or None).toArrow()
        count = self._delete(tx, step.target or "", doomed)
        result.data.update(affected_rows=count, target=step.target, status="executed")

    def _step_update(
        self, step: Step, details: steps.Update, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        target = step.target or ""
        columns = tx.table_columns(target)
        alias = details.alias
        assignments = {k.lower(): v for k, v in details.assignments.items()}
        unknown = set(assignments) - {c.name.lower() for c in columns}
        if unknown:
            raise LakehouseError(f"{target} has no column(s) {', '.join(sorted(unknown))}.")
        row = quoted(alias)
        projection = [f"{row}.{c} AS {c}" for c in (ROWID, FILE_ID, FILE_POS)]
        projection += [
            f"({assignments[c.name.lower()]}) AS {quoted(c.name)}"
            if c.name.lower() in assignments
            else f"{row}.{quoted(c.name)} AS {quoted(c.name)}"
            for c in columns
        ]
        query = step.query or ""
        select = "SELECT " + ", ".join(projection) + query[query.upper().index(" FROM ") :]
        frame = self._sql(select, args=args or None)
        count = self._rewrite_rows(tx, target, frame, columns)
        result.data.update(affected_rows=count, target=target, status="executed")

    def _step_merge(
        self, step: Step, details: steps.Merge, args: dict[str, Any], result: StepResult, tx: Transaction
    ) -> None:
        from airflow_provider_lakehouse.spark.merge import merge_queries

        target = step.target or ""
        columns = tx.table_columns(target)
        source_columns = (
            self._sql(f"SELECT * FROM {step.query}", args=args or None).columns  # the step's query is USING's
            if any(c.takes_source_columns for c in details.clauses)
            else []
        )
        queries = merge_queries(
            step.query or "", details, [c.name for c in columns], source_columns, table=target.split(".")[-1]
        )
        affected = 0
        for changed in (queries.matched, queries.unmatched_targets):  # DuckLake allows one of them to change rows
            if not changed:
                continue
            # a target row several source rows match is changed once, by one of them, as DuckDB's ducklake does
            # (rows this script inserted have no row id yet: a row is its file and position, or its inlined row id)
            frame = self._sql(changed, args=args or None).dropDuplicates([FILE_ID, FILE_POS, ROWID]).cache()
            self._cached.append(frame)
            deleted = frame.where("__lakehouse_action = 'delete'").select(ROWID, FILE_ID, FILE_POS).toArrow()
            updated = frame.where("__lakehouse_action = 'update'").drop("__lakehouse_action")
            affected += self._delete(tx, target, deleted)
            affected += self._rewrite_rows(tx, target, updated, columns)
        if queries.not_matched:
            inserted = self._sql(queries.not_matched, args=args or None).drop("__lakehouse_clause")
            _refuse_fresh_nested_defaults(tx, target, {c.lower() for c in inserted.columns} - queries.by_kind)
            affected += self._write(tx, target, inserted, by_kind=queries.by_kind)
        result.data.update(affected_rows=affected, target=target, status="executed")

    def _step_call(self, step: Step, details: steps.Call, args: dict[str, Any], result: StepResult) -> None:
        from airflow_provider_lakehouse.spark.maintenance import run_call

        evaluate = lambda sql: self._evaluate(sql, args)  # noqa: E731
        task = self.options.task
        outcome = run_call(
            self.lake,
            step.target or "",
            details,
            evaluate,
            author=self.options.commit_author,
            message=self.options.commit_message,
            annotations=task.attribution_fields() if task is not None else None,
        )
        created = outcome.pop("snapshot_ids", [])
        self._committed.extend(created)
        result.data.update(outcome, status="executed", snapshot_id=created[-1] if created else None)

    # Statement kinds by their details' type (see .steps): reads run as they come, writes in a transaction.
    _READERS: ClassVar[dict[type[steps.StepDetails], Callable[..., None]]] = {
        steps.Select: _step_select,
        steps.TempTable: _step_temp_table,
        steps.TempView: _step_temp_view,
        steps.DropTemp: _step_drop_temp,
        steps.Copy: _step_copy,
    }
    _WRITERS: ClassVar[dict[type[steps.StepDetails], Callable[..., None]]] = {
        steps.CreateSchema: _step_create_schema,
        steps.DropSchema: _step_drop_schema,
        steps.CreateTable: _step_create_table,
        steps.DropTable: _step_drop_table,
        steps.CreateView: _step_create_view,
        steps.DropView: _step_drop_view,
        steps.AddColumn: _step_add_column,
        steps.DropColumn: _step_drop_column,
        steps.RenameColumn: _step_rename_column,
        steps.ChangeColumnType: _step_change_column_type,
        steps.SetColumnDefault: _step_set_column_default,
        steps.SetColumnNullable: _step_set_column_nullable,
        steps.RenameTable: _step_rename_table,
        steps.SetPartitionedBy: _step_set_partitioned_by,
        steps.SetSortedBy: _step_set_sorted_by,
        steps.Ctas: _step_ctas,
        steps.Insert: _step_insert,
        steps.Delete: _step_delete,
        steps.Update: _step_update,
        steps.Merge: _step_merge,
    }

    # -- helpers -------------------------------------------------------------------------------
    def _write(self, tx: Transaction, target: str, frame: Any, by_kind: frozenset[str] = frozenset()) -> int:
        """Executors write ``frame`` as data files of ``target``; the files join the transaction.

        :param by_kind: columns of ``frame`` that hold an ``INSERT``'s values in one struct field per kind of value
            (see :mod:`.insert_values`)."""
        task = self._write_task(tx, target, by_kind)
        return self._run_write(
            tx,
            target,
            task,
            lambda: map_in_arrow(
                frame, lambda batches: write_batches(task, batches), f"{META_COLUMN} binary"
            ).toArrow(),
        )

    def _copy(self, tx: Transaction, target: str, files: FileRef, spark_schema: pa.Schema) -> int | None:
        """Executors copy the Parquet ``files`` into ``target`` with pyarrow (see :mod:`.parquet_copy`); None when
        the files' types differ from what Spark's reader would produce (the caller then runs the query)."""
        from airflow_provider_lakehouse.spark.files import expand

        schema, items = work_items(expand(files.paths, self.spec.s3), self.spec.s3)
        if not same_as_spark(schema, spark_schema):
            return None
        copy = CopyTask(self._write_task(tx, target), schema)
        work = self._frame(items).repartition(items.num_rows)  # one work item per Spark task
        return self._run_write(
            tx,
            target,
            copy.write,
            lambda: work.mapInArrow(lambda batches: copy_pieces(copy, batches), f"{META_COLUMN} binary").toArrow(),
        )

    def _write_task(self, tx: Transaction, target: str, by_kind: frozenset[str] = frozenset()) -> WriteTask:
        import uuid

        columns = tuple(tx.table_columns(target))
        for column in columns:  # a column no executor can write (interval ...) fails here, naming it
            arrow_type(column)
        return WriteTask(
            data_path=self.lake.data_path,
            s3=self.spec.s3,
            table_dir=tx.table_dir(target),
            columns=columns,
            tag=uuid.uuid4().hex[:12],
            partitioning=tx.table_partitioning(target),
            sort_keys=tx.table_sort_keys(target),
            by_kind=by_kind,
        )

    def _run_write(self, tx: Transaction, target: str, task: WriteTask, job: Callable[[], pa.Table]) -> int:
        """Run the Spark ``job`` whose executors write ``task``'s files; register them in the transaction, or
        remove them if the job fails."""
        lease = WriteLease(task)
        lease.take()
        try:
            meta = job()
        except BaseException:
            # Spark fails the job as soon as one task fails while others may still be finishing a file: those
            # find the lease gone and delete their file; abandon() removes the ones already complete.
            lease.abandon()
            raise
        # Every task reported, so every file is in ``meta``; a speculative duplicate still running removes its own.
        lease.release()
        files = written_files(meta.column(META_COLUMN).to_pylist())
        tx.add_files(target, files)
        return sum(f.record_count for f in files)

    def _delete(self, tx: Transaction, target: str, doomed: pa.Table) -> int:
        """Delete the rows identified by ``doomed``'s ``rowid`` / file id / file position columns."""
        if doomed.num_rows == 0:
            return 0
        tx.delete_selected(target, doomed)
        return doomed.num_rows

    def _rewrite_rows(self, tx: Transaction, target: str, frame: Any, columns: tuple[Column, ...]) -> int:
        """UPDATE's layout: delete the old rows and write the new ones with the same row ids."""
        frame = frame.cache()
        self._cached.append(frame)
        old = frame.select(ROWID, FILE_ID, FILE_POS).toArrow()
        if old.num_rows == 0:
            return 0
        if _row_keys(old) != old.num_rows:
            raise LakehouseError(
                "UPDATE matched a target row more than once (the FROM clause joins it to several rows)."
            )
        self._delete(tx, target, old)
        new = frame.select(*[quoted(c.name) for c in columns], frame[ROWID].alias(ROW_ID_INPUT))
        self._write(tx, target, new)
        return old.num_rows

    def _sql(self, query: str | None, args: Mapping[str, Any] | None = None) -> Any:
        """``spark.sql`` of a planned query, DuckDB's cast and division semantics resolved for its operands'
        types (see :mod:`.semantics`)."""
        text = query or ""
        if has_pivot_values(text):  # PIVOT ... ON g without IN: Spark's pivot takes the values written out
            text = with_pivot_values(text, self._distinct_values)
        # set operations: DuckDB's column types (.set_operations); COLUMNS(...): the columns it picks
        if has_markers(text) or has_set_operation(text) or may_have_star_expressions(text):
            text = resolve(text, *self._schemas_of(text))
        return self._reads.sql(self.spark, text, args)

    def _distinct_values(self, query: str) -> list[tuple[Any, str]]:
        """The ``(value, text)`` rows of a pivot's values query (.pivot_statements)."""
        return [(row[0], row[1]) for row in self._sql(query).collect()]

    def _schemas_of(self, query: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
        """Spark types of the columns of every read and temp view ``query`` reads, and the DuckLake types of those
        columns that pass a lake column of a type Spark has not through (see :func:`.semantics.resolve`)."""
        schemas, lake_types = {}, {}
        lowered = query.lower()
        frames = self._reads.read_by(query)
        for view in [*self._temp_views, *frames]:
            if view.lower() not in lowered:
                continue
            if view not in self._view_schemas:
                frame = frames[view] if view in frames else self.spark.table(quoted(view))
                struct = frame.schema  # over Spark Connect, a round trip: Spark analyses the frame
                self._view_schemas[view] = named_types(struct)
                self._view_lake_types[view] = passed_through_types(struct)
            schemas[view] = self._view_schemas[view]
            lake_types[view] = self._view_lake_types.get(view, {})
        return schemas, lake_types

    def _evaluate(self, sql: str, args: dict[str, Any]) -> Any:
        return self._sql(f"SELECT {sql} AS value", args=args or None).collect()[0][0]

    def _temp_view(self, name: str, frame: Any) -> None:
        frame.createOrReplaceTempView(name)
        self._temp_views.add(name)
        self._view_schemas.pop(name, None)
        self._view_lake_types.pop(name, None)

    def _read(
        self, view: str, frame: Any, spark_types: dict[str, str] | None = None, lake_types: dict[str, str] | None = None
    ) -> None:
        self._reads.add(view, frame)
        if spark_types is None:
            self._view_schemas.pop(view, None)  # asked of Spark when a statement needs it
            self._view_lake_types.pop(view, None)
            return
        self._view_lake_types[view] = lake_types or {}
        if os.environ.get(VERIFY_READ_TYPES_ENV):
            asked = spark_schema_of(frame)
            if asked != spark_types:
                raise AssertionError(f"{view}: the driver's Spark types {spark_types} are not Spark's {asked}")
        self._view_schemas[view] = spark_types

    def _drop_temp_views(self) -> None:
        for name in self._temp_views:
            try:
                self.spark.catalog.dropTempView(name)
            except Exception:
                pass
        self._temp_views.clear()
        self._view_schemas.clear()
        self._view_lake_types.clear()
        self._reads.clear()
        for frame in self._cached:
            try:
                frame.unpersist()
            except Exception:
                pass
        self._cached.clear()

    # -- reads -------------------------------------------------------------------------------
    def _register_reads(self, step: Step, args: dict[str, Any], result: StepResult) -> None:
        scans, datatable_reads = self._register_step_reads(step, args)
        if scans:
            result.data["scans"] = scans
        if datatable_reads:
            result.data["datatable_reads"] = datatable_reads

    def _register_step_reads(
        self, step: Step, args: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Give every read of ``step`` its frame; returns what the lake scans and Data Table reads were."""
        scans: list[dict[str, Any]] = []
        registered: dict[str, TableRead] = {}
        for ref in step.tables:
            same_rows = repr(replace(ref, view=""))  # the same table, snapshot, columns and filters
            if same_rows not in registered:
                # A statement reading a table again (a self-join, a subquery per check) reads the first
                # reference's frame: Spark resolves the files once (on S3 two requests per file and reference).
                registered[same_rows] = self._table_read(ref, args)
            table_read = registered[same_rows]
            self._read(ref.view, table_read.frame, table_read.spark_types, table_read.lake_types)
            scans.append(table_read.scan)
            scans.extend(table_read.inner_scans)
        for file_ref in step.files:
            from airflow_provider_lakehouse.spark.files import read_files

            self._read(file_ref.view, read_files(self.spark, file_ref, self.spec.s3))
        for catalog_ref in step.catalog:
            self._read(catalog_ref.view, self._catalog_frame(catalog_ref))
        datatable_reads = []
        for read in step.datatables:
            frame, reader = datatable_frame(
                self.spark,
                self._datatables,
                read.datatable,
                read.schema,
                read.table,
                self.options.datatable_partition_bytes,
            )
            self._read(read.view, frame)
            datatable_reads.append({"table": read.uri, "reader": reader})
        return scans, datatable_reads

    def _snapshot_for(self, ref: TableRef, args: dict[str, Any]) -> int | None:
        """The snapshot ``ref`` reads; None: as the running transaction sees the table (its base plus changes)."""
        if isinstance(ref.version, str):  # a parameter
            return int(args[ref.version.lstrip(":")])
        if ref.version is not None:
            return int(ref.version)
        if ref.timestamp_sql is not None:
            value = self._evaluate(ref.timestamp_sql, args)
            if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
                value = dt.datetime.combine(value, dt.time())
            if isinstance(value, dt.datetime) and value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)  # the session time zone is UTC
            return self.lake.snapshot(timestamp=value).snapshot_id
        if self._tx is not None:
            return None
        return self.lake.current_snapshot_id()

    def _table_read(self, ref: TableRef, args: dict[str, Any]) -> TableRead:
        """``ref`` read at its snapshot (or as the running transaction sees it: read-your-writes); a view's
        query, when ``ref`` names a view."""
        snapshot_id = self._snapshot_for(ref, args)
        tx = self._tx if snapshot_id is None else None
        try:
            table = tx.table_info(ref.name) if tx is not None else self.lake.table(ref.name, version=snapshot_id)
        except NoSuchTableError:
            view = tx.view(ref.name) if tx is not None else self.lake.view(ref.name, version=snapshot_id)
            if view is None or ref.row_ids:
                raise
            return self._view_read(view, snapshot_id, args)
        columns = self._projection(table, ref)
        virtual = (ROWID, FILE_ID, FILE_POS) if ref.row_ids else ()
        known = {c.name.lower(): c.name for c in table.columns}
        filters = [
            (known[name.lower()], op, _bind(value, args)) for name, op, value in ref.predicates if name.lower() in known
        ]
        names = [c.name for c in columns]
        if tx is not None:
            plan = tx.scan(ref.name, columns=names, virtual=virtual, filters=filters)
        else:
            plan = self.lake.scan(ref.name, columns=names, version=snapshot_id, virtual=virtual, filters=filters)
        scan = {
            "table": table.qualified_name,
            "snapshot_id": plan.snapshot_id,
            "columns": names,
            "files": len(plan.files),
            "files_pruned": plan.pruned_files,
            "inlined_rows": plan.inlined.num_rows,
        }
        if tx is not None and tx.touched(ref.name):
            # this script's own changes, read before its commit
            scan["uncommitted_files"] = sum(1 for f in plan.files if f.data_file_id < 0)
        if self._native_ok(plan, ref):
            from airflow_provider_lakehouse.spark.native import native_frame

            frame, reader = native_frame(self.spark, plan, self.lake.storage, table.columns), "spark-parquet"
        elif not plan.files and not plan.inlined.num_rows:
            empty = spark_arrow_schema(output_schema(columns, virtual)).empty_table()
            frame, reader = self._frame(empty), "none"
        else:
            frame, reader = self._python_source_frame(plan, columns, virtual), "python-source"
        return TableRead(
            tag_source_types(frame, columns),
            {**scan, "reader": reader},
            spark_types_of(output_schema(columns, virtual)),
            lake_types={c.name: c.type for c in columns if c.type in UNTYPED_IN_SPARK},
        )

    def _view_read(self, view: ViewInfo, snapshot_id: int | None, args: dict[str, Any]) -> TableRead:
        """A lake view read as DuckDB reads it: its stored query planned in the view's schema (unqualified names
        resolve there, ``{DUCKLAKE_CATALOG}`` is this lake), its tables read at ``snapshot_id`` (a time-travel
        read of the view reaches them) or as the transaction sees them, its column aliases applied."""
        if self._view_depth >= MAX_VIEW_DEPTH:
            raise LakehouseError(
                f"View {view.qualified_name} nests views over {MAX_VIEW_DEPTH} deep (does it read itself?)."
            )
        if view.dialect != "duckdb":
            raise LakehouseError(
                f"View {view.qualified_name} is written in {view.dialect!r} SQL; lake SQL reads DuckDB views."
            )
        step = view_query_step(view, self.spec.name)
        if snapshot_id is not None:
            pinned = tuple(
                replace(t, version=snapshot_id) if t.version is None and t.timestamp_sql is None else t
                for t in step.tables
            )
            step = replace(step, tables=pinned)
        self._view_depth += 1
        try:
            inner_scans, _datatables = self._register_step_reads(step, args)
            frame = self._sql(step.query)
        finally:
            self._view_depth -= 1
        if view.column_aliases:
            frame = frame.toDF(*view.column_aliases, *frame.columns[len(view.column_aliases) :])
        read_at = snapshot_id if snapshot_id is not None else self._tx.base.snapshot_id if self._tx else None
        scan = {"view": view.qualified_name, "snapshot_id": read_at}
        return TableRead(frame, scan, None, tuple(inner_scans))

    def _python_source_frame(self, plan: Any, columns: list[Column], virtual: tuple[str, ...]) -> Any:
        """A scan through the provider's Python data source (where Spark's own Parquet reader cannot be exact)."""
        from airflow_provider_lakehouse.spark.scans import scan_frame

        task = ScanTask(
            data_path=self.lake.data_path,
            s3=self.spec.s3,
            table=plan.table,
            snapshot_id=plan.snapshot_id,
            columns=tuple(columns),
            files=plan.files,
            virtual=virtual,
            name_maps=self.lake.name_maps(plan),
            inlined_ipc=table_to_ipc(plan.inlined) if plan.inlined.num_rows else b"",
        )
        return scan_frame(self.spark, task)

    @staticmethod
    def _projection(table: TableInfo, ref: TableRef) -> list[Column]:
        if ref.columns is None:
            return list(table.columns)
        wanted = set(ref.columns)
        chosen = [c for c in table.columns if c.name.lower() in wanted]
        return chosen or [table.columns[0]]  # COUNT(*) still needs rows: read the first column

    def _native_ok(self, plan: Any, ref: TableRef) -> bool:
        """Spark's Parquet reader for filesystem lakes, where it is exact (see :func:`native_readable`)."""
        from airflow_provider_lakehouse.spark.native import native_readable

        if ref.row_ids or not plan.files or not native_readable(plan):
            return False
        if not self.lake.storage.is_s3:
            return self.options.native_reads
        if self._s3a is None:
            from airflow_provider_lakehouse.spark.s3a import use_s3a

            bucket = urlparse(self.lake.data_path).netloc
            self._s3a = use_s3a(self.spark, {bucket}, self.spec.s3, self.options.s3a)
        return self._s3a

    def _catalog_frame(self, ref: CatalogRef) -> Any:
        from airflow_provider_lakehouse.spark.maintenance import catalog_function

        return self._frame(to_spark_table(catalog_function(self.lake, ref)))

    def _frame(self, table: pa.Table) -> Any:
        """A DataFrame of an Arrow table, its schema given: Spark Connect cannot infer one from zero rows."""
        from airflow_provider_lakehouse.spark.arrow_schema import spark_struct_type

        return self.spark.createDataFrame(table, schema=spark_struct_type(table.schema))


def _row_keys(rows: pa.Table) -> int:
    """How many distinct rows ``rows`` names (by file and position, or inlined row id)."""
    return len(
        set(
            zip(
                rows.column(FILE_ID).to_pylist(),
                rows.column(FILE_POS).to_pylist(),
                rows.column(ROWID).to_pylist(),
                strict=False,
            )
        )
    )


def _declared_field(name: str, text: str, *, nullable: bool = True) -> pa.Field:
    """The Arrow field of a column type as the planner recorded it (DuckDB spelling)."""
    import sqlglot

    from airflow_provider_lakehouse.sql.types import arrow_type as declared_arrow_type
    from airflow_provider_lakehouse.sql.types import wide_integer_type

    cast = sqlglot.parse_one(f"CAST(x AS {text})", read="duckdb")
    assert isinstance(cast, sqlglot.exp.Cast)  # what parse_one gives for that text; narrows the type for mypy
    declared = pa.field(name, declared_arrow_type(cast.to), nullable=nullable)
    wide = wide_integer_type(cast.to)  # a HUGEINT is Arrow's DECIMAL(38, 0): the metadata says which it is
    return declared.with_metadata({LAKE_TYPE_KEY: wide.encode()}) if wide else declared


def _bind(value: Any, args: Mapping[str, Any]) -> Any:
    if isinstance(value, dict) and "param" in value:
        return args.get(value["param"])
    if isinstance(value, tuple):  # IN lists (Plan.from_json_dict restores them as tuples)
        return tuple(_bind(v, args) for v in value)
    return value


def _arrow_schema_of(frame: Any) -> pa.Schema:
    from airflow_provider_lakehouse.spark.arrow_schema import to_arrow_schema

    # Spark's TIMESTAMP is instant-like (session zone UTC): store it as timestamptz, as DuckDB reads it.
    schema = to_arrow_schema(frame.schema, SESSION_CONF["spark.sql.session.timeZone"])
    return pa.schema([pa.field(f.name, f.type, nullable=True) for f in schema])


#: the lake types Spark holds as text that a created Data Table column takes as DuckDB creates it
_POSTGRES_TYPED = frozenset({"uuid", "time"})


def _postgres_columns_of(frame: Any) -> pa.Schema:
    """The columns a Data Table created from ``frame`` gets: :func:`_arrow_schema_of`, with the UUIDs and times
    passed through from a lake table or a Data Table (Spark holds both as text) typed as DuckDB types them."""
    passed = {name: kind for name, kind in passed_through_types(frame.schema).items() if kind in _POSTGRES_TYPED}
    return with_lake_types(_arrow_schema_of(frame), passed)


def _refuse_fresh_nested_defaults(tx: Transaction, target: str, given: set[str]) -> None:
    """Fail an insert that leaves a list, struct or map column whose default this transaction set to that default
    (DuckDB evaluates it there, and stores NULL in later transactions; this engine evaluates no such default)."""
    fresh = [name for name in tx.fresh_nested_defaults(target) if name.lower() not in given]
    if fresh:
        raise LakehouseError(
            f"{target}: this task set the default of column(s) {', '.join(map(repr, fresh))}, a list, struct or "
            "map, and this insert leaves them to it: DuckDB fills such a default only in the transaction that set "
            "it (later ones store NULL), and the Spark engine does not evaluate it. Give the columns' values, or "
            "insert in a later task."
        )


def _true_expression() -> Any:
    import pyarrow.compute as pc

    return pc.scalar(True)


def _without_nested_void(frame: Any) -> Any:
    """``frame`` with its lists and maps of Spark's NULL type (``[]``, ``list_filter([], ...)``) typed as INTEGER
    ones: PySpark cannot give them to Arrow (DuckDB types ``[]`` as ``NULL[]``; its values, empty or NULL, are
    the same either way)."""
    nested_void = [
        field
        for field in frame.schema.fields
        if field.dataType.typeName() != "void" and "void" in field.dataType.simpleString()
    ]
    if not nested_void:
        return frame
    return frame.withColumns(
        {
            field.name: frame[quoted(field.name)].cast(field.dataType.simpleString().replace("void", "int"))
            for field in nested_void
        }
    )
