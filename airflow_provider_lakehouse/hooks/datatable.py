"""DataTableHook: a named Postgres database whose credentials DAG authors never see."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from airflow_provider_lakehouse.airflow_connections import datatable_postgres_spec
from airflow_provider_lakehouse.connections.names import DataTableName, datatable_conn_id, parse_datatable_name
from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.datatables.runner import Fetch, ScriptResult, run_script
from airflow_provider_lakehouse.hooks._lineage import SqlTarget, report_hook_lineage

if TYPE_CHECKING:
    import psycopg

    from airflow_provider_lakehouse.sql.params import Parameters


class DataTableHook(BaseHook):
    """Run SQL against Data Table ``datatable`` (the Airflow connection ``datatable_<name>``).

    The connection carries Postgres fields itself, or names an existing Postgres connection in
    its extra ``postgres_conn_id`` ("bring your own Postgres").

    :param datatable: ``NAME``, ``NAME:SCHEMA`` or ``:SCHEMA`` (default data table ``main``). A schema
        goes first on the search path and is created by the first script that writes.
    """

    conn_name_attr = "datatable_conn_id"
    default_conn_name = datatable_conn_id("main")
    conn_type = "datatable"
    hook_name = "Data Table (Postgres)"

    def __init__(self, datatable: str = "main", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref: DataTableName = parse_datatable_name(datatable)
        self.datatable_conn_id = self.ref.conn_id

    def __repr__(self) -> str:
        return f"DataTableHook(datatable={str(self.ref)!r})"

    @cached_property
    def spec(self) -> PostgresSpec:
        """The resolved Postgres target (its password is registered with the secrets masker)."""
        return datatable_postgres_spec(self.ref.name)

    @property
    def redactor(self) -> Redactor:
        return Redactor([self.spec.password])

    def run(
        self,
        sql: str,
        parameters: Parameters = None,
        *,
        fetch: Fetch = "all",
        autocommit: bool = False,
        report_lineage: bool = True,
    ) -> ScriptResult:
        """Run a script (one transaction) and return per-statement results plus the last result.

        :param sql: one or more statements; ``$1``/``$name`` placeholders are bound, never spliced.
        :param parameters: a list for ``$1, $2, ...`` or a dict for ``$name``.
        :param fetch: ``all`` | ``one`` | ``scalar`` | ``none`` - shape of the last statement's result.
        :param autocommit: one transaction per statement instead of one for the whole script.
        :param report_lineage: tell Airflow's hook-lineage collector which tables were read and written
            (operators that emit their own lineage turn this off).
        """
        result = run_script(
            self.spec,
            sql,
            parameters,
            schema=self.ref.schema,
            fetch=fetch,
            autocommit=autocommit,
            redactor=self.redactor,
            target=f"data table {str(self.ref)!r}",
        )
        if report_lineage:
            target = self.sql_target_of(str(self.ref))
            report_hook_lineage(self, sql, target)
        return result

    @staticmethod
    def sql_target_of(datatable: str) -> SqlTarget:
        """How SQL run on ``datatable`` names its tables (lineage): ``datatable://NAME``, its schema or
        ``public``, the postgres dialect."""
        ref = parse_datatable_name(datatable)
        return SqlTarget("datatable", ref.name, ref.schema or "public", "postgres")

    def get_conn(self) -> psycopg.Connection[Any]:
        """A raw psycopg 3 connection (search path set to the schema, if one was named)."""
        import psycopg
        from psycopg import sql as pgsql

        conn = psycopg.connect(**self.spec.connect_kwargs())
        if self.ref.schema:
            conn.execute(pgsql.SQL("SET search_path TO {}, public").format(pgsql.Identifier(self.ref.schema)))
        return conn

    def test_connection(self) -> tuple[bool, str]:
        """Used by the Airflow UI's "Test" button."""
        try:
            self.run("SELECT 1", fetch="scalar")
        except Exception as exc:  # the UI wants a message, not a traceback
            return False, str(exc)
        return True, f"Connected to data table {str(self.ref)!r}."
