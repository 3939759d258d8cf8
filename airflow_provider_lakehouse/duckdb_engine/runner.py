"""Run a planned lake script with DuckDB in this process: the second engine next to Spark.

The plan is the Spark engine's (:func:`~airflow_provider_lakehouse.spark.plan.plan_script`), so both engines
accept the same statements and refuse the same ones before anything runs; DuckDB executes each statement as
written. The rules are the Spark engine's:

- the script is one DuckDB transaction, so its data changes land as one DuckLake snapshot or none does;
  ``autocommit=True`` commits each statement (or ``BEGIN ... COMMIT`` group) on its own;
- the commit records the task instance and the outcome (``commit_extra_info``), and a retry of a try that
  committed returns that outcome instead of committing again;
- a failed script leaves no file: DuckDB removes the files of a rolled-back transaction but not those a failing
  statement had begun, so the runner logs DuckDB's file writes and removes every file it wrote that no
  snapshot references.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.datatables.arrow import retyped
from airflow_provider_lakehouse.datatables.transaction import (
    DataTableTransactions,
    resolve_earlier_tries,
    task_gid_prefix,
)
from airflow_provider_lakehouse.duckdb_engine.session import attach_lake, connect, quote_identifier, quote_literal
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.maintenance import referenced_files
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.ducklake.task_commits import OUTCOME_FIELD
from airflow_provider_lakehouse.exceptions import (
    LakehouseError,
    StatementError,
    TaskKilledError,
    UnsupportedStatementError,
)
from airflow_provider_lakehouse.interrupts import RepeatingInterrupt
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark import steps
from airflow_provider_lakehouse.spark.datatable_changes import QueryRows, change_datatable
from airflow_provider_lakehouse.spark.driver import RunOptions
from airflow_provider_lakehouse.spark.plan import Plan, Step, spark_value
from airflow_provider_lakehouse.spark.responses import StepResult, build_response, outcome_of, response_of_earlier_try
from airflow_provider_lakehouse.sql.params import placeholders_in
from airflow_provider_lakehouse.sql.split import split_statements

log = logging.getLogger(__name__)
#: the alias a script that attaches nothing runs under (its unqualified names resolve in the lake)
DEFAULT_ALIAS = "lake"
#: the first argument of a ducklake catalog function or CALL, which names the attached lake
_LAKE_ARGUMENT = re.compile(r"(\bducklake_\w+\s*\(\s*)'(?:[^']|'')*'", re.IGNORECASE)
_RUN_FIELD = "lakehouse_run"
_BATCH_ROWS = 65_536  # in commit_extra_info: finds this run's snapshots among concurrent writers'


class DuckDBPlanRunner:
    """Executes one plan against one lake with DuckDB's ``ducklake`` extension.

    :param spec: the lake (its credentials become DuckDB secrets of this in-memory connection only).
    :param options: rows kept per SELECT, the task instance the commit records, author and message.
    :param redact: applied to every error message (removes the lake's secrets).
    :param datatables: the Postgres connections of the Data Tables the script attaches, by name. Their tables
        are read and changed in the script's transaction on each (as on Spark), never through DuckDB's own
        ``postgres`` attach: DuckDB cannot write two attached databases in one transaction.
    """

    def __init__(
        self,
        spec: DuckLakeSpec,
        options: RunOptions | None = None,
        redact: Callable[[str], str] = lambda s: s,
        datatables: Mapping[str, PostgresSpec] | None = None,
    ) -> None:
        self.spec = spec
        self.options = options or RunOptions()
        self.redact = redact
        self.datatable_specs = dict(datatables or {})
        task_key = self.options.task.key if self.options.task else None
        self._datatables = DataTableTransactions(self.datatable_specs, task_gid_prefix(task_key), redact)
        self._run_id = uuid.uuid4().hex
        self._commits = 0
        self._committed: list[int] = []
        self._pending: list[StepResult] = []  # results whose snapshot is the next commit's
        self._attached = False  # the script attaches the lake itself (else it runs under DEFAULT_ALIAS)
        self._con: Any = None  # the running script's connection, for interrupt()
        self._killed = False  # interrupt() was called: a kill between two statements finds none to interrupt
        #: after a kill, interrupts the statements' connection again until they end: an interrupt that lands
        #: while no query runs is lost (DuckDB clears it when the next query begins)
        self._repeater = RepeatingInterrupt(self._interrupt_statements)
        self._statements_con: Any = None  # set while the script's statements run (not its attach, nor clean-up)

    # -- entry -------------------------------------------------------------------------------
    def run(self, plan: Plan) -> dict[str, Any]:
        """Run every step; returns the response (the Spark engine's shape).

        :raises StatementError: naming the failing statement; nothing of its transaction landed.
        """
        started = time.monotonic()
        _refuse_what_duckdb_cannot_run(plan)
        lake = DuckLake.from_spec(self.spec, create=True)  # a script may be the lake's first write, as on Spark
        recorded = response_of_earlier_try(lake, self.options.task, plan, started)
        task_key = self.options.task.key if self.options.task else None
        for line in resolve_earlier_tries(self.datatable_specs, task_key, lake_committed=recorded is not None):
            log.warning("%s", line)
        if recorded is not None:
            return recorded
        before = lake.current_snapshot_id()
        spill = tempfile.mkdtemp(prefix="lakehouse-duckdb-")
        con = self._con = connect(temp_directory=spill)
        try:
            alias = _alias_of(plan)
            self._attached = any(_attaches_lake(step) for step in plan.steps)
            try:
                attach_lake(con, self.spec, alias)
            except Exception as exc:
                raise LakehouseError(
                    f"DuckDB could not attach lake {self.spec.name!r}: {self.redact(str(exc).strip())}"
                ) from None
            con.execute(f"USE {quote_identifier(alias)}")
            con.execute("CALL enable_logging('FileSystem', level => 'trace')")  # which files DuckDB writes
            results = self._run_steps(con, plan, alias)
        except BaseException:
            self._repeater.stop()  # before the clean-up's own queries
            self._remove_unreferenced_files(con, lake)
            raise
        finally:
            self._repeater.stop()
            self._statements_con = None
            self._datatables.rollback()  # whatever did not commit
            self._con = None
            con.close()
            shutil.rmtree(spill, ignore_errors=True)
        return build_response(plan.lake, results, before, self._committed, started)

    def interrupt(self) -> None:
        """Stop the running statement (the task was killed): the script fails as any failing script does, so
        nothing commits and the files it wrote are removed."""
        self._killed = True
        _interrupt(self._con)
        self._repeater.start()

    def _interrupt_statements(self) -> None:
        _interrupt(self._statements_con)

    def _run_steps(self, con: Any, plan: Plan, alias: str) -> list[StepResult]:
        results: list[StepResult] = []
        in_block = False  # inside an explicit BEGIN ... COMMIT (autocommit scripts)
        if not plan.autocommit:
            con.execute("BEGIN")
        last: Step | None = None
        self._statements_con = con
        try:
            for step in plan.steps:
                last = step
                if self._killed:
                    raise TaskKilledError()
                if step.duckdb_error:  # as DuckDB fails it; the provider runs some steps itself (Data Tables)
                    raise StatementError(step.index, step.text, step.duckdb_error)
                result = StepResult(step.index, step.kind)
                step_started = time.monotonic()
                details = step.details
                if isinstance(details, steps.Attach) or _uses_datatable(step):
                    result.data["status"] = "executed"  # the provider's: DuckDB never sees a Data Table alias
                elif isinstance(details, (steps.Begin, steps.Commit, steps.Rollback)):
                    in_block = self._block(con, plan, alias, details, result, in_block)
                elif isinstance(details, steps.DataTableChange):
                    self._execute_datatable(con, step, details, plan.parameters, result)
                    if plan.autocommit and not in_block:
                        self._datatables.commit()
                elif isinstance(details, steps.Call):
                    # maintenance commits on its own (the planner refuses it after a data change)
                    if not plan.autocommit:
                        con.execute("COMMIT")
                    self._call(con, alias, step, details, plan.parameters, result)
                    if not plan.autocommit:
                        con.execute("BEGIN")
                elif step.writes and plan.autocommit and not in_block:
                    con.execute("BEGIN")
                    self._execute(con, step, plan.parameters, result)
                    self._pending.append(result)
                    self._commit(con, alias, [result])
                else:
                    self._execute(con, step, plan.parameters, result)
                    if step.writes:
                        self._pending.append(result)
                    elif plan.autocommit and not in_block:
                        self._datatables.commit()  # an autocommit read of a Data Table ends its transaction
                result.data["elapsed_s"] = round(time.monotonic() - step_started, 3)
                results.append(result)
            if not plan.autocommit:
                last = plan.steps[-1] if plan.steps else None
                try:
                    self._commit(con, alias, results, script=True)
                except Exception as exc:
                    message = f"the script's commit failed, nothing was committed: {str(exc).strip()}"
                    raise StatementError(
                        last.index if last else 0, last.text if last else "", self.redact(message[:4000])
                    ) from None
        except StatementError:
            self._undo_statements(con)
            raise
        except Exception as exc:
            self._undo_statements(con)
            raise self._error(last, exc) from None
        return results

    def _undo_statements(self, con: Any) -> None:
        """Roll back what the failed statements began, in DuckDB and in the Data Tables."""
        self._repeater.stop()  # the rollback runs on the same connection
        _rollback(con)
        self._datatables.rollback()

    # -- statements --------------------------------------------------------------------------
    def _execute_datatable(
        self, con: Any, step: Step, details: steps.DataTableChange, parameters: Mapping[str, Any], result: StepResult
    ) -> None:
        """A change to a Data Table: Postgres runs a statement that reads only that Data Table; for ``INSERT``
        and ``CREATE TABLE AS`` DuckDB computes the rows (in the lake transaction: it sees the script's changes)."""

        def query_rows() -> QueryRows:
            text = self._text(step)
            with self._datatable_views(con, step):
                result = con.execute(text, _bind(text, parameters))
                # DuckDB hands a UUID to Arrow as its text: a created table's column is a uuid all the same
                uuids = {i: pa.uuid() for i, column in enumerate(result.description) if str(column[1]) == "UUID"}
                rows = result.to_arrow_table()
            return rows, retyped(rows.schema, uuids)

        try:
            affected = change_datatable(self._datatables, details, parameters, query_rows)
        except Exception as exc:
            raise self._error(step, exc) from None
        result.data.update(affected_rows=affected, status="executed", target=step.target)

    @contextmanager
    def _datatable_views(self, con: Any, step: Step) -> Iterator[None]:
        """The Data Table tables ``step`` reads, registered under their views for the statement's duration."""
        for ref in step.datatables:
            con.register(ref.view, self._datatables.read(ref.datatable, ref.schema, ref.table))
        try:
            yield
        finally:
            for ref in step.datatables:
                con.unregister(ref.view)

    def _execute(self, con: Any, step: Step, parameters: Mapping[str, Any], result: StepResult) -> None:
        try:
            text = self._text(step)
            with self._datatable_views(con, step):  # until its rows are read: a SELECT streams them
                cursor = con.execute(text, _bind(text, parameters))
                if isinstance(step.details, steps.Select):
                    self._keep_rows(cursor, result)
                    return
                counted = cursor.fetchall() if cursor.description else []
        except Exception as exc:
            raise self._error(step, exc) from None
        count = int(counted[0][0]) if counted and counted[0] and isinstance(counted[0][0], int) else None
        if count is not None and (step.writes or isinstance(step.details, (steps.Copy, steps.TempTable))):
            result.data["affected_rows"] = count
        result.data["status"] = "executed"
        if step.target and (step.writes or isinstance(step.details, steps.Copy)):
            result.data["target"] = step.target

    def _call(
        self,
        con: Any,
        alias: str,
        step: Step,
        details: steps.Call,
        parameters: Mapping[str, Any],
        result: StepResult,
    ) -> None:
        """A maintenance ``CALL`` in a transaction of its own, attributed to the task, its outcome under the
        Spark engine's keys (``files_merged``, ``snapshots_expired``, ``files_deleted``, ``rows_flushed``)."""
        con.execute("BEGIN")
        try:
            rows = con.execute(self._text(step), _bind(step.text, parameters)).to_arrow_table().to_pylist()
        except Exception as exc:
            raise self._error(step, exc) from None
        self._pending.append(result)
        self._commit(con, alias, [result])
        result.data.update(_call_outcome(step.target or "", details, rows), status="executed")
        result.data.setdefault("snapshot_id", None)  # nothing to do: DuckDB commits no snapshot

    def _text(self, step: Step) -> str:
        """The statement as DuckDB runs it: a script that attaches nothing runs under :data:`DEFAULT_ALIAS`, so
        the catalog functions and CALLs that name the lake (as the Spark engine accepts) name that alias."""
        text = step.duckdb_text or step.text
        if self._attached or not (step.catalog or isinstance(step.details, steps.Call)):
            return text
        return _LAKE_ARGUMENT.sub(lambda m: f"{m.group(1)}{quote_literal(DEFAULT_ALIAS)}", text)

    def _keep_rows(self, cursor: Any, result: StepResult) -> None:
        """Keep the first ``max_rows`` rows; count the rest as they stream by (a large result is never held)."""
        limit = self.options.max_rows
        reader = cursor.to_arrow_reader(_BATCH_ROWS)
        kept: list[pa.RecordBatch] = []
        count = 0
        for batch in reader:
            if count < limit:
                kept.append(batch.slice(0, limit - count))
            count += batch.num_rows
        rows = pa.Table.from_batches(kept, schema=reader.schema)
        result.data.update(
            row_count=count, columns=rows.column_names, rows=to_json_safe(rows.to_pylist()), truncated=count > limit
        )

    def _block(
        self,
        con: Any,
        plan: Plan,
        alias: str,
        block: steps.Begin | steps.Commit | steps.Rollback,
        result: StepResult,
        in_block: bool,
    ) -> bool:
        """``BEGIN`` / ``COMMIT`` / ``ROLLBACK``: a transaction of their own under autocommit; inside a script's
        transaction, ``BEGIN`` and ``COMMIT`` only mark a group (``ROLLBACK`` is refused before anything runs)."""
        result.data["status"] = "executed"
        if not plan.autocommit:
            if isinstance(block, steps.Commit):
                self._pending.append(result)
            return in_block
        if isinstance(block, steps.Begin):
            con.execute("BEGIN")
            return True
        if isinstance(block, steps.Commit):
            self._pending.append(result)
            self._commit(con, alias, [*self._pending])
            return False
        con.execute("ROLLBACK")
        for undone in self._pending:
            undone.data["status"] = "rolled_back"
        self._pending = []
        return False

    # -- commits -----------------------------------------------------------------------------
    def _commit(self, con: Any, alias: str, results: list[StepResult], *, script: bool = False) -> None:
        """Record who commits (and, for a script, its outcome) in the snapshot, commit, and give the pending
        results the new snapshot's id."""
        self._commits += 1
        extra: dict[str, Any] = {_RUN_FIELD: f"{self._run_id}/{self._commits}"}
        task = self.options.task
        if task is not None:
            extra.update(task.commit_fields() if script else task.attribution_fields())
            if script:
                extra[OUTCOME_FIELD] = outcome_of(results)
        author = self.options.commit_author or ""
        message = self.options.commit_message or ""
        con.execute(
            f"CALL {quote_identifier(alias)}.set_commit_message(?, ?, extra_info => ?)",
            [author, message, json.dumps(extra, default=str)],
        )
        self._datatables.commit(lambda: con.execute("COMMIT"))  # the Data Tables' changes commit around it
        found = con.execute(
            f"SELECT snapshot_id FROM ducklake_snapshots({quote_literal(alias)}) "
            "WHERE commit_extra_info IS NOT NULL AND json_extract_string(commit_extra_info, ?) = ?",
            [f"$.{_RUN_FIELD}", extra[_RUN_FIELD]],
        ).fetchall()
        if found:
            snapshot_id = int(found[0][0])
            self._committed.append(snapshot_id)
            for pending in self._pending:
                pending.data["snapshot_id"] = snapshot_id
        self._pending = []

    # -- failures ------------------------------------------------------------------------------
    def _error(self, step: Step | None, exc: BaseException) -> StatementError:
        if isinstance(exc, StatementError):
            return exc
        message = str(exc).strip() or type(exc).__name__
        if self._killed and not isinstance(exc, TaskKilledError):
            message = TaskKilledError.while_running(message)
        return StatementError(step.index if step else 0, step.text if step else "", self.redact(message[:4000]))

    def _remove_unreferenced_files(self, con: Any, lake: DuckLake) -> None:
        """Delete every data file this run wrote that no snapshot references (the run failed). Files it only
        read are never candidates: a Parquet file a user keeps under the data path is not the catalog's."""
        try:
            rows = con.execute(
                "SELECT DISTINCT json_extract_string(message, '$.path') FROM duckdb_logs "
                "WHERE type = 'FileSystem' AND json_extract_string(message, '$.op') = 'WRITE'"
            ).fetchall()
        except Exception:  # the connection never got as far as logging: nothing written
            return
        data_path = lake.data_path if lake.data_path.endswith("/") else lake.data_path + "/"
        opened = {path for (path,) in rows if path and path.startswith(data_path) and path.endswith(".parquet")}
        if not opened:
            return
        referenced = referenced_files(lake)
        storage = Storage(lake.data_path, self.spec.s3)
        for path in sorted(opened - referenced):
            if storage.delete(path):
                log.info("removed %s, written by the failed script", path)


def _call_outcome(function: str, call: steps.Call, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """DuckDB's result rows of a maintenance function, in the Spark engine's shape."""
    dry_run = str(call.named.get("dry_run", "false")).strip().lower() == "true"
    if function == "ducklake_expire_snapshots":
        return {"snapshots_expired": sorted(int(r["snapshot_id"]) for r in rows), "dry_run": dry_run}
    if function in ("ducklake_cleanup_old_files", "ducklake_delete_orphaned_files"):
        return {"files_deleted": sorted(str(r["path"]) for r in rows), "dry_run": dry_run}
    if function == "ducklake_merge_adjacent_files":
        merged = {f"{r['schema_name']}.{r['table_name']}": int(r["files_processed"]) for r in rows}
        return {"files_merged": sum(merged.values()), "tables": merged}
    if function == "ducklake_flush_inlined_data":
        flushed = {f"{r['schema_name']}.{r['table_name']}": int(r["rows_flushed"]) for r in rows}
        return {"rows_flushed": sum(flushed.values()), "tables": flushed}
    return {"rows": to_json_safe(rows)}


def _rollback(con: Any) -> None:
    try:
        con.execute("ROLLBACK")
    except Exception:  # no transaction open (autocommit between statements)
        pass


def _attaches_lake(step: Step) -> bool:
    """``ATTACH 'ducklake...'`` (a Data Table's ATTACH is the provider's, DuckDB never sees it)."""
    return isinstance(step.details, steps.Attach) and not (step.target or "").startswith("datatable://")


def _uses_datatable(step: Step) -> bool:
    """``USE dt``: the planner resolved the names it selects; DuckDB stays in the lake."""
    return isinstance(step.details, steps.Use) and (step.target or "").startswith("datatable://")


def _alias_of(plan: Plan) -> str:
    """The alias of the script's ``ATTACH`` of its lake, else :data:`DEFAULT_ALIAS`."""
    for step in plan.steps:
        if _attaches_lake(step):
            node = sqlglot.parse_one(step.text, read="duckdb")
            target = node.this
            if isinstance(target, exp.Alias) and target.alias:
                return str(target.alias)
            return plan.lake
    return DEFAULT_ALIAS


def _bind(text: str, parameters: Mapping[str, Any]) -> list[Any] | dict[str, Any] | None:
    """The values of the placeholders ``text`` uses, as DuckDB binds them (a list for ``$1..$n``)."""
    used = placeholders_in(split_statements(text))
    if not used:
        return None
    if all(name.isdigit() for name in used):  # the plan keeps ``$n``'s value under ``pn``
        count = max(int(n) for n in used)
        return [spark_value(parameters.get(f"p{i}", parameters.get(str(i)))) for i in range(1, count + 1)]
    return {name: spark_value(parameters[name]) for name in used}


def _refuse_what_duckdb_cannot_run(plan: Plan) -> None:
    """DuckDB has no savepoints: a ``ROLLBACK`` inside a script's transaction cannot undo just its block."""
    if plan.autocommit:
        return
    for step in plan.steps:
        if isinstance(step.details, steps.Rollback):
            raise UnsupportedStatementError(
                f"Statement {step.index}: ROLLBACK inside a script runs on the spark engine only (DuckDB has no "
                "savepoints); use autocommit=True or engine='spark'."
            )


def _interrupt(con: Any) -> None:
    if con is not None:
        try:
            con.interrupt()
        except Exception:  # closed under us as the run ends: nothing runs on it any more
            pass
