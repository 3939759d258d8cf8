"""Table references as lineage datasets, resolved by the shared rules of :mod:`airflow_provider_lakehouse.sql.names`."""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.lineage.model import Dataset
from airflow_provider_lakehouse.sql.names import DEFAULT_SCHEMAS, NameScope, file_reference, parse_attach

__all__ = ["DEFAULT_SCHEMAS", "Names"]


class Names:
    """What table names mean at this point of the script, as :class:`Dataset` values (names in lower case).

    >>> names = Names("main")
    >>> names.attach(exp.Attach(this=exp.alias_(exp.Literal.string("ducklake:sales"), "dl")))
    >>> names.use(exp.to_table("dl.analytics"))
    >>> names.table(exp.to_table("t")), names.table(exp.to_table("'./x.tsv'", dialect="duckdb")).kind
    (Dataset(kind='table', name='analytics.t', store='ducklake://sales'), 'file')
    """

    def __init__(self, schema: str) -> None:
        self.scope = NameScope(schema=schema)

    def attach(self, node: exp.Attach) -> None:
        target = node.this
        if not isinstance(target, exp.Alias):
            return  # an unaliased ATTACH names nothing the script can refer to
        literal = target.this
        text = literal.name if isinstance(literal, (exp.Literal, exp.Identifier)) else literal.sql()
        self.scope.attach(target.alias, parse_attach(text) or text)

    def detach(self, alias: str) -> None:
        self.scope.detach(alias)

    def use(self, node: exp.Expression) -> None:
        self.scope.use([p.lower() for p in _parts(node)])

    def table(self, node: exp.Table) -> Dataset:
        """The dataset a table reference names (files included)."""
        if file_reference(node) is not None:
            return Dataset("file", node.name)
        catalog, db = (p.lower() or None for p in (node.catalog, node.db))
        name = self.scope.table(catalog, db, node.name.lower())
        # a catalog that is no attached alias is another database: its name says all that is known
        return Dataset("table", name.qualified, None if name.catalog else name.store)


def _parts(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Table):
        return [p for p in (node.catalog, node.db, node.name) if p]
    if isinstance(node, (exp.Identifier, exp.Var, exp.Column)):
        return [node.name]
    return [node.sql()]
