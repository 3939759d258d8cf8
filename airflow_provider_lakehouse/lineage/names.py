"""Name resolution for one script: attached stores, ``USE``, the default schema, file paths."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from airflow_provider_lakehouse.lineage.model import Dataset

DEFAULT_SCHEMAS = {"postgres": "public", "duckdb": "main", "spark": "default"}
STORE_DEFAULT_SCHEMA = "main"  # a DuckLake's (and DuckDB's) default schema

_STORE_URI = re.compile(r"^(?P<kind>ducklake|datatable)(?::(?://)?(?P<name>[A-Za-z0-9_]*))?$", re.IGNORECASE)
_FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "text", "avro", "delta"})
_PATH = re.compile(
    r"^([a-z][a-z0-9+.-]*://|/|\./|\.\./|~/)|\.(parquet|csv|tsv|json|ndjson|jsonl|gz|zst)$", re.IGNORECASE
)


def store_of_attach(target: str) -> str:
    """The store an ``ATTACH '<target>'`` names.

    >>> store_of_attach("ducklake"), store_of_attach("ducklake:sales"), store_of_attach("datatable://ops")
    ('ducklake://main', 'ducklake://sales', 'datatable://ops')
    >>> store_of_attach("other.duckdb")
    'other.duckdb'
    """
    match = _STORE_URI.match(target.strip())
    if not match:
        return target
    return f"{match['kind'].lower()}://{(match['name'] or 'main').lower()}"


def looks_like_path(text: str) -> bool:
    """True for ``'s3://b/k.parquet'``, ``'/data/x.csv'``, ``'raw/*.parquet'`` written where a table goes.

    >>> looks_like_path("s3://bucket/raw/orders.parquet"), looks_like_path("orders")
    (True, False)
    """
    return bool(_PATH.search(text))


@dataclass
class Names:
    """What table names mean at this point of the script.

    :param schema: the schema unqualified names fall into.
    :param store: the store ``USE`` selected (``None``: the store the SQL runs against).
    :param aliases: attached aliases and their stores.
    """

    schema: str
    store: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)

    def attach(self, node: exp.Attach) -> None:
        target = node.this
        alias = None
        if isinstance(target, exp.Alias):
            alias = target.alias.lower()
            target = target.this
        literal = target.name if isinstance(target, (exp.Literal, exp.Identifier)) else target.sql()
        if alias:
            self.aliases[alias] = store_of_attach(literal)

    def detach(self, alias: str) -> None:
        store = self.aliases.pop(alias.lower(), None)
        if store is not None and store == self.store:
            self.store = None

    def use(self, node: exp.Expression) -> None:
        parts = [p.lower() for p in _parts(node)]
        if len(parts) == 2 and parts[0] in self.aliases:
            self.store, self.schema = self.aliases[parts[0]], parts[1]
        elif len(parts) == 1 and parts[0] in self.aliases:
            self.store, self.schema = self.aliases[parts[0]], STORE_DEFAULT_SCHEMA
        elif parts:
            self.schema = parts[-1]

    def table(self, node: exp.Table) -> Dataset:
        """The dataset a table reference names (files included)."""
        if (
            isinstance(node.this, exp.Identifier)
            and node.this.quoted
            and (looks_like_path(node.name) or (node.db and node.db.lower() in _FILE_FORMATS))
        ):
            return Dataset("file", node.name)
        parts = [p.lower() for p in (node.catalog, node.db, node.name) if p]
        if len(parts) == 3:
            if parts[0] in self.aliases:
                return Dataset("table", f"{parts[1]}.{parts[2]}", self.aliases[parts[0]])
            return Dataset("table", ".".join(parts))
        if len(parts) == 2:
            if parts[0] in self.aliases:
                return Dataset("table", f"{STORE_DEFAULT_SCHEMA}.{parts[1]}", self.aliases[parts[0]])
            return Dataset("table", ".".join(parts), self.store)
        return Dataset("table", f"{self.schema}.{parts[0]}", self.store)


def _parts(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Table):
        return [p for p in (node.catalog, node.db, node.name) if p]
    if isinstance(node, (exp.Identifier, exp.Var, exp.Column)):
        return [node.name]
    return [node.sql()]
