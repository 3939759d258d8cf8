"""The Spark driver application: executes a :class:`~airflow_provider_lakehouse.spark.plan.Plan` on a SparkSession.

The driver owns the catalog: it resolves snapshots, registers every lake table a statement reads as a temporary
view, lets executors read and write Parquet, and commits one DuckLake snapshot per data-changing statement (or
per ``BEGIN ... COMMIT``). The same code runs in-process (local Spark), over Spark Connect, and inside a
spark-submit job (see :mod:`airflow_provider_lakehouse.spark.job`).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.datatables.jsonsafe import to_json_safe
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.model import TableInfo
from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID
from airflow_provider_lakehouse.ducklake.transaction import Transaction
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.exceptions import LakehouseError, StatementError, UnsupportedStatementError
from airflow_provider_lakehouse.spark.parquet_copy import plain_parquet_copy
from airflow_provider_lakehouse.spark.plan import CatalogRef, FileRef, Plan, Step, TableRef, spark_value
from airflow_provider_lakehouse.spark.tasks import (
    META_COLUMN,
    ROW_ID_INPUT,
    ScanTask,
    WriteTask,
    remove_tagged_files,
    spark_arrow_schema,
    table_to_ipc,
    to_spark_table,
    write_batches,
    written_files,
)

log = logging.getLogger(__name__)
DEFAULT_MAX_ROWS = 1000
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    # Spark 4.3 keeps one pushed-down filter set per Python data source relation: when the optimizer scans a
    # relation twice (a UNION pushed below an anti join, a CTE used twice) one scan would use the other's
    # filters. Files are pruned by the planner instead (see plan.TableRef.predicates), per view.
    "spark.sql.python.filterPushdown.enabled": "false",
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.ansi.enabled": "false",  # DuckDB-style SQL (e.g. integer division, lenient casts) reads as written
}


@dataclass(frozen=True)
class RunOptions:
    """How the driver runs a plan.

    :param max_rows: rows kept per SELECT in the result (the count is always exact).
    :param native_reads: read filesystem lakes with Spark's own Parquet reader where it is exact.
    :param s3a: read S3 lakes with Spark's ``s3a://`` reader (needs hadoop-aws and S3A credentials configured on
        the cluster); default: the provider's Python data source over pyarrow.
    :param author: stored as each snapshot's author.
    """

    max_rows: int = DEFAULT_MAX_ROWS
    native_reads: bool = True
    s3a: bool = False
    author: str | None = None
    message: str | None = None


def open_lake(spec: DuckLakeSpec) -> DuckLake:
    """Open (creating if needed) the lake ``spec`` describes."""
    from airflow_provider_lakehouse.ducklake.store import PostgresStore, SqliteStore

    if isinstance(spec.catalog, str):
        store: Any = SqliteStore(spec.catalog)
    else:
        store = PostgresStore(spec.catalog, metadata_schema=spec.metadata_schema)
    return DuckLake.create(store, data_path=spec.data_path, s3=spec.s3, retry=spec.retry)


@dataclass
class _StepResult:
    index: int
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class PlanRunner:
    """Executes one plan against one lake on one SparkSession.

    :param spark: a SparkSession (classic or Spark Connect).
    :param spec: the lake (catalog credentials stay in this process).
    :param redact: applied to every error message before it leaves (removes secrets).
    """

    def __init__(self, spark: Any, spec: DuckLakeSpec, options: RunOptions | None = None,
                 redact: Callable[[str], str] = lambda text: text) -> None:
        self.spark = spark
        self.spec = spec
        self.options = options or RunOptions()
        self.redact = redact
        self.lake = open_lake(spec)
        self._tx: Transaction | None = None
        self._tx_steps: list[_StepResult] = []
        self._temp_views: set[str] = set()
        self._cached: list[Any] = []
        for key, value in SESSION_CONF.items():
            self._set_conf(key, value)

    def _set_conf(self, key: str, value: str) -> None:
        try:
            self.spark.conf.set(key, value)
        except Exception:  # static confs (already set at session start) cannot change; that is fine
            pass

    # -- entry -------------------------------------------------------------------------------
    def run(self, plan: Plan) -> dict[str, Any]:
        """Run every step; returns the response (NoETL's shape: ``status``, ``result``, ``catalog_info``).

        :raises StatementError: naming the failing statement; nothing of it (or of its transaction) landed.
        """
        started = time.monotonic()
        before = self.lake.current_snapshot_id()
        results: list[_StepResult] = []
        touched: dict[str, dict[str, Any]] = {}
        try:
            for step in plan.steps:
                result = _StepResult(step.index, step.kind)
                try:
                    self._run_step(step, plan.parameters, result)
                except LakehouseError as exc:
                    raise self._error(step, exc) from None
                except Exception as exc:  # Spark, Arrow and catalog errors all name the statement
                    raise self._error(step, exc) from None
                results.append(result)
                if step.writes and result.data.get("target") and step.kind not in ("create_schema", "drop_schema"):
                    entry = touched.setdefault(result.data["target"], {"table": result.data["target"], "rows_written": 0})
                    entry["rows_written"] += int(result.data.get("affected_rows") or 0)
                    if result.data.get("snapshot_id") is not None:
                        entry["snapshot_id"] = result.data["snapshot_id"]
        finally:
            if self._tx is not None:
                self._tx.abort()
                self._tx = None
            self._drop_temp_views()
        after = self.lake.current_snapshot_id()
        for entry in touched.values():
            entry.setdefault("snapshot_id", after)
        return {
            "status": "ok",
            "result": {"command_count": len(results), "commands": [self._command(r) for r in results]},
            "catalog_info": {
                "lake": plan.lake,
                "snapshot_before": before,
                "snapshot_after": after,
                "snapshots_created": list(range(before + 1, after + 1)),
                "tables_touched": sorted(touched.values(), key=lambda t: t["table"]),
            },
            "elapsed_s": round(time.monotonic() - started, 3),
        }

    @staticmethod
    def _command(result: _StepResult) -> dict[str, Any]:
        return {"command_index": result.index, "kind": result.kind, **{k: v for k, v in result.data.items() if k != "target"}}

    def _error(self, step: Step, exc: BaseException) -> StatementError:
        if self._tx is not None:
            self._tx.abort()
            self._tx = None
        message = str(exc).strip() or type(exc).__name__
        if "\n\nJVM stacktrace:" in message:
            message = message.split("\n\nJVM stacktrace:")[0]
        return StatementError(step.index, step.text, self.redact(message[:4000]))

    # -- steps -------------------------------------------------------------------------------
    def _run_step(self, step: Step, parameters: Mapping[str, Any], result: _StepResult) -> None:
        args = {name: spark_value(parameters[name]) for name in step.parameters if name in parameters}
        if step.kind in ("attach", "use"):
            result.data["status"] = "executed"
            return
        if step.kind == "begin":
            self._tx = self.lake.transaction(author=self.options.author, message=self.options.message)
            self._tx_steps = []
            result.data["status"] = "executed"
            return
        if step.kind in ("commit", "rollback"):
            tx, self._tx = self._tx, None
            assert tx is not None  # the planner pairs BEGIN with COMMIT/ROLLBACK
            if step.kind == "commit":
                snapshot = tx.commit()
                result.data["snapshot_id"] = snapshot.snapshot_id if snapshot else None
                for pending in self._tx_steps:
                    pending.data["snapshot_id"] = result.data["snapshot_id"]
            else:
                tx.abort()
            result.data["status"] = "executed"
            return
        self._register_reads(step, args, result)
        handler = getattr(self, f"_step_{step.kind}")
        if step.kind == "call":
            if self._tx is not None:
                raise UnsupportedStatementError("Maintenance CALLs commit on their own; run them outside BEGIN ... COMMIT.")
            handler(step, args, result)
            return
        if not step.writes:
            handler(step, args, result)
            return
        own = self._tx is None
        tx = self._tx or self.lake.transaction(author=self.options.author, message=self.options.message)
        try:
            handler(step, args, result, tx)
            if own:
                snapshot = tx.commit()
                result.data["snapshot_id"] = snapshot.snapshot_id if snapshot else None
            else:
                self._tx_steps.append(result)
        except BaseException:
            if own:
                tx.abort()
            raise

    def _step_select(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        frame = self.spark.sql(step.query, args=args or None)
        limit = self.options.max_rows
        rows = frame.limit(limit + 1).toArrow()
        truncated = rows.num_rows > limit
        count = frame.count() if truncated else rows.num_rows
        rows = rows.slice(0, limit)
        result.data.update(row_count=count, columns=rows.column_names,
                           rows=to_json_safe(rows.to_pylist()), truncated=truncated)

    def _step_temp_table(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        frame = self.spark.sql(step.query, args=args or None)
        # A temp table is a snapshot of its query: materialize it so later statements see fixed rows.
        table = frame.toArrow()
        self._temp_view(step.target or "", self._frame(table))
        result.data.update(affected_rows=table.num_rows, status="executed")

    def _step_temp_view(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        self._temp_view(step.target or "", self.spark.sql(step.query, args=args or None))
        result.data["status"] = "executed"

    def _step_drop_temp(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        self.spark.catalog.dropTempView(step.target)
        self._temp_views.discard(step.target or "")
        result.data["status"] = "executed"

    def _step_copy(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        from airflow_provider_lakehouse.spark.files import write_single_file

        frame = self.spark.sql(step.query, args=args or None)
        rows = write_single_file(frame, step.target or "", step.details["format"], step.details.get("options") or {},
                                 self.spec.s3)
        result.data.update(affected_rows=rows, target=step.target, status="executed")

    # -- catalog changes -----------------------------------------------------------------------
    def _step_create_schema(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        tx.create_schema(step.target or "", if_not_exists=step.details.get("if_not_exists", False))
        result.data.update(status="executed", target=step.target)

    def _step_drop_schema(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        tx.drop_schema(step.target or "", if_exists=step.details.get("if_exists", False))
        result.data.update(status="executed", target=step.target)

    def _step_create_table(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        from airflow_provider_lakehouse.ducklake.types import columns_from_arrow

        fields = [pa.field(c["name"], _declared_type(c["type"]), nullable=c["nullable"]) for c in step.details["columns"]]
        columns = list(columns_from_arrow(pa.schema(fields)))
        for i, column in enumerate(step.details["columns"]):
            if column.get("default") is not None:
                text = _default_text(column["default"])
                columns[i] = replace(columns[i], default_value=text, initial_default=text)
        created = tx.create_table(step.target or "", columns, if_not_exists=step.details.get("if_not_exists", False),
                                  or_replace=step.details.get("or_replace", False))
        result.data.update(status="executed" if created else "exists", target=step.target)

    def _step_drop_table(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        dropped = tx.drop_table(step.target or "", if_exists=step.details.get("if_exists", False))
        result.data.update(status="executed" if dropped else "absent", target=step.target)

    def _step_alter(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        details = step.details
        target = step.target or ""
        action = details["action"]
        if action == "add_column":
            column = details["column"]
            tx.add_column(target, column["name"], _declared_type(column["type"]), default=column.get("default"),
                          if_not_exists=details.get("if_not_exists", False))
        elif action == "drop_column":
            tx.drop_column(target, details["column"], if_exists=details.get("if_exists", False))
        elif action == "rename_column":
            tx.rename_column(target, details["column"], details["new_name"])
        elif action == "rename_table":
            tx.rename_table(target, details["new_name"])
        result.data.update(status="executed", target=target)

    # -- data changes -------------------------------------------------------------------------
    def _step_ctas(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        frame = self.spark.sql(step.query, args=args or None)
        schema = _arrow_schema_of(frame)
        created = tx.create_table(step.target or "", schema, if_not_exists=step.details.get("if_not_exists", False),
                                  or_replace=step.details.get("or_replace", False))
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

    def _step_insert(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        target = step.target or ""
        frame = self.spark.sql(step.query, args=args or None)
        columns = tx.table_columns(target)
        names = step.details.get("columns")
        if step.details.get("by_name"):
            names = list(frame.columns)
        elif names is None:
            if len(frame.columns) > len(columns):
                raise LakehouseError(f"INSERT gives {len(frame.columns)} values but {target} has {len(columns)} columns.")
            names = [c.name for c in columns[: len(frame.columns)]]
        elif len(names) != len(frame.columns):
            raise LakehouseError(f"INSERT names {len(names)} columns but the query gives {len(frame.columns)}.")
        if step.details.get("overwrite"):
            tx.delete_where(target, _true_expression())
        rows = self._write(tx, target, frame.toDF(*names))
        result.data.update(affected_rows=rows, target=target, status="executed")

    def _step_delete(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        doomed = self.spark.sql(step.query, args=args or None).toArrow()
        count = self._delete(tx, step.target or "", doomed)
        result.data.update(affected_rows=count, target=step.target, status="executed")

    def _step_update(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        target = step.target or ""
        columns = tx.table_columns(target)
        alias = step.details["alias"]
        assignments = {k.lower(): v for k, v in step.details["assignments"].items()}
        unknown = set(assignments) - {c.name.lower() for c in columns}
        if unknown:
            raise LakehouseError(f"{target} has no column(s) {', '.join(sorted(unknown))}.")
        projection = [f"`{alias}`.{c} AS {c}" for c in (ROWID, FILE_ID, FILE_POS)]
        projection += [f"({assignments[c.name.lower()]}) AS `{c.name}`" if c.name.lower() in assignments
                       else f"`{alias}`.`{c.name}` AS `{c.name}`" for c in columns]
        query = step.query or ""
        select = "SELECT " + ", ".join(projection) + query[query.upper().index(" FROM "):]
        frame = self.spark.sql(select, args=args or None)
        count = self._rewrite_rows(tx, target, frame, columns)
        result.data.update(affected_rows=count, target=target, status="executed")

    def _step_merge(self, step: Step, args: dict[str, Any], result: _StepResult, tx: Transaction) -> None:
        from airflow_provider_lakehouse.spark.merge import merge_queries

        target = step.target or ""
        columns = tx.table_columns(target)
        queries = merge_queries(step, [c.name for c in columns])
        affected = 0
        if queries.matched:
            frame = self.spark.sql(queries.matched, args=args or None).cache()
            self._cached.append(frame)
            duplicates = frame.groupBy(ROWID).count().where("count > 1").limit(1).count()
            if duplicates:
                raise LakehouseError("MERGE matched a target row with more than one source row.")
            deleted = frame.where("__lakehouse_action = 'delete'").select(ROWID, FILE_ID, FILE_POS).toArrow()
            updated = frame.where("__lakehouse_action = 'update'").drop("__lakehouse_action")
            affected += self._delete(tx, target, deleted)
            affected += self._rewrite_rows(tx, target, updated, columns)
        if queries.not_matched:
            inserted = self.spark.sql(queries.not_matched, args=args or None).drop("__lakehouse_clause")
            affected += self._write(tx, target, inserted)
        result.data.update(affected_rows=affected, target=target, status="executed")

    def _step_call(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        from airflow_provider_lakehouse.spark.maintenance import run_call

        before = self.lake.current_snapshot_id()
        evaluate = lambda sql: self._evaluate(sql, args)  # noqa: E731
        result.data.update(run_call(self.lake, step, evaluate), status="executed")
        after = self.lake.current_snapshot_id()
        result.data["snapshot_id"] = after if after != before else None

    # -- helpers -------------------------------------------------------------------------------
    def _write(self, tx: Transaction, target: str, frame: Any) -> int:
        """Executors write ``frame`` as data files of ``target``; the files join the transaction."""
        task = self._write_task(tx, target)
        return self._run_write(tx, target, task, lambda: frame.mapInArrow(
            lambda batches: write_batches(task, batches), f"{META_COLUMN} binary").toArrow())

    def _copy(self, tx: Transaction, target: str, files: FileRef, spark_schema: pa.Schema) -> int | None:
        """Executors copy the Parquet ``files`` into ``target`` with pyarrow (see :mod:`.parquet_copy`); None when
        the files' types differ from what Spark's reader would produce (the caller then runs the query)."""
        from airflow_provider_lakehouse.spark.files import expand
        from airflow_provider_lakehouse.spark.parquet_copy import CopyTask, copy_pieces, same_as_spark, work_items

        schema, items = work_items(expand(files.paths, self.spec.s3), self.spec.s3)
        if not same_as_spark(schema, spark_schema):
            return None
        copy = CopyTask(self._write_task(tx, target), schema)
        work = self._frame(items).repartition(items.num_rows)  # one work item per Spark task
        return self._run_write(tx, target, copy.write, lambda: work.mapInArrow(
            lambda batches: copy_pieces(copy, batches), f"{META_COLUMN} binary").toArrow())

    def _write_task(self, tx: Transaction, target: str) -> WriteTask:
        import uuid

        return WriteTask(data_path=self.lake.data_path, s3=self.spec.s3, table_dir=tx.table_dir(target),
                         columns=tuple(tx.table_columns(target)), tag=uuid.uuid4().hex[:12])

    def _run_write(self, tx: Transaction, target: str, task: WriteTask, job: Callable[[], pa.Table]) -> int:
        """Run the Spark ``job`` whose executors write ``task``'s files; register them in the transaction, or
        remove them if the job fails."""
        try:
            meta = job()
        except BaseException:
            # Spark fails the job as soon as one task fails; tasks still running may finish their file
            # afterwards, so keep removing until a pass finds nothing (anything later is an orphan that
            # ducklake_delete_orphaned_files removes).
            quiet_passes = 0
            for _ in range(20):
                quiet_passes = quiet_passes + 1 if remove_tagged_files(task) == 0 else 0
                if quiet_passes >= 3:
                    break
                time.sleep(0.5)
            raise
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
        if len(set(old.column(ROWID).to_pylist())) != old.num_rows:
            raise LakehouseError("UPDATE matched a target row more than once (the FROM clause joins it to several rows).")
        self._delete(tx, target, old)
        new = frame.select(*[f"`{c.name}`" for c in columns], frame[ROWID].alias(ROW_ID_INPUT))
        self._write(tx, target, new)
        return old.num_rows

    def _evaluate(self, sql: str, args: dict[str, Any]) -> Any:
        return self.spark.sql(f"SELECT {sql} AS value", args=args or None).collect()[0][0]

    def _temp_view(self, name: str, frame: Any) -> None:
        frame.createOrReplaceTempView(name)
        self._temp_views.add(name)

    def _drop_temp_views(self) -> None:
        for name in self._temp_views:
            try:
                self.spark.catalog.dropTempView(name)
            except Exception:
                pass
        self._temp_views.clear()
        for frame in self._cached:
            try:
                frame.unpersist()
            except Exception:
                pass
        self._cached.clear()

    # -- reads -------------------------------------------------------------------------------
    def _register_reads(self, step: Step, args: dict[str, Any], result: _StepResult) -> None:
        scans = []
        for ref in step.tables:
            frame, scan = self._table_frame(ref, args)
            self._temp_view(ref.view, frame)
            scans.append(scan)
        if scans:
            result.data["scans"] = scans
        for file_ref in step.files:
            from airflow_provider_lakehouse.spark.files import read_files

            self._temp_view(file_ref.view, read_files(self.spark, file_ref, self.spec.s3))
        for catalog_ref in step.catalog:
            self._temp_view(catalog_ref.view, self._catalog_frame(catalog_ref))

    def _snapshot_for(self, ref: TableRef, args: dict[str, Any]) -> int:
        if self._tx is not None and ref.version is None and ref.timestamp_sql is None:
            return self._tx.base.snapshot_id
        if isinstance(ref.version, str):  # a parameter
            return int(args[ref.version.lstrip(":")])
        if ref.version is not None:
            return int(ref.version)
        if ref.timestamp_sql is not None:
            value = self._evaluate(ref.timestamp_sql, args)
            if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
                value = dt.datetime.combine(value, dt.time())
            if isinstance(value, dt.datetime) and value.tzinfo is None:
                value = value.replace(tzinfo=dt.timezone.utc)  # the session time zone is UTC
            return self.lake.snapshot(timestamp=value).snapshot_id
        return self.lake.current_snapshot_id()

    def _table_frame(self, ref: TableRef, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """A DataFrame of ``ref`` at its snapshot, and what the scan read (reported per statement)."""
        from airflow_provider_lakehouse.ducklake.reader import output_schema

        snapshot_id = self._snapshot_for(ref, args)
        table = self.lake.table(ref.name, version=snapshot_id)
        if self._tx is not None and self._touched_in_tx(table):
            raise UnsupportedStatementError(
                f"{ref.name} was changed earlier in this transaction; reading it again before COMMIT is not "
                "supported. Commit first, or read it before changing it.")
        columns = self._projection(table, ref)
        virtual = (ROWID, FILE_ID, FILE_POS) if ref.row_ids else ()
        known = {c.name.lower(): c.name for c in table.columns}
        filters = [(known[name.lower()], op, _bind(value, args)) for name, op, value in ref.predicates
                   if name.lower() in known]
        plan = self.lake.scan(ref.name, columns=[c.name for c in columns], version=snapshot_id, virtual=virtual,
                              filters=filters)
        scan = {"table": table.qualified_name, "snapshot_id": snapshot_id, "columns": [c.name for c in columns],
                "files": len(plan.files), "files_pruned": plan.pruned_files, "inlined_rows": plan.inlined.num_rows}
        if self._native_ok(plan, ref):
            from airflow_provider_lakehouse.spark.native import native_frame

            return native_frame(self.spark, plan, self.lake.storage), {**scan, "reader": "spark-parquet"}
        if not plan.files and not plan.inlined.num_rows:
            empty = spark_arrow_schema(output_schema(columns, virtual)).empty_table()
            return self._frame(empty), {**scan, "reader": "none"}
        from airflow_provider_lakehouse.spark.datasource import register_scan

        task = ScanTask(
            data_path=self.lake.data_path, s3=self.spec.s3, table=table, snapshot_id=snapshot_id,
            columns=tuple(columns), files=plan.files, virtual=virtual, name_maps=self.lake._name_maps(plan),
            inlined_ipc=table_to_ipc(plan.inlined) if plan.inlined.num_rows else b"",
        )
        return register_scan(self.spark, task), {**scan, "reader": "python-source"}

    def _touched_in_tx(self, table: TableInfo) -> bool:
        tx = self._tx
        return tx is not None and any(op.table is not None and op.table.table_id == table.table_id for op in tx._ops)

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
        return self.options.s3a if self.lake.storage.is_s3 else self.options.native_reads

    def _catalog_frame(self, ref: CatalogRef) -> Any:
        from airflow_provider_lakehouse.spark.maintenance import catalog_function

        return self._frame(to_spark_table(catalog_function(self.lake, ref)))

    def _frame(self, table: pa.Table) -> Any:
        """A DataFrame of an Arrow table, its schema given: Spark Connect cannot infer one from zero rows."""
        from pyspark.sql.pandas.types import from_arrow_schema

        return self.spark.createDataFrame(table, schema=from_arrow_schema(table.schema))


def _declared_type(text: str) -> pa.DataType:
    """The Arrow type of a column type as the planner recorded it (DuckDB spelling)."""
    import sqlglot

    from airflow_provider_lakehouse.sql.types import arrow_type

    return arrow_type(sqlglot.parse_one(f"CAST(x AS {text})", read="duckdb").to)


def _bind(value: Any, args: Mapping[str, Any]) -> Any:
    if isinstance(value, dict) and "param" in value:
        return args.get(value["param"])
    if isinstance(value, tuple):
        return tuple(_bind(v, args) for v in value)
    return value


def _arrow_schema_of(frame: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(frame.schema)
    # Spark's TIMESTAMP is instant-like (session zone UTC): store it as timestamptz, as DuckDB reads it.
    return pa.schema([pa.field(f.name, f.type, nullable=True) for f in schema])


def _true_expression() -> Any:
    import pyarrow.compute as pc

    return pc.scalar(True)


def _default_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
