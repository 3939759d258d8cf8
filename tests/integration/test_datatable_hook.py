"""DataTableHook, DataTableOperator and the TaskFlow client against the local stack's real PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from decimal import Decimal

import pytest

from airflow_provider_lakehouse.client import datatable
from airflow_provider_lakehouse.exceptions import (
    ConnectionNotFoundError,
    ParameterError,
    ServiceUnavailableError,
    StatementError,
)
from airflow_provider_lakehouse.hooks.datatable import DataTableHook

pytestmark = pytest.mark.integration


@pytest.fixture
def schema(stack: object, request: pytest.FixtureRequest) -> str:
    """A fresh schema per test, dropped afterwards."""
    name = f"t_{request.node.name[:40].lower()}_{uuid.uuid4().hex[:6]}".replace("[", "_").replace("]", "_")
    yield name
    DataTableHook("main").run(f'DROP SCHEMA IF EXISTS "{name}" CASCADE', fetch="none")


def password() -> str:
    return json.loads(os.environ["AIRFLOW_CONN_DATATABLE_MAIN"])["password"]


def test_parameters_round_trip_with_their_types(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    values = {
        "i": 42,
        "f": 1.5,
        "b": True,
        "n": None,
        "s": "héllo",
        "d": dt.date(2024, 2, 29),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        "dec": Decimal("12.34"),
        "u": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "by": b"\x00\x01",
        "arr": [1, 2, 3],
        "doc": {"k": ["v", 1]},
        "docs": [{"a": 1}, {"a": 2}],
    }
    row = hook.run(
        "SELECT $i AS i, $f AS f, $b AS b, $n::text AS n, $s AS s, $d AS d, $ts AS ts, $dec AS dec, $u AS u, "
        "$by AS by, $arr AS arr, $doc AS doc, $docs AS docs",
        values,
        fetch="one",
    ).result
    assert row == {
        "i": 42,
        "f": 1.5,
        "b": True,
        "n": None,
        "s": "héllo",
        "d": "2024-02-29",
        "ts": "2024-01-02T03:04:05+00:00",
        "dec": 12.34,
        "u": "12345678-1234-5678-1234-567812345678",
        "by": "AAE=",
        "arr": [1, 2, 3],
        "doc": {"k": ["v", 1]},
        "docs": [{"a": 1}, {"a": 2}],
    }


def test_fetch_modes(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    hook.run("CREATE TABLE t (id int, name text); INSERT INTO t VALUES (1, 'a'), (2, 'b')", fetch="none")
    assert hook.run("SELECT * FROM t ORDER BY id").result == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert hook.run("SELECT * FROM t ORDER BY id", fetch="one").result == {"id": 1, "name": "a"}
    assert hook.run("SELECT count(*) FROM t", fetch="scalar").result == 2
    assert hook.run("SELECT * FROM t WHERE false", fetch="one").result is None
    assert hook.run("SELECT * FROM t WHERE false", fetch="scalar").result is None
    assert hook.run("DELETE FROM t WHERE id = 1", fetch="none").statements[-1].rowcount == 1


def test_duplicate_column_names_are_kept(schema: str) -> None:
    assert DataTableHook("main").run("SELECT 1 AS id, 2 AS id, 3 AS id", fetch="one").result == {
        "id": 1,
        "id_2": 2,
        "id_3": 3,
    }


def test_schema_is_created_on_first_write_and_is_the_search_path(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    # a read-only script does not create the schema
    hook.run("SELECT 1")
    exists = "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1"
    assert DataTableHook("main").run(exists, [schema], fetch="scalar").result == 0
    hook.run("CREATE TABLE here (a int)", fetch="none")
    assert DataTableHook("main").run(exists, [schema], fetch="scalar").result == 1
    where = "SELECT table_schema FROM information_schema.tables WHERE table_name = 'here'"
    assert DataTableHook("main").run(where, fetch="scalar").result == schema


def test_a_failing_statement_rolls_back_the_whole_script(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    hook.run("CREATE TABLE t (id int primary key)", fetch="none")
    with pytest.raises(StatementError) as info:
        hook.run("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (1)")
    assert info.value.index == 3
    assert "statement 3: INSERT INTO t VALUES (1)" in str(info.value)
    assert "duplicate key" in str(info.value)
    assert hook.run("SELECT count(*) FROM t", fetch="scalar").result == 0


def test_injection_payloads_are_stored_literally(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    hook.run("CREATE TABLE victims (name text)", fetch="none")
    payloads = ["x'); DROP TABLE victims; --", "$1", "%s", "%(name)s", "' OR '1'='1", "\\'; SELECT pg_sleep(1); --"]
    for payload in payloads:
        hook.run("INSERT INTO victims VALUES ($1)", [payload], fetch="none")
    stored = hook.run("SELECT name FROM victims").result
    assert [row["name"] for row in stored] == payloads


def test_percent_signs_in_sql_survive_binding(schema: str) -> None:
    row = DataTableHook("main").run("SELECT '100%' AS lit, $1 || '%' AS bound, 7 % 4 AS modulo", ["50"], fetch="one")
    assert row.result == {"lit": "100%", "bound": "50%", "modulo": 3}
    # and without parameters the text is passed through untouched
    assert DataTableHook("main").run("SELECT '100%%' AS lit", fetch="scalar").result == "100%%"


def test_parameter_errors_are_raised_before_anything_is_sent(schema: str) -> None:
    hook = DataTableHook(f"main:{schema}")
    hook.run("CREATE TABLE t (a int)", fetch="none")
    with pytest.raises(ParameterError, match="Wrong parameter count"):
        hook.run("INSERT INTO t VALUES (1); INSERT INTO t VALUES ($1), ($2)", [5])
    with pytest.raises(ParameterError, match=r"\$missing"):
        hook.run("INSERT INTO t VALUES (2); SELECT $missing", {"other": 1})
    assert hook.run("SELECT count(*) FROM t", fetch="scalar").result == 0


def test_unknown_data_table_names_the_connection_id(stack: object) -> None:
    with pytest.raises(ConnectionNotFoundError, match="datatable_does_not_exist"):
        DataTableHook("does_not_exist").run("SELECT 1")


def test_bring_your_own_postgres_connection(stack: object, monkeypatch: pytest.MonkeyPatch) -> None:
    main = json.loads(os.environ["AIRFLOW_CONN_DATATABLE_MAIN"])
    monkeypatch.setenv("AIRFLOW_CONN_MY_PG", json.dumps(dict(main, conn_type="postgres")))
    monkeypatch.setenv(
        "AIRFLOW_CONN_DATATABLE_BYO", json.dumps({"conn_type": "datatable", "extra": {"postgres_conn_id": "my_pg"}})
    )
    assert DataTableHook("byo").run("SELECT current_database()", fetch="scalar").result == main["schema"]
    monkeypatch.setenv(
        "AIRFLOW_CONN_DATATABLE_BROKEN", json.dumps({"conn_type": "datatable", "extra": {"postgres_conn_id": "nope"}})
    )
    with pytest.raises(ConnectionNotFoundError, match="'nope'"):
        DataTableHook("broken").run("SELECT 1")


def test_errors_never_contain_the_password(stack: object, monkeypatch: pytest.MonkeyPatch) -> None:
    main = json.loads(os.environ["AIRFLOW_CONN_DATATABLE_MAIN"])
    secret = password()
    # a statement that echoes the password back in the error message
    with pytest.raises(StatementError) as info:
        DataTableHook("main").run("SELECT $1::int", [secret])
    assert "invalid input syntax" in str(info.value)
    assert secret not in str(info.value) and "***" in str(info.value)
    # wrong password: the connection error names the target, not the secret
    monkeypatch.setenv("AIRFLOW_CONN_DATATABLE_WRONG", json.dumps(dict(main, password=secret + "x")))
    with pytest.raises(ServiceUnavailableError) as info2:
        DataTableHook("wrong").run("SELECT 1")
    assert "password authentication failed" in str(info2.value)
    assert secret not in str(info2.value)
    # unreachable server
    monkeypatch.setenv("AIRFLOW_CONN_DATATABLE_DOWN", json.dumps(dict(main, port=1)))
    with pytest.raises(ServiceUnavailableError, match=r"127\.0\.0\.1:1"):
        DataTableHook("down").run("SELECT 1")
    assert secret not in repr(DataTableHook("main").spec)


def test_taskflow_client(schema: str) -> None:
    db = datatable(f"main:{schema}")
    assert db.query("CREATE TABLE t (id int, label text)").execute() == 0
    assert db.query("INSERT INTO t VALUES ($1, $2), ($3, $4)", 1, "one", 2, "two").execute() == 2
    assert db.query("SELECT * FROM t WHERE id = $id", id=2).fetch() == [{"id": 2, "label": "two"}]
    assert db.query("SELECT * FROM t ORDER BY id").fetch_one() == {"id": 1, "label": "one"}
    assert db.query("SELECT max(id) FROM t").fetch_one_scalar() == 2
    with pytest.raises(ValueError, match="not both"):
        db.query("SELECT $1", 1, id=2)


def test_operator_returns_json_safe_result_and_validates_fetch(schema: str) -> None:
    from airflow_provider_lakehouse.operators.datatable import DataTableOperator

    with pytest.raises(ValueError, match="fetch must be one of"):
        DataTableOperator(task_id="bad", sql="SELECT 1", fetch="many")
    op = DataTableOperator(
        task_id="op",
        datatable=f"main:{schema}",
        sql="SELECT $1::numeric AS amount, now()::date AS day",
        parameters=["10.25"],
        fetch="one",
    )
    result = op.execute(context={})  # type: ignore[arg-type]
    json.dumps(result)
    assert result["amount"] == 10.25 and isinstance(result["day"], str)
