"""Errors raised by the provider.

Every error derives from :class:`LakehouseError`. The marker mixins :class:`TransientError` and
:class:`TerminalError` tell a caller whether retrying the same work can succeed. Messages never
contain credentials: whoever builds an error from a driver message passes it through
:func:`airflow_provider_lakehouse.connections.redact.redact` first.
"""

from __future__ import annotations


class LakehouseError(Exception):
    """Root of every error this provider raises."""


class TransientError(LakehouseError):
    """Retrying the same work may succeed (a conflict, a lost connection)."""


class TerminalError(LakehouseError):
    """Retrying the same work fails the same way (bad input, missing object)."""


class ConnectionNotFoundError(TerminalError):
    """A Data Table or lake name does not resolve to an Airflow connection."""

    def __init__(self, kind: str, name: str, conn_id: str) -> None:
        self.kind = kind
        self.name = name
        self.conn_id = conn_id
        super().__init__(
            f"Unknown {kind} {name!r}: no Airflow connection with id {conn_id!r} was found. "
            f"Create it (type {kind!r}) or set AIRFLOW_CONN_{conn_id.upper()}."
        )


class InvalidConnectionError(TerminalError, ValueError):
    """A connection exists but its fields do not describe a usable target."""


class ParameterError(TerminalError, ValueError):
    """SQL parameters do not match the placeholders in the SQL; nothing was sent."""


class StatementError(TerminalError):
    """A statement of a script failed; names the statement by index (1-based) and text.

    :param index: 1-based position of the statement in the script.
    :param statement: the statement text as the user wrote it (parameters are not spliced in).
    :param message: the database's message, already redacted.
    """

    def __init__(self, index: int, statement: str, message: str) -> None:
        self.index = index
        self.statement = statement
        self.message = message
        shown = statement if len(statement) <= 500 else statement[:497] + "..."
        super().__init__(f"Statement {index} failed: {message}\n  statement {index}: {shown}")


class TaskKilledError(TerminalError):
    """The task was killed (its ``on_kill``) between two statements of its script: the next one did not start,
    and nothing of the script commits."""

    def __init__(self) -> None:
        super().__init__("the task was killed before this statement started, nothing was committed")

    @staticmethod
    def while_running(message: str) -> str:
        """The error ``message`` of a statement the kill interrupted, saying so."""
        return f"the task was killed while this statement ran, nothing was committed: {message}"


class ServiceUnavailableError(TransientError):
    """A database or object store could not be reached; nothing was changed."""


class SpecVersionError(TerminalError):
    """The lake's catalog uses a DuckLake spec version this implementation does not read or write."""


class CatalogNotFoundError(TerminalError, LookupError):
    """The metadata store holds no DuckLake catalog (create one with ``DuckLake.create()``)."""


class SnapshotNotFoundError(TerminalError, LookupError):
    """No snapshot matches the requested version or time (it may have been expired)."""


class NoSuchSchemaError(TerminalError, LookupError):
    """The schema does not exist at the snapshot read."""


class NoSuchTableError(TerminalError, LookupError):
    """The table does not exist at the snapshot read."""


class SchemaAlreadyExistsError(TerminalError):
    """CREATE SCHEMA of a name that exists."""


class TableAlreadyExistsError(TerminalError):
    """CREATE TABLE of a name that exists."""


class CommitConflictError(TransientError):
    """Another writer changed what this commit depends on; nothing of this commit landed."""


class CommitStateUnknownError(LakehouseError):
    """The catalog stopped answering while committing: the commit may or may not have landed.

    Files written for it are kept (deleting them could corrupt a commit that did land).
    """


class UnsupportedStatementError(TerminalError):
    """A statement this provider cannot run; nothing was touched."""


#: how to get the full pyspark (Spark's jars and launcher), which the base install leaves out
SPARK_EXTRA_INSTALL = "pip install 'airflow-provider-lakehouse[spark]'"


class SparkNotInstalledError(TerminalError):
    """Local Spark or spark-submit was asked for, but only the Spark Connect client (``pyspark-client``) is
    installed: no Spark distribution (jars, ``spark-submit``) to start.

    :param what: what could not start, e.g. ``local Spark``.
    :param detail: what was looked for and not found.
    """

    def __init__(self, what: str, detail: str) -> None:
        self.what = what
        super().__init__(
            f"{what} needs a Spark distribution, and none was found ({detail}). The provider's base install has "
            f"only the Spark Connect client (pyspark-client). Install the full pyspark with: {SPARK_EXTRA_INSTALL} "
            "(then Java 17+), set SPARK_HOME to a Spark 4 distribution, or give the lake a 'spark_connect' "
            "connection (spark_conn_id) to run on a Spark Connect server instead."
        )


class SparkVersionError(TerminalError):
    """The Spark Connect server runs an older Spark release than the task's pyspark client: such a client fails
    on settings and messages the server does not know (its first ``createDataFrame`` already)."""
