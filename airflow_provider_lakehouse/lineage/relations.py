"""Relations a query reads from, and how edges compose when a column passes through an expression.

A relation maps its output columns to lineage edges that end at persistent datasets. Base tables produce
``DIRECT IDENTITY`` edges to themselves; derived relations (CTEs, subqueries, temporary tables, views
created by the script) carry the edges their query computed, plus ``rows``: the indirect edges (joins,
filters, grouping, sorting) that decided which rows they hold. A :class:`Scope` is what names one SELECT
can see. Kept apart from the evaluator so that the statement layer and the PIVOT reader share them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from airflow_provider_lakehouse.lineage.model import (
    DIRECT,
    DIRECT_SUBTYPES,
    INDIRECT,
    Dataset,
    InputColumn,
    Transformation,
)

Edges = frozenset[InputColumn]
NO_EDGES: Edges = frozenset()


class Reads:
    """Records which datasets and columns a statement read, as relations are resolved."""

    def __init__(self) -> None:
        self.columns: dict[Dataset, set[str]] = {}

    def dataset(self, dataset: Dataset) -> None:
        self.columns.setdefault(dataset, set())

    def column(self, dataset: Dataset, column: str) -> None:
        self.columns.setdefault(dataset, set()).add(column)


class Relation:
    """Something with columns a query can read."""

    def column(self, name: str) -> Edges | None:
        """The edges of column ``name``, or ``None`` if this relation has no such column."""
        raise NotImplementedError

    def knows(self, name: str) -> bool:
        """True if the relation certainly has column ``name`` (used to resolve unqualified names)."""
        return False

    @property
    def is_open(self) -> bool:
        """True if the relation may have columns it cannot list (a ``*`` over an unknown table)."""
        return True

    def output(self) -> list[tuple[str, Edges]]:
        """The columns it can list, in order (what ``*`` expands to)."""
        return []

    @property
    def rows(self) -> Edges:
        """Indirect edges deciding every row of the relation."""
        return NO_EDGES


@dataclass(eq=False)
class TableRelation(Relation):
    """A persistent table or file: each column is an identity edge to itself."""

    dataset: Dataset
    known: tuple[str, ...] | None
    reads: Reads

    def __post_init__(self) -> None:
        self.reads.dataset(self.dataset)

    def column(self, name: str) -> Edges | None:
        if self.known is not None and name not in self.known:
            return None
        self.reads.column(self.dataset, name)
        return frozenset({InputColumn(self.dataset, name, Transformation(DIRECT, "IDENTITY"))})

    def knows(self, name: str) -> bool:
        return self.known is not None and name in self.known

    @property
    def is_open(self) -> bool:
        return self.known is None

    def output(self) -> list[tuple[str, Edges]]:
        return [(name, self.column(name) or NO_EDGES) for name in self.known or ()]


@dataclass(eq=False)
class DerivedRelation(Relation):
    """The result of a query: known columns with their edges, plus sources passed through a bare ``*``."""

    columns: dict[str, Edges] = field(default_factory=dict)
    row_edges: Edges = NO_EDGES
    open_sources: tuple[Relation, ...] = ()

    def column(self, name: str) -> Edges | None:
        if name in self.columns:
            return self.columns[name]
        for source in self.open_sources:
            edges = source.column(name)
            if edges is not None:
                return edges
        return None

    def knows(self, name: str) -> bool:
        return name in self.columns or any(s.knows(name) for s in self.open_sources)

    @property
    def is_open(self) -> bool:
        return bool(self.open_sources)

    def output(self) -> list[tuple[str, Edges]]:
        return list(self.columns.items())

    @property
    def rows(self) -> Edges:
        return self.row_edges


@dataclass(eq=False)
class FunctionRelation(Relation):
    """A table function over columns (``json_each(t.payload)``, ``unnest(t.tags)``): every column it
    yields is a transformation of its arguments; ``range(10)`` and friends yield columns with no edges."""

    edges: Edges = NO_EDGES

    def column(self, name: str) -> Edges | None:
        return frozenset(_retype(e, "TRANSFORMATION") for e in self.edges)


@dataclass(eq=False)
class FilesRelation(Relation):
    """Several files read as one relation (``read_parquet([...])``): a column comes from each of them."""

    files: tuple[TableRelation, ...] = ()

    def column(self, name: str) -> Edges | None:
        return frozenset().union(*(f.column(name) or NO_EDGES for f in self.files))


def _retype(edge: InputColumn, subtype: str) -> InputColumn:
    if edge.transformation.type != DIRECT:
        return edge
    strongest = max(edge.transformation.subtype, subtype, key=DIRECT_SUBTYPES.index)
    return InputColumn(edge.dataset, edge.column, Transformation(DIRECT, strongest, edge.transformation.masking))


@dataclass
class Scope:
    """Names visible to one SELECT: its sources (by alias), its CTEs and the enclosing scope."""

    sources: dict[str, Relation] = field(default_factory=dict)
    ctes: dict[str, DerivedRelation] = field(default_factory=dict)
    parent: Scope | None = None
    projections: dict[str, exp.Expression] = field(default_factory=dict)
    projection_list: list[exp.Expression] = field(default_factory=list)

    def cte(self, name: str) -> DerivedRelation | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.ctes:
                return scope.ctes[name]
            scope = scope.parent
        return None


@dataclass(frozen=True)
class Context:
    """Where a column sits inside the expression being evaluated.

    :param subtype: the direct subtype the path so far imposes (IDENTITY until an expression wraps it).
    :param masking: the path went through COUNT or a hash.
    :param indirect: set when the expression only decides rows or values (``FILTER``, ``CONDITIONAL``...).
    """

    subtype: str = "IDENTITY"
    masking: bool = False
    indirect: str | None = None

    def wrapped(self, subtype: str = "TRANSFORMATION", masking: bool = False) -> Context:
        strongest = max(self.subtype, subtype, key=DIRECT_SUBTYPES.index)
        return Context(strongest, self.masking or masking, self.indirect)

    def or_indirect(self, subtype: str) -> Context:
        """An indirect context of ``subtype``, unless already indirect (then its kind wins)."""
        return self if self.indirect else Context(indirect=subtype)


def compose(edges: Iterable[InputColumn], context: Context) -> set[InputColumn]:
    """The edges a column contributes at ``context``.

    Direct edges take the stronger subtype and the masking of the path, or become ``INDIRECT`` of the
    context's kind; a derived column's own indirect edges (a CASE condition inside a CTE) are kept on a
    direct path and dropped on an indirect one (second-order dependencies would flood every column).
    """
    out: set[InputColumn] = set()
    for edge in edges:
        t = edge.transformation
        if t.type == DIRECT:
            if context.indirect:
                out.add(InputColumn(edge.dataset, edge.column, Transformation(INDIRECT, context.indirect)))
            else:
                subtype = max(t.subtype, context.subtype, key=DIRECT_SUBTYPES.index)
                out.add(
                    InputColumn(
                        edge.dataset, edge.column, Transformation(DIRECT, subtype, t.masking or context.masking)
                    )
                )
        elif not context.indirect:
            out.add(edge)
    return out


def as_indirect(edges: Iterable[InputColumn], subtype: str) -> set[InputColumn]:
    """Re-type edges (direct or indirect) as ``INDIRECT subtype``: used for a subquery's row edges when
    the whole subquery only filters (``IN``, ``EXISTS``)."""
    return {InputColumn(e.dataset, e.column, Transformation(INDIRECT, subtype)) for e in edges}


def unique_name(name: str, taken: dict[str, Edges]) -> str:
    """A repeated output name gets DuckDB's suffix (``id``, ``id_1``, ``id_2``): ``SELECT x.id, y.id`` has
    two columns, and a positional INSERT must see both."""
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def output_name(projection: exp.Expr) -> str:
    name = projection.alias_or_name or projection.output_name
    return (name or projection.sql()).lower()
