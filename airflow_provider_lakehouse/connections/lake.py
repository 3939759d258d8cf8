"""Specs for a DuckLake lake: its catalog, its data path and the storage credentials."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_lakehouse.connections.specs import ConnectionLike, PostgresSpec, postgres_spec_from_connection
from airflow_provider_lakehouse.exceptions import InvalidConnectionError


@dataclass(frozen=True)
class S3Spec:
    """S3 (or S3-compatible) credentials and endpoint.

    >>> S3Spec(access_key="AK", secret_key="SK", endpoint_url="http://127.0.0.1:9000")
    S3Spec(endpoint_url='http://127.0.0.1:9000', region='us-east-1', access_key='AK', secret_key='***')
    """

    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    endpoint_url: str | None = None
    region: str = "us-east-1"

    def __repr__(self) -> str:
        return (
            f"S3Spec(endpoint_url={self.endpoint_url!r}, region={self.region!r}, access_key={self.access_key!r}, "
            f"secret_key={'***' if self.secret_key else None!r})"
        )


@dataclass(frozen=True)
class RetryPolicy:
    """How a conflicting commit is retried (DuckDB's defaults: 10 tries, 100 ms, x1.5), and how long an
    unavailable catalog is waited for."""

    max_retries: int = 10
    wait_ms: int = 100
    backoff: float = 1.5
    #: how long a catalog that is restarting or unreachable is waited for before the task fails
    reconnect_timeout_s: float = 60.0


@dataclass(frozen=True)
class DuckLakeSpec:
    """Everything needed to open lake ``name``.

    :param catalog: a :class:`PostgresSpec`, or the path of a SQLite catalog file.
    """

    name: str
    catalog: PostgresSpec | str
    data_path: str
    metadata_schema: str | None = None
    s3: S3Spec | None = None
    spark_conn_id: str | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    spark_s3a: bool | None = None  # None: Spark reads S3 itself when it can (see spark.s3a)
    engine: str = "spark"  # the lake's default engine: spark, duckdb or auto (see duckdb_engine.choice)
    duckdb_max_scan_bytes: int | None = None  # auto: DuckDB up to this many scanned bytes (None: by memory)
    spark_class_archive: bool = True  # spark-submit drivers map a class-data archive (see spark.class_archive)

    @property
    def secrets(self) -> list[str]:
        """Every secret this spec holds, for masking and redaction."""
        values = [self.catalog.password if isinstance(self.catalog, PostgresSpec) else None]
        if self.s3:
            values += [self.s3.secret_key, self.s3.session_token]
        return [v for v in values if v]


#: the engines a lake script can run on (``auto`` chooses per script)
ENGINES = ("spark", "duckdb", "auto")


def check_engine(engine: str, where: str) -> str:
    """``engine`` in lower case if it is one of :data:`ENGINES`.

    >>> check_engine(" DuckDB", "task t")
    'duckdb'

    :raises InvalidConnectionError: naming ``where`` the value came from.
    """
    value = str(engine).strip().lower()
    if value not in ENGINES:
        raise InvalidConnectionError(f"{where}: engine {engine!r} is not one of {', '.join(ENGINES)}.")
    return value


def ducklake_conn_id(name: str) -> str:
    """Connection id of lake ``name``.

    >>> ducklake_conn_id("main")
    'ducklake_main'
    """
    return f"ducklake_{name}"


def ducklake_spec_from_connection(
    name: str, conn: ConnectionLike, *, catalog_conn: ConnectionLike | None = None, s3: S3Spec | None = None
) -> DuckLakeSpec:
    """Build a :class:`DuckLakeSpec` from the lake connection (and the connections it references).

    :raises InvalidConnectionError: without a data path or a catalog.
    """
    extra: dict[str, Any] = dict(conn.extra_dejson or {})
    data_path = str(extra.get("data_path") or "").strip()
    if not data_path:
        raise InvalidConnectionError(f"Connection {conn.conn_id!r} has no 'data_path' in its extra.")
    if not data_path.endswith("/"):
        data_path += "/"  # DuckDB stores the data path with a trailing separator
    sqlite_path = extra.get("catalog_sqlite_path")
    catalog: PostgresSpec | str
    if sqlite_path:
        catalog = str(sqlite_path)
    else:
        catalog = postgres_spec_from_connection(catalog_conn or conn)
    spark_conf = extra.get("spark_conf") or {}
    if isinstance(spark_conf, str):  # the connection form's text field holds the JSON object as text
        try:
            spark_conf = json.loads(spark_conf) if spark_conf.strip() else {}
        except ValueError:
            raise InvalidConnectionError(f"Connection {conn.conn_id!r}: 'spark_conf' is not valid JSON.") from None
    if not isinstance(spark_conf, Mapping):
        raise InvalidConnectionError(f"Connection {conn.conn_id!r}: 'spark_conf' must be a JSON object.")
    return DuckLakeSpec(
        name=name,
        catalog=catalog,
        data_path=data_path,
        metadata_schema=extra.get("metadata_schema") or None,
        s3=s3,
        spark_conn_id=extra.get("spark_conn_id") or None,
        spark_conf={str(k): str(v) for k, v in spark_conf.items()},
        spark_s3a=_optional_flag(extra.get("spark_s3a")),
        spark_class_archive=_optional_flag(extra.get("spark_class_archive")) is not False,
        engine=check_engine(extra.get("engine") or "spark", f"Connection {conn.conn_id!r}"),
        duckdb_max_scan_bytes=_optional_int(extra.get("duckdb_max_scan_bytes"), conn.conn_id, "duckdb_max_scan_bytes"),
        retry=RetryPolicy(
            max_retries=int(extra.get("commit_max_retries", 10)),
            wait_ms=int(extra.get("commit_retry_wait_ms", 100)),
            backoff=float(extra.get("commit_retry_backoff", 1.5)),
            reconnect_timeout_s=float(extra.get("catalog_reconnect_timeout_s", 60)),
        ),
    )


def _optional_int(value: Any, conn_id: str | None, key: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidConnectionError(f"Connection {conn_id!r}: {key!r} must be a whole number of bytes.") from None


def _optional_flag(value: Any) -> bool | None:
    """A connection flag that may be left unset (None).

    >>> _optional_flag(None), _optional_flag("true"), _optional_flag(False), _optional_flag("")
    (None, True, False, None)
    """
    if value is None or value == "":
        return None
    return str(value).lower() in ("true", "1", "yes")


def s3_spec_from_aws_connection(conn: ConnectionLike) -> S3Spec:
    """Read an Amazon provider ``aws`` connection: login/password are the key pair; extra may set the endpoint."""
    extra = dict(conn.extra_dejson or {})
    endpoint = extra.get("endpoint_url") or (extra.get("service_config") or {}).get("s3", {}).get("endpoint_url")
    return S3Spec(
        access_key=conn.login or extra.get("aws_access_key_id"),
        secret_key=conn.password or extra.get("aws_secret_access_key"),
        session_token=extra.get("aws_session_token"),
        endpoint_url=endpoint,
        region=extra.get("region_name") or "us-east-1",
    )
