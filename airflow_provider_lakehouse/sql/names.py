"""What names in a script mean: the store an ``ATTACH`` names, what ``USE`` selects, the (store, schema, table)
a table reference resolves to, and which string literals are file paths.

The one set of rules the Spark planner (what a script may run) and the lineage extractor (what it touches)
share, so the two never read the same script differently. Comparisons of aliases are case-insensitive; names
come back as written (the lineage extractor lower-cases them before asking).

>>> scope = NameScope()
>>> scope.attach("dl", parse_attach("ducklake://sales"))
>>> scope.use(["dl", "analytics"]).schema
'analytics'
>>> scope.table(None, None, "t"), scope.table(None, "dl", "t").qualified, scope.table("x", "s", "t").catalog
(TableName(schema='analytics', table='t', store='ducklake://sales', catalog=None), 'analytics.t', 'x')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from airflow_provider_lakehouse.sql.split import split_statements

#: the schema unqualified names fall into when the script does not ``USE`` one, per dialect
DEFAULT_SCHEMAS = {"postgres": "public", "duckdb": "main", "spark": "default"}
STORE_DEFAULT_SCHEMA = "main"  # a DuckLake's (and DuckDB's) default schema
DATATABLE_DEFAULT_SCHEMA = "public"  # a Data Table attached without a schema: Postgres's (as DuckDB attaches it)
#: Spark's ``parquet.`path``` prefixes: a quoted name behind one of these is a file, whatever it looks like
FILE_FORMAT_PREFIXES = frozenset({"parquet", "csv", "json", "orc", "text", "avro", "delta"})

_STORE_URI = re.compile(
    r"^(?P<kind>ducklake|datatable)(?::(?://)?(?P<name>[A-Za-z0-9_-]*)(?::(?P<schema>[A-Za-z0-9_]+))?)?$",
    re.IGNORECASE,
)
_PATH = re.compile(
    r"^([a-z][a-z0-9+.-]*://|/|\./|\.\./|~/)|\.(parquet|csv|tsv|json|ndjson|jsonl|gz|zst)$", re.IGNORECASE
)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
_COMPRESSIONS = ("gz", "zst")
_FORMATS = {"parquet": "parquet", "csv": "csv", "tsv": "tsv", "json": "json", "ndjson": "json", "jsonl": "json"}


@dataclass(frozen=True)
class StoreRef:
    """A store an ``ATTACH`` literal names: ``kind`` is ``ducklake`` or ``datatable``; ``name`` as written.

    :param schema: the schema ``alias.table`` falls into (``datatable://NAME:SCHEMA``); None: the store's default
        (``main`` for a lake, ``public`` for a Data Table).
    """

    kind: str
    name: str
    schema: str | None = None

    @property
    def default_schema(self) -> str:
        """Where ``alias.table`` and ``USE alias`` land."""
        if self.schema:
            return self.schema
        return DATATABLE_DEFAULT_SCHEMA if self.kind == "datatable" else STORE_DEFAULT_SCHEMA

    @property
    def uri(self) -> str:
        """``ducklake://sales``: how lineage names the store (lower case)."""
        return f"{self.kind}://{self.name.lower()}"


def parse_attach(literal: str) -> StoreRef | None:
    """The store an ``ATTACH '<literal>'`` names; None for anything else (a database file, a DSN ...).

    ``ducklake`` and ``datatable`` alone name the store called ``main``; a Data Table may name the schema its
    unqualified tables are in (``datatable://NAME:SCHEMA``).

    >>> parse_attach("ducklake"), parse_attach("DuckLake:sales"), parse_attach("datatable://ops-1")
    (StoreRef(kind='ducklake', name='main', schema=None), StoreRef(kind='ducklake', name='sales', schema=None), StoreRef(kind='datatable', name='ops-1', schema=None))
    >>> parse_attach("datatable://main:analytics").default_schema, parse_attach("datatable").default_schema
    ('analytics', 'public')
    >>> parse_attach("other.duckdb"), parse_attach("ducklake:postgres:dbname=x"), parse_attach("ducklake://x:s")
    (None, None, None)
    """
    match = _STORE_URI.match(literal.strip())
    if not match or (match["schema"] and match["kind"].lower() != "datatable"):
        return None
    return StoreRef(match["kind"].lower(), match["name"] or "main", match["schema"])


def attached_lake(sql: str) -> str | None:
    """The lake a script's first ``ATTACH 'ducklake[://NAME]'`` names, read from its tokens (no parsing).

    >>> attached_lake("ATTACH 'ducklake://sales' AS dl; USE dl; SELECT 1"), attached_lake("SELECT 1")
    ('sales', None)
    """
    for statement in split_statements(sql):
        if statement.kind != "attach":
            continue
        literal = next((t.text[1:-1] for t in statement.tokens if t.kind == "string"), "")
        store = parse_attach(literal)
        if store is not None and store.kind == "ducklake":
            return store.name
    return None


@dataclass(frozen=True)
class FilePath:
    """A string written where a table goes that names files.

    :param format: ``parquet``, ``csv``, ``tsv`` or ``json`` from the Spark prefix or the name's suffix
        (a compression suffix removed); None when neither tells.
    :param scheme: ``s3``, ``file`` ... (lower case); None for a filesystem path.
    :param compression: ``gz`` or ``zst`` when the name ends so.
    """

    path: str
    format: str | None = None
    scheme: str | None = None
    compression: str | None = None

    @property
    def home_relative(self) -> bool:
        """``~/...``: only a shell (or DuckDB) expands it."""
        return self.path.startswith("~/")


def file_path(text: str, prefix: str | None = None) -> FilePath | None:
    """``text`` as a file path, or None when it reads as a table name.

    :param prefix: a Spark format prefix (``parquet`` in ``parquet.`/data/x```): then ``text`` is a path anyway.

    >>> file_path("s3://bucket/raw/orders.parquet"), file_path("orders")
    (FilePath(path='s3://bucket/raw/orders.parquet', format='parquet', scheme='s3', compression=None), None)
    >>> file_path("./x.tsv.gz"), file_path("/data/x", prefix="csv").format
    (FilePath(path='./x.tsv.gz', format='tsv', scheme=None, compression='gz'), 'csv')
    """
    prefixed = prefix is not None and prefix.lower() in FILE_FORMAT_PREFIXES
    if not prefixed and not _PATH.search(text):
        return None
    scheme = _SCHEME.match(text)
    name = text.rsplit("/", 1)[-1].lower()
    compression = next((c for c in _COMPRESSIONS if name.endswith("." + c)), None)
    if compression:
        name = name[: -len(compression) - 1]
    fmt = prefix.lower() if prefixed and prefix else _FORMATS.get(name.rsplit(".", 1)[-1]) if "." in name else None
    return FilePath(text, fmt, scheme.group(1).lower() if scheme else None, compression)


def file_reference(node: exp.Table) -> FilePath | None:
    """The files a table reference names: a quoted name that is a path (``FROM 's3://b/x.parquet'``) or that
    follows a Spark format prefix (``FROM parquet.`/data/x```); None for a table."""
    if not isinstance(node.this, exp.Identifier) or not node.this.quoted:
        return None
    return file_path(node.name, node.db or None)


@dataclass(frozen=True)
class TableName:
    """What a table reference resolves to.

    :param store: the store's URI (``ducklake://sales``) when an alias or ``USE`` named one; None: the store
        the script runs against.
    :param catalog: a catalog part that is no attached alias (another database): left unresolved.
    """

    schema: str
    table: str
    store: str | None = None
    catalog: str | None = None

    @property
    def qualified(self) -> str:
        """``schema.table`` (``catalog.schema.table`` when the catalog is not an attached store)."""
        return ".".join(p for p in (self.catalog, self.schema, self.table) if p)


@dataclass(frozen=True)
class UseTarget:
    """What a ``USE`` selects: the store (None: unchanged), the schema, and a catalog part that is no alias."""

    store: str | None
    schema: str
    catalog: str | None = None


@dataclass
class NameScope:
    """What names mean at one point of a script, updated statement by statement.

    :param schema: the schema unqualified names fall into.
    :param target: the URI of the store the script runs against, when known (the planner's lake).
    :param store: the store ``USE`` selected (None: ``target``).
    :param aliases: attached aliases (lower case) and their store URIs.
    :param alias_schemas: attached aliases (lower case) and the schema ``alias.table`` falls into, where it is
        not ``main`` (a Data Table's).
    """

    schema: str = STORE_DEFAULT_SCHEMA
    target: str | None = None
    store: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    alias_schemas: dict[str, str] = field(default_factory=dict)
    used_alias: str | None = None

    def is_alias(self, name: str | None) -> bool:
        return bool(name) and str(name).lower() in self.aliases

    def attach(self, alias: str, store: StoreRef | str) -> None:
        """``ATTACH ... AS alias``: ``store`` is what the literal names (a :class:`StoreRef`, else its text)."""
        self.aliases[alias.lower()] = store.uri if isinstance(store, StoreRef) else store
        if isinstance(store, StoreRef) and store.default_schema != STORE_DEFAULT_SCHEMA:
            self.alias_schemas[alias.lower()] = store.default_schema
        else:
            self.alias_schemas.pop(alias.lower(), None)

    def detach(self, alias: str) -> None:
        self.alias_schemas.pop(alias.lower(), None)
        store = self.aliases.pop(alias.lower(), None)
        if store is not None and store == self.store:
            self.store = None

    def use(self, parts: Sequence[str]) -> UseTarget:
        """``USE alias``, ``USE alias.schema`` or ``USE schema``; a leading part that is no alias is reported as
        ``catalog`` (the planner refuses it, lineage keeps the schema).

        >>> scope = NameScope(aliases={"dl": "ducklake://main"})
        >>> scope.use(["DL"]), scope.use(["memory", "s"])
        (UseTarget(store='ducklake://main', schema='main', catalog=None), UseTarget(store=None, schema='s', catalog='memory'))
        """
        store = None
        default = STORE_DEFAULT_SCHEMA
        if parts and self.is_alias(parts[0]):
            default = self.alias_schemas.get(parts[0].lower(), STORE_DEFAULT_SCHEMA)
            self.used_alias = parts[0].lower()
            store, parts = self.aliases[parts[0].lower()], parts[1:]
            self.store = store
        self.schema = parts[-1] if parts else default
        return UseTarget(store, self.schema, ".".join(parts[:-1]) or None)

    def table(self, catalog: str | None, db: str | None, name: str) -> TableName:
        """Resolve ``[catalog.][db.]name``.

        ``alias.name`` is the alias's store, in the ``USE``-selected schema when that store is the current one and
        in its default schema otherwise (as DuckDB resolves it).

        >>> scope = NameScope(schema="s", aliases={"a": "ducklake://a", "b": "ducklake://b"}, store="ducklake://a")
        >>> [scope.table(None, db, "t").qualified for db in ("a", "b", "x", None)]
        ['s.t', 'main.t', 'x.t', 's.t']
        >>> scope.table("b", "y", "t"), scope.table("z", "y", "t").qualified
        (TableName(schema='y', table='t', store='ducklake://b', catalog=None), 'z.y.t')
        """
        if catalog:
            if self.is_alias(catalog):
                store = self.aliases[catalog.lower()]
                return TableName(db or self._default_schema_of(catalog), name, store)
            return TableName(db or self.schema, name, self.store, catalog)
        if db and self.is_alias(db):
            store = self.aliases[db.lower()]
            return TableName(self._default_schema_of(db), name, store)
        return TableName(db or self.schema, name, self.store)

    def _default_schema_of(self, alias: str) -> str:
        """Where ``alias.table`` lands: the ``USE``-selected schema when the alias (or, for a lake attached under
        no schema of its own, its store) is the current one; else the alias's default schema."""
        store = self.aliases[alias.lower()]
        current = self.store or self.target
        if alias.lower() == self.used_alias or (store == current and alias.lower() not in self.alias_schemas):
            return self.schema
        return self.alias_schemas.get(alias.lower(), STORE_DEFAULT_SCHEMA)
