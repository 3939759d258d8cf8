"""Table asset URIs ``datatable://NAME/schema.table`` and ``ducklake://NAME/schema.table`` (stdlib only).

NAME is a Data Table (connection ``datatable_<NAME>``) or a lake (connection ``ducklake_<NAME>``).
NAME, schema and table are folded to lower case, so a table has one asset identity however a task
spells it: Airflow matches producers and consumers by the exact URI string.

>>> parse_table_asset_uri("ducklake://Main/Sales.Orders")
TableAsset(scheme='ducklake', name='main', schema='sales', table='orders')
>>> table_asset_uri("datatable", "main", "public", "Events")
'datatable://main/public.events'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

DATATABLE = "datatable"
DUCKLAKE = "ducklake"
SCHEMES = (DATATABLE, DUCKLAKE)

# The rule of connections/names.py: NAME becomes part of a connection id and of the environment
# variable AIRFLOW_CONN_<ID>, so only characters that survive that mapping are allowed.
_NAME = re.compile(r"[A-Za-z0-9_]{1,200}")
# Unquoted SQL identifiers plus '$' (Postgres allows it after the first character). Anything that
# would need quoting (dots, slashes, spaces) would make "schema.table" ambiguous in a URI.
_IDENTIFIER = re.compile(r"[A-Za-z0-9_$]+")


@dataclass(frozen=True)
class TableAsset:
    """One table as an asset: ``<scheme>://<name>/<schema>.<table>``, every part folded to lower case.

    :param scheme: ``datatable`` or ``ducklake``.
    :param name: the Data Table or lake name (``[A-Za-z0-9_]{1,200}``).
    :param schema: the table's schema.
    :param table: the table's name.
    :raises ValueError: if a part has characters the URI form cannot carry.

    >>> TableAsset("ducklake", "Main", "Sales", "Orders").uri
    'ducklake://main/sales.orders'
    """

    scheme: str
    name: str
    schema: str
    table: str

    def __post_init__(self) -> None:
        parts = (self.scheme, self.name, self.schema, self.table)
        if not all(isinstance(part, str) for part in parts):
            raise TypeError(f"TableAsset parts must be strings, got {parts!r}")
        # Checked before folding: str.lower() maps a few non-ASCII letters (the Kelvin sign) to ASCII ones.
        if problem := _component_problem(self.scheme.lower(), self.name, self.schema, self.table):
            raise ValueError(f"Invalid table asset: {problem}; expected {_form(self.scheme.lower())}.")
        # Fold here, not only in the parser: an asset built from parts must equal the one parsed from its URI.
        for attribute, value in zip(("scheme", "name", "schema", "table"), parts, strict=False):
            object.__setattr__(self, attribute, value.lower())

    @property
    def uri(self) -> str:
        """The normalized asset URI."""
        return f"{self.scheme}://{self.name}/{self.schema}.{self.table}"

    @property
    def store(self) -> str:
        """``<scheme>://<name>``: the store the table lives in, as a URI prefix.

        >>> TableAsset("ducklake", "main", "sales", "orders").store
        'ducklake://main'
        """
        return f"{self.scheme}://{self.name}"

    @property
    def qualified_table(self) -> str:
        """``<schema>.<table>``."""
        return f"{self.schema}.{self.table}"


def table_asset_uri(scheme: str, name: str, schema: str, table: str) -> str:
    """Build the normalized asset URI of a table.

    :param scheme: ``datatable`` or ``ducklake``.
    :param name: the Data Table or lake name.
    :param schema: the table's schema.
    :param table: the table's name.
    :raises ValueError: if a part has characters the URI form cannot carry.

    >>> table_asset_uri("ducklake", "main", "Sales", "orders")
    'ducklake://main/sales.orders'
    """
    return TableAsset(scheme, name, schema, table).uri


def parse_table_asset_uri(uri: str, *, scheme: str | None = None) -> TableAsset:
    """Parse ``datatable://NAME/schema.table`` or ``ducklake://NAME/schema.table``.

    :param uri: the asset URI.
    :param scheme: accept only this scheme; ``None`` accepts both.
    :raises ValueError: naming what is wrong and showing the expected form.

    >>> parse_table_asset_uri("ducklake://main/onlyone")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Invalid asset URI 'ducklake://main/onlyone': the path must be /schema.table ...
    """
    try:
        parts = urlsplit(uri)
    except ValueError as exc:  # e.g. an unbalanced '[' in the host: still say which form is expected
        raise ValueError(f"Invalid asset URI: {exc}; expected {_form(scheme)}.") from None
    return _parse(parts, scheme)


def sanitize_table_uri(uri: SplitResult, *, scheme: str | None = None) -> SplitResult:
    """Normalize a table asset URI for Airflow (the ``asset-uris`` handler contract).

    Airflow lower-cases the scheme, drops user info that carries a password, strips trailing slashes,
    sorts the query and drops the fragment before it calls the handler; everything else is checked here.

    :param uri: the URI, split.
    :param scheme: accept only this scheme; ``None`` accepts both.
    :raises ValueError: naming what is wrong and showing the expected form.

    >>> sanitize_table_uri(urlsplit("ducklake://Main/Sales.Orders")).geturl()
    'ducklake://main/sales.orders'
    """
    return urlsplit(_parse(uri, scheme).uri)


def ducklake_openlineage_name(asset: TableAsset) -> tuple[str, str]:
    """OpenLineage (namespace, name) of a lake table: ``ducklake://NAME`` and ``schema.table``.

    The namespace is the lake, not its catalog database: the catalog can move while the lake's
    tables keep their identity. The same shape, ``datatable://NAME``, is the fallback of a Data Table
    whose connection cannot be resolved.

    :param asset: the table.

    >>> ducklake_openlineage_name(parse_table_asset_uri("ducklake://main/sales.orders"))
    ('ducklake://main', 'sales.orders')
    """
    return asset.store, asset.qualified_table


def postgres_openlineage_name(host: str, port: int, database: str, schema: str, table: str) -> tuple[str, str]:
    """OpenLineage (namespace, name) of a Postgres table: ``postgres://host:port`` and ``database.schema.table``.

    This is OpenLineage's naming for Postgres, so a Data Table matches what other integrations
    (the Postgres provider, Spark's JDBC lineage) report for the same table.

    :param host: the database host.
    :param port: the database port.
    :param database: the database name.
    :param schema: the table's schema.
    :param table: the table's name.

    >>> postgres_openlineage_name("db.internal", 5432, "warehouse", "sales", "orders")
    ('postgres://db.internal:5432', 'warehouse.sales.orders')
    """
    return f"postgres://{host}:{port}", f"{database}.{schema}.{table}"


def _parse(parts: SplitResult, expected: str | None) -> TableAsset:
    if problem := _structure_problem(parts, expected):
        raise ValueError(f"Invalid asset URI {_shown(parts)!r}: {problem}; expected {_form(expected or parts.scheme)}.")
    schema, _, table = parts.path[1:].partition(".")
    return TableAsset(parts.scheme, parts.netloc, schema, table)


def _structure_problem(parts: SplitResult, expected: str | None) -> str | None:
    scheme = parts.scheme.lower()
    if expected is not None and scheme != expected:
        return f"the scheme is {scheme!r}, not {expected!r}"
    if scheme not in SCHEMES:
        return f"the scheme {scheme!r} is not one of {', '.join(SCHEMES)}"
    if parts.query:
        return "a query string is not allowed"
    if parts.fragment:
        return "a fragment is not allowed"
    netloc = parts.netloc
    if "@" in netloc:
        return "user or password is not allowed"
    if ":" in netloc:
        return "a port is not allowed"
    if not netloc:
        return "NAME is missing"
    path = parts.path
    if path.count("/") != 1 or path.count(".") != 1 or not all(path[1:].split(".")):
        return "the path must be /schema.table (two non-empty dotted parts)"
    schema, _, table = path[1:].partition(".")
    return _component_problem(scheme, netloc, schema, table)


def _component_problem(scheme: str, name: str, schema: str, table: str) -> str | None:
    if scheme not in SCHEMES:
        return f"the scheme {scheme!r} is not one of {', '.join(SCHEMES)}"
    if not _NAME.fullmatch(name):
        return f"NAME {name!r} must be 1 to 200 letters, digits or underscores"
    for kind, value in (("schema", schema), ("table", table)):
        if not _IDENTIFIER.fullmatch(value):
            return f"the {kind} {value!r} must be letters, digits, '_' or '$'"
    return None


def _form(scheme: str | None) -> str:
    if scheme in SCHEMES:
        return f"{scheme}://NAME/schema.table"
    return " or ".join(f"{s}://NAME/schema.table" for s in SCHEMES)


def _shown(parts: SplitResult) -> str:
    # An error message must not carry a password someone put in the URI by mistake.
    _, at, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"***@{host}")) if at else urlunsplit(parts)
