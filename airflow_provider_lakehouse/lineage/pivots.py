"""PIVOT and UNPIVOT: the relations they produce.

Both spellings sqlglot parses: the SQL-standard clause on a FROM item (``FROM t PIVOT (sum(x) FOR c IN
(...))``, ``FROM t UNPIVOT (v FOR n IN (a, b))``; DuckDB and Spark) and DuckDB's statements (``PIVOT t ON c
[IN (...)] USING sum(x) [GROUP BY g]``, ``UNPIVOT t ON a, b INTO NAME n VALUE v``).

A pivoted column aggregates the USING / aggregate expression over the rows whose ON / FOR columns hold its
value: the aggregate's inputs are its DIRECT AGGREGATION edges and the pivot columns its INDIRECT FILTER
edges (the reading of ``agg(x) FILTER (WHERE c = value)``). The columns that are neither aggregated nor
pivoted group the result: they pass through as they are, and are GROUP_BY edges of every row. An unpivoted
value column is each listed column as is (IDENTITY); the name column holds column names, no data.

When the pivoted column names depend on the data (DuckDB's ``ON c`` without ``IN``), the known columns are
reported, any other column read from the result gets the pivoted columns' edges, and a note says the
lineage is partial.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

from sqlglot import exp

from airflow_provider_lakehouse.lineage.relations import (
    NO_EDGES,
    Context,
    DerivedRelation,
    Edges,
    Relation,
    Scope,
    compose,
    output_name,
    unique_name,
)

Evaluate = Callable[[exp.Expression, Scope, Context], set]

DATA_DEPENDENT = (
    "partial lineage: the PIVOT's output column names depend on the data (ON without an IN list); "
    "tables, grouping columns and the pivoted columns' sources are reported, the pivoted column names are not"
)
UNKNOWN_UNPIVOT = (
    "partial lineage: the UNPIVOT's columns cannot be listed (COLUMNS(*) over a table whose columns are "
    "unknown, or an expression); tables and the other columns are reported"
)


@dataclass(eq=False)
class _Without(Relation):
    """An open source seen through a pivot: every column but the ones the pivot consumed."""

    source: Relation
    hidden: frozenset[str]

    def column(self, name: str) -> Edges | None:
        return None if name in self.hidden else self.source.column(name)

    def knows(self, name: str) -> bool:
        return name not in self.hidden and self.source.knows(name)


@dataclass(eq=False)
class _AnyPivoted(Relation):
    """The pivoted columns whose names only the data knows: any name read from them has their edges."""

    edges: Edges

    def column(self, name: str) -> Edges | None:
        return self.edges


class PivotReader:
    """Evaluates a PIVOT / UNPIVOT over its source relation.

    :param evaluate: ``(expression, scope, context) -> edges``, the query evaluator's expression reader.
    :param notes: where partial-lineage notes go (the statement layer turns them into errors).
    """

    def __init__(self, evaluate: Evaluate, notes: list[str]) -> None:
        self.evaluate = evaluate
        self.notes = notes

    def apply(self, node: exp.Pivot, source: Relation, scope: Scope) -> DerivedRelation:
        """The relation ``node`` makes of ``source``; ``scope`` sees ``source`` under its name."""
        if node.args.get("unpivot"):
            return self._unpivot(node, source, scope)
        return self._pivot(node, source, scope)

    # -- PIVOT ------------------------------------------------------------------------------
    def _pivot(self, node: exp.Pivot, source: Relation, scope: Scope) -> DerivedRelation:
        fields = node.args.get("fields") or []
        if fields:  # FROM t PIVOT (aggregates FOR column IN (values))
            aggregates = list(node.expressions)
            pivot_columns = [field.this for field in fields]
        else:  # PIVOT t ON column [IN (values)] USING aggregates
            aggregates = list(node.args.get("using") or [])
            pivot_columns = [item.this if isinstance(item, exp.In) else item for item in node.expressions]
        filters: set = set()
        for column in pivot_columns:
            filters |= self.evaluate(column, scope, Context(indirect="FILTER"))
        # No USING: DuckDB counts the rows (COUNT(*), no column edge).
        per_aggregate = [frozenset(self.evaluate(a.unalias(), scope, Context()) | filters) for a in aggregates]
        per_aggregate = per_aggregate or [frozenset(filters)]
        consumed = _column_names([*aggregates, *pivot_columns])
        columns, rows, open_sources = self._grouping(node, source, scope, consumed)
        names = _pivoted_names(node, aggregates)
        if names is None:
            self.notes.append(DATA_DEPENDENT)
            open_sources = (*open_sources, _AnyPivoted(frozenset().union(*per_aggregate)))
        else:
            for k, name in enumerate(names):
                columns[unique_name(name, columns)] = per_aggregate[k % len(per_aggregate)]
        return DerivedRelation(columns, frozenset(source.rows | rows), open_sources)

    def _grouping(
        self, node: exp.Pivot, source: Relation, scope: Scope, consumed: frozenset[str]
    ) -> tuple[dict[str, Edges], set, tuple[Relation, ...]]:
        """The grouping columns (DuckDB's GROUP BY, else every column the pivot does not consume), their
        GROUP_BY edges, and the unknown rest of an open source."""
        group = node.args.get("group")
        rows: set = set()
        columns: dict[str, Edges] = {}
        if group is not None:
            for element in group.expressions:
                columns[output_name(element)] = frozenset(self.evaluate(element, scope, Context()))
                rows |= self.evaluate(element, scope, Context(indirect="GROUP_BY"))
            return columns, rows, ()
        for name, edges in source.output():
            if name not in consumed:
                columns[name] = edges
                rows |= compose(edges, Context(indirect="GROUP_BY"))
        return columns, rows, ((_Without(source, consumed),) if source.is_open else ())

    # -- UNPIVOT ----------------------------------------------------------------------------
    def _unpivot(self, node: exp.Pivot, source: Relation, scope: Scope) -> DerivedRelation:
        fields = node.args.get("fields") or []
        if fields:  # FROM t UNPIVOT (value FOR name IN (columns))
            name_column = fields[0].this.name.lower()
            value_columns = [v.name.lower() for v in _items(node.expressions[0])] if node.expressions else ["value"]
            listed = list(fields[0].expressions)
        else:  # UNPIVOT t ON columns INTO NAME name VALUE value
            into = node.args.get("into")
            name_column = into.this.name.lower() if into is not None else "name"
            value_columns = [v.name.lower() for v in into.expressions] if into is not None else ["value"]
            listed = list(node.expressions)
        groups = self._unpivoted_groups(listed, source)
        values: dict[str, set] = {v: set() for v in value_columns}
        for group in groups:
            for value_column, column in zip(value_columns, group, strict=False):
                values[value_column] |= self.evaluate(column, scope, Context())
        consumed = _column_names([c for group in groups for c in group])
        columns = {name: edges for name, edges in source.output() if name not in consumed}
        columns[name_column] = NO_EDGES
        columns.update({v: frozenset(e) for v, e in values.items()})
        open_sources = (_Without(source, consumed),) if source.is_open else ()
        return DerivedRelation(columns, source.rows, open_sources)

    def _unpivoted_groups(self, listed: list[exp.Expression], source: Relation) -> list[list[exp.Expression]]:
        """The unpivoted columns, one group per output row (``(a1, a2) AS a`` is a group of two);
        ``COLUMNS(* EXCLUDE (...))`` expands over a source whose columns are known."""
        groups: list[list[exp.Expression]] = []
        for item in listed:
            item = item.this if isinstance(item, (exp.Alias, exp.PivotAlias)) else item
            star = item.this if isinstance(item, exp.Columns) else None
            if isinstance(star, exp.Star) and not source.is_open:
                excluded = _column_names(list(star.args.get("except_") or star.args.get("except") or ()))
                groups += [[exp.column(name)] for name, _ in source.output() if name not in excluded]
            elif all(isinstance(c, (exp.Column, exp.Identifier)) for c in _items(item)):
                groups.append([exp.column(c.name) if isinstance(c, exp.Identifier) else c for c in _items(item)])
            else:
                self.notes.append(UNKNOWN_UNPIVOT)
        return groups


def _pivoted_names(node: exp.Pivot, aggregates: list[exp.Expression]) -> list[str] | None:
    """The pivoted columns' names in output order (value-major), or ``None`` when the data decides them.

    The SQL-standard clause: the names sqlglot derived for the dialect. DuckDB's statement: the values of
    every ON column joined by ``_``, suffixed with ``_<alias or aggregate>`` unless there is one unaliased
    aggregate (DuckDB's own naming).
    """
    if node.args.get("fields"):
        columns = node.args.get("columns")
        return [c.name.lower() for c in columns] if columns else None
    values = [item.expressions if isinstance(item, exp.In) else None for item in node.expressions]
    if any(v is None for v in values):
        return None
    combos = ["_".join(parts) for parts in product(*[[_value_name(v) for v in vs or ()] for vs in values])]
    if len(aggregates) <= 1 and not any(isinstance(a, exp.Alias) for a in aggregates):
        return combos
    return [f"{combo}_{_aggregate_name(a)}" for combo in combos for a in aggregates]


def _value_name(value: exp.Expression) -> str:
    if isinstance(value, (exp.Alias, exp.PivotAlias)):
        return value.alias.lower()
    return (value.name if isinstance(value, (exp.Literal, exp.Column, exp.Identifier)) else value.sql()).lower()


def _aggregate_name(aggregate: exp.Expression) -> str:
    return (aggregate.alias if isinstance(aggregate, exp.Alias) else aggregate.sql()).lower()


def _items(node: exp.Expression) -> list[exp.Expression]:
    return list(node.expressions) if isinstance(node, exp.Tuple) else [node]


def _column_names(nodes: list[exp.Expression]) -> frozenset[str]:
    """Every column name referenced in ``nodes`` (identifiers standing for columns included)."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, exp.Identifier):
            names.add(node.name.lower())
        names.update(c.name.lower() for c in node.find_all(exp.Column))
    return frozenset(names)
