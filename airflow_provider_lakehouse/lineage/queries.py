"""Evaluate a query's AST into a :class:`DerivedRelation`: its output columns with their edges.

Scopes follow SQL: a SELECT's FROM and JOIN sources, its CTEs, and the enclosing scopes for correlated
subqueries. Unqualified columns go to the one source that has them (known schemas help); an ambiguous
name is left out rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlglot import exp

from airflow_provider_lakehouse.lineage.pivots import PivotReader
from airflow_provider_lakehouse.lineage.relations import (
    NO_EDGES,
    Context,
    DerivedRelation,
    Edges,
    FunctionRelation,
    Relation,
    Scope,
    TableRelation,
    as_indirect,
    compose,
    output_name,
    unique_name,
)

_HASH_FUNCTIONS = frozenset({"md5", "sha1", "sha256", "sha512", "sha2", "hash", "md5_number", "xxhash64", "crc32"})
_COUNT_CLASSES = (exp.Count, exp.ApproxDistinct)
# Window functions that return one row's value as is (sqlglot types them as aggregates): TRANSFORMATION.
_NAVIGATION = (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue)
_NULL_TREATMENT = (exp.IgnoreNulls, exp.RespectNulls)
_RECURSION_ROUNDS = 8  # a recursive CTE's edges settle in as many rounds as its longest column chain


class QueryEvaluator:
    """Turns queries into relations. ``table_source`` resolves a FROM table (dataset, CTE, temp object).

    :param table_source: ``(table node, scope) -> Relation``; provided by the statement layer, which knows
        attached stores, temporary objects and known schemas.
    """

    def __init__(self, table_source: Callable[[exp.Table, Scope], Relation]) -> None:
        self.table_source = table_source
        self.notes: list[str] = []  # partial-lineage notes of the statement being read
        self.pivots = PivotReader(lambda node, scope, context: self.expression(node, scope, context), self.notes)

    def take_notes(self) -> list[str]:
        """The partial-lineage notes gathered since the last call (one statement's)."""
        notes = list(self.notes)
        self.notes.clear()
        return notes

    # -- queries -----------------------------------------------------------------------------
    def query(self, node: exp.Expr, parent: Scope | None = None) -> DerivedRelation:
        """The relation computed by a SELECT, set operation, VALUES or parenthesised query."""
        if isinstance(node, exp.Subquery):
            inner = self.query(node.this, parent)
            return self._with_modifiers(node, inner, parent)
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, parent)
        if isinstance(node, exp.Values):
            width = len(node.expressions[0].expressions) if node.expressions else 0
            names = _alias_columns(node) or [f"col{i}" for i in range(width)]
            return DerivedRelation(dict.fromkeys(names, NO_EDGES))
        if isinstance(node, exp.Select):
            return self._select(node, parent)
        if isinstance(node, exp.Pivot):
            return self._pivot_statement(node, parent)
        if isinstance(node, exp.Table):  # ``TABLE t`` or a bare table as a query (COPY t TO ...)
            source = self.table_source(node, parent or Scope())
            return DerivedRelation(dict(source.output()), source.rows, (source,) if source.is_open else ())
        return DerivedRelation()

    def add_ctes(self, node: exp.Expr, scope: Scope) -> None:
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is None:
            return
        for cte in with_.expressions:
            name = cte.alias_or_name.lower()
            if with_.args.get("recursive") and _references(cte.this, name):
                scope.ctes[name] = self._recursive_cte(cte, name, scope)
            else:
                scope.ctes[name] = self._cte_relation(cte, scope)

    def _cte_relation(self, cte: exp.CTE, scope: Scope) -> DerivedRelation:
        relation = self.query(cte.this, scope)
        names = _alias_columns(cte)
        return _renamed(relation, names) if names else relation

    def _recursive_cte(self, cte: exp.CTE, name: str, scope: Scope) -> DerivedRelation:
        """``WITH RECURSIVE name AS (anchor UNION [ALL] recursive member)``: the member's reference to
        ``name`` means the rows produced so far. Start from the anchor, then re-evaluate the whole body
        with ``name`` bound to the previous result until its edges stop growing (they only grow, and
        there are finitely many)."""
        body = cte.this
        anchor = body.this if isinstance(body, exp.SetOperation) else body
        names = _alias_columns(cte)
        relation = self.query(anchor, scope)
        relation = _renamed(relation, names) if names else relation
        for _ in range(_RECURSION_ROUNDS):
            scope.ctes[name] = relation
            result = self._cte_relation(cte, scope)
            if result.columns == relation.columns and result.row_edges == relation.row_edges:
                break
            relation = result
        return relation

    def _pivot_statement(self, node: exp.Pivot, parent: Scope | None) -> DerivedRelation:
        """DuckDB's ``PIVOT t ON ...`` / ``UNPIVOT t ON ...`` statement (also as ``FROM (PIVOT ...)``)."""
        scope = Scope(parent=parent)
        self.add_ctes(node, scope)
        self.add_source(node.this, scope)
        (source,) = scope.sources.values()
        return self.pivots.apply(node, source, scope)

    def _set_operation(self, node: exp.SetOperation, parent: Scope | None) -> DerivedRelation:
        scope = Scope(parent=parent)
        self.add_ctes(node, scope)
        left = self.query(node.left, scope)
        right = self.query(node.right, scope)
        columns: dict[str, Edges] = {}
        right_edges = [edges for _, edges in right.output()]
        for i, (name, edges) in enumerate(left.output()):
            columns[name] = edges | (right_edges[i] if i < len(right_edges) else NO_EDGES)
        relation = DerivedRelation(columns, left.rows | right.rows, left.open_sources + right.open_sources)
        return self._with_modifiers(node, relation, scope)

    def _with_modifiers(self, node: exp.Expr, relation: DerivedRelation, parent: Scope | None) -> DerivedRelation:
        """ORDER BY on a parenthesised query or a set operation sorts by its own output columns."""
        order = node.args.get("order")
        if not order:
            return relation
        scope = Scope(sources={"": relation}, parent=parent)
        edges = set(relation.rows)
        for ordered in order.expressions:
            edges |= self.expression(ordered.this, scope, Context(indirect="SORT"))
        return DerivedRelation(relation.columns, frozenset(edges), relation.open_sources)

    def _select(self, select: exp.Select, parent: Scope | None) -> DerivedRelation:
        scope = Scope(parent=parent)
        self.add_ctes(select, scope)
        rows: set = set()
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is not None:
            self.add_source(from_.this, scope)
        for join in select.args.get("joins") or ():
            self.add_source(join.this, scope)
            rows |= self._join_edges(join, scope)
        for lateral in select.args.get("laterals") or ():  # Spark's LATERAL VIEW explode(...) t AS c
            self.add_source(lateral, scope)
        for source in scope.sources.values():
            rows |= source.rows
        scope.projections = {
            p.alias_or_name.lower(): p.unalias() for p in select.expressions if not isinstance(p, exp.Star)
        }
        scope.projection_list = [p.unalias() for p in select.expressions]

        columns: dict[str, Edges] = {}
        open_sources: list[Relation] = []
        shared = _shared_join_columns(select)
        for projection in select.expressions:
            for name, edges, open_source in self._projection(projection, scope):
                if open_source is not None:
                    open_sources.append(open_source)
                elif isinstance(projection, exp.Star) and name in columns and (shared is None or name in shared):
                    columns[name] = columns[name] | edges  # * shows a USING / NATURAL join column once
                else:
                    columns[unique_name(name, columns)] = edges

        where = select.args.get("where")
        if where is not None:
            rows |= self.predicate(where.this, scope)
        group = select.args.get("group")
        if group is not None:
            rows |= self._group_edges(group, scope, select)
        for key in ("having", "qualify"):
            clause = select.args.get(key)
            if clause is not None:
                rows |= self.expression(clause.this, scope, Context(indirect="FILTER"), aliases=True)
        order = select.args.get("order")
        if order is not None:
            for ordered in order.expressions:
                rows |= self.expression(
                    self._order_ref(ordered.this, scope), scope, Context(indirect="SORT"), aliases=True
                )
        return DerivedRelation(columns, frozenset(rows), tuple(open_sources))

    def _projection(self, projection: exp.Expr, scope: Scope) -> Iterator[tuple[str, Edges, Relation | None]]:
        star = projection if isinstance(projection, exp.Star) else None
        if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            star = projection.this
            sources = [scope.sources.get(projection.table.lower())]
        else:
            sources = list(scope.sources.values())
        if star is None:
            name = output_name(projection)
            yield name, frozenset(self.expression(projection.unalias(), scope, Context())), None
            return
        excluded = {c.name.lower() for c in star.args.get("except_") or star.args.get("except") or ()}
        for source in sources:
            if source is None:
                continue
            for name, edges in source.output():
                if name not in excluded:
                    yield name, edges, None
            if source.is_open:
                yield "*", NO_EDGES, source

    def add_source(self, node: exp.Expr, scope: Scope) -> None:
        alias = node.alias_or_name.lower() if node.alias_or_name else f"__source{len(scope.sources)}"
        if isinstance(node, exp.Table) and node.alias and isinstance(node.this, exp.Identifier):
            alias = node.alias.lower()
        relation: Relation
        names = _alias_columns(node)
        if isinstance(node, exp.Subquery) or (isinstance(node, exp.Lateral) and _is_query(node.this)):
            # LATERAL (SELECT ...) is a derived table like any other; it may also read the sources before
            # it, which the scope chain gives it (its correlated WHERE becomes a JOIN of its rows).
            relation = self.query(node if isinstance(node, exp.Subquery) else node.this, scope)
            if names:
                relation = _renamed(relation, names)
        elif isinstance(node, exp.Table):
            relation = self.table_source(node, scope)
        elif isinstance(node, (exp.Unnest, exp.Lateral)):  # unnest(...), LATERAL f(...), LATERAL VIEW f(...)
            edges = self.expression(node, scope, Context().wrapped())
            relation = FunctionRelation(frozenset(edges))
        else:
            relation = FunctionRelation()
        if names and isinstance(relation, FunctionRelation):  # f(...) AS r(a, b): its columns are known
            relation = DerivedRelation({name: relation.column(name) or NO_EDGES for name in names})
        for pivot in node.args.get("pivots") or ():  # FROM t PIVOT (...) [AS p]: the pivot replaces t
            relation = self.pivots.apply(pivot, relation, Scope(sources={alias: relation}, parent=scope))
            alias = pivot.alias.lower() if pivot.alias else alias
        scope.sources[alias] = relation

    def _join_edges(self, join: exp.Join, scope: Scope) -> set:
        edges: set = set()
        on = join.args.get("on")
        if on is not None:
            edges |= self.expression(on, scope, Context(indirect="JOIN"))
        for ident in join.args.get("using") or ():
            name = ident.name.lower()
            for source in scope.sources.values():
                column = source.column(name) if source.knows(name) or source.is_open else None
                edges |= compose(column or (), Context(indirect="JOIN"))
        return edges

    def _group_edges(self, group: exp.Group, scope: Scope, select: exp.Select) -> set:
        edges: set = set()
        if group.args.get("all"):
            for projection in select.expressions:
                if not projection.find(exp.AggFunc):
                    edges |= self.expression(projection.unalias(), scope, Context(indirect="GROUP_BY"))
            return edges
        for element in group.expressions:
            edges |= self.expression(
                self._output_ref(element, scope), scope, Context(indirect="GROUP_BY"), aliases=True
            )
        for key in ("rollup", "cube", "grouping_sets"):
            for element in group.args.get(key) or ():
                edges |= self.expression(element, scope, Context(indirect="GROUP_BY"), aliases=True)
        return edges

    @staticmethod
    def _output_ref(node: exp.Expr, scope: Scope) -> exp.Expr:
        """``ORDER BY 2`` / ``GROUP BY 1`` name a projection by position."""
        if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
            index = int(node.this) - 1
            if 0 <= index < len(scope.projection_list):
                return scope.projection_list[index]
        return node

    @classmethod
    def _order_ref(cls, node: exp.Expr, scope: Scope) -> exp.Expr:
        """ORDER BY names an output column first (``ORDER BY total`` sorts by the ``total`` projection)."""
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in scope.projections:
            return scope.projections[node.name.lower()]
        return cls._output_ref(node, scope)

    # -- predicates --------------------------------------------------------------------------
    def predicate(self, node: exp.Expr, scope: Scope) -> set:
        """A WHERE clause: equalities between two relations' columns join, the rest filters."""
        edges: set = set()
        for conjunct in node.flatten() if isinstance(node, exp.And) else (node,):
            if isinstance(conjunct, exp.Paren) and isinstance(conjunct.this, exp.And):
                edges |= self.predicate(conjunct.this, scope)
                continue
            if isinstance(conjunct, exp.EQ) and self._joins_two_sources(conjunct, scope):
                edges |= self.expression(conjunct, scope, Context(indirect="JOIN"))
            else:
                edges |= self.expression(conjunct, scope, Context(indirect="FILTER"), aliases=True)
        return edges

    def _joins_two_sources(self, eq: exp.EQ, scope: Scope) -> bool:
        left, right = eq.this, eq.expression
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            return False
        a, b = self._owner(left, scope), self._owner(right, scope)
        return a is not None and b is not None and a is not b

    def _owner(self, column: exp.Column, scope: Scope) -> Relation | None:
        found = self._find_column(column, scope)
        return found[0] if found else None

    # -- expressions -------------------------------------------------------------------------
    def expression(self, node: exp.Expr, scope: Scope, context: Context, *, aliases: bool = False) -> set:
        """The edges of every column under ``node`` at ``context``.

        :param aliases: resolve names that are no source column to the SELECT's own projections (what
            DuckDB allows in WHERE / GROUP BY / HAVING / ORDER BY).
        """
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                return set()
            return self._column(node, scope, context, aliases)
        if isinstance(node, (exp.Subquery, exp.Select, exp.SetOperation)):
            relation = self.query(node, scope)
            output = relation.output()
            edges: set = compose(output[0][1], context) if len(output) == 1 else set()
            if context.indirect:
                for _, column_edges in output[1:]:
                    edges |= compose(column_edges, context)
                return edges | as_indirect(relation.rows, context.indirect)
            return edges | set(relation.rows)
        if isinstance(node, exp.Exists):
            subquery = self.query(node.this, scope)
            return as_indirect(subquery.rows, context.indirect or "FILTER")
        if isinstance(node, (exp.Alias, exp.Paren)):
            return self.expression(node.this, scope, context, aliases=aliases)
        if isinstance(node, exp.Window):
            return self._window(node, scope, context, aliases)
        if isinstance(node, exp.Filter):  # agg(x) FILTER (WHERE c): c only selects the rows agg sees
            return self.expression(node.this, scope, context, aliases=aliases) | self.expression(
                node.expression, scope, context.or_indirect("FILTER"), aliases=aliases
            )
        if isinstance(node, exp.Case):
            return self._case(node, scope, context, aliases)
        if isinstance(node, exp.If):
            condition = self.expression(node.this, scope, context.or_indirect("CONDITIONAL"), aliases=aliases)
            values = set()
            for key in ("true", "false"):
                if node.args.get(key) is not None:
                    values |= self.expression(node.args[key], scope, context.wrapped(), aliases=aliases)
            return condition | values
        inner = context
        if isinstance(node, exp.AggFunc):
            inner = context.wrapped("AGGREGATION", masking=isinstance(node, _COUNT_CLASSES))
        elif _is_hash(node):
            inner = context.wrapped(masking=True)
        elif not isinstance(node, (exp.Identifier, exp.Literal)):
            inner = context.wrapped()
        edges = set()
        for child in node.iter_expressions():
            edges |= self.expression(child, scope, inner, aliases=aliases)
        return edges

    def _window(self, node: exp.Window, scope: Scope, context: Context, aliases: bool) -> set:
        function = node.this
        navigation = function.this if isinstance(function, _NULL_TREATMENT) else function
        if isinstance(navigation, _NAVIGATION):  # lag(v) OVER (...) is v from another row: no aggregate
            edges = set()
            for argument in navigation.iter_expressions():
                edges |= self.expression(argument, scope, context.wrapped(), aliases=aliases)
        else:
            edges = self.expression(function, scope, context.wrapped(), aliases=aliases)
        frame = context.or_indirect("WINDOW")
        for element in node.args.get("partition_by") or ():
            edges |= self.expression(element, scope, frame, aliases=aliases)
        order = node.args.get("order")
        if order is not None:
            for ordered in order.expressions:
                edges |= self.expression(ordered.this, scope, frame, aliases=aliases)
        return edges

    def _case(self, node: exp.Case, scope: Scope, context: Context, aliases: bool) -> set:
        condition = context.or_indirect("CONDITIONAL")
        edges: set = set()
        if node.this is not None:  # CASE operand WHEN value ...: the operand decides
            edges |= self.expression(node.this, scope, condition, aliases=aliases)
        for branch in node.args.get("ifs") or ():
            edges |= self.expression(branch.this, scope, condition, aliases=aliases)
            edges |= self.expression(branch.args["true"], scope, context.wrapped(), aliases=aliases)
        if node.args.get("default") is not None:
            edges |= self.expression(node.args["default"], scope, context.wrapped(), aliases=aliases)
        return edges

    def _column(self, node: exp.Column, scope: Scope, context: Context, aliases: bool) -> set:
        found = self._find_column(node, scope)
        if found is not None:
            return compose(found[1], context)
        name = node.name.lower()
        if aliases and not node.table and name in scope.projections:
            return self.expression(scope.projections[name], scope, context)
        struct = self._struct_column(node, scope)
        if struct is not None:  # a field of a struct column: the column, transformed
            return compose(struct, context.wrapped())
        return set()

    def _struct_column(self, node: exp.Column, scope: Scope) -> Edges | None:
        """Dotted access into a struct column that names no table: ``c.address.city`` (alias ``c``,
        column ``address``) or ``address.city`` (column ``address``). sqlglot reads the dots as
        schema / table qualifiers, which ``_find_column`` has already tried."""
        parts = [p.name.lower() for p in node.parts]
        if len(parts) < 2:
            return None
        if len(parts) >= 3:
            current: Scope | None = scope
            while current is not None:
                source = current.sources.get(parts[0])
                edges = source.column(parts[1]) if source is not None else None
                if edges is not None:
                    return edges
                current = current.parent
        found = self._find_column(exp.column(parts[0]), scope)
        return found[1] if found is not None else None

    def _find_column(self, node: exp.Column, scope: Scope) -> tuple[Relation, Edges] | None:
        """The relation owning ``node`` and the column's edges, searching enclosing scopes outward."""
        name = node.name.lower()
        qualifier = node.table.lower() if node.table else ""
        current: Scope | None = scope
        while current is not None:
            if qualifier:
                source = current.sources.get(qualifier) or _by_table_name(current, node)
                if source is not None:
                    edges = source.column(name)
                    return (source, edges) if edges is not None else None
            else:
                found = _unqualified(current, name)
                if found is not None:
                    return found
            current = current.parent
        return None


def _shared_join_columns(select: exp.Select) -> frozenset[str] | None:
    """The columns a bare ``*`` shows once because joins share them: the ``USING`` columns; ``None`` (every
    repeated name) when a NATURAL join shares all common names."""
    names: set[str] = set()
    for join in select.args.get("joins") or ():
        if (join.args.get("method") or "").upper() == "NATURAL":
            return None
        names.update(ident.name.lower() for ident in join.args.get("using") or ())
    return frozenset(names)


def _is_query(node: exp.Expr | None) -> bool:
    return isinstance(node, (exp.Subquery, exp.Select, exp.SetOperation))


def _references(node: exp.Expr, name: str) -> bool:
    """True if ``node`` reads a relation called ``name`` (unqualified): a recursive CTE's self-reference."""
    return any(not table.db and table.name.lower() == name for table in node.find_all(exp.Table))


def _is_hash(node: exp.Expr) -> bool:
    """md5 / sha* / hash calls (sqlglot has a class per digest flavour): their inputs are masked."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in _HASH_FUNCTIONS
    return isinstance(node, exp.Func) and type(node).__name__.upper().startswith(("MD5", "SHA"))


def _unqualified(scope: Scope, name: str) -> tuple[Relation, Edges] | None:
    knowing = [s for s in scope.sources.values() if s.knows(name)]
    if len(knowing) == 1:
        return knowing[0], knowing[0].column(name) or NO_EDGES
    if knowing:
        return None  # ambiguous: leave it out rather than guess
    open_ = [s for s in scope.sources.values() if s.is_open]
    if len(open_) == 1:
        edges = open_[0].column(name)
        return (open_[0], edges) if edges is not None else None
    return None


def _by_table_name(scope: Scope, column: exp.Column) -> Relation | None:
    """``schema.table.column`` or ``table.column`` where the source has an alias: match the table name."""
    wanted = column.table.lower()
    schema = column.db.lower() if column.db else None
    for source in scope.sources.values():
        if isinstance(source, TableRelation) and source.dataset.kind == "table":
            parts = source.dataset.name.split(".")
            if parts[-1] == wanted and (schema is None or (len(parts) > 1 and parts[-2] == schema)):
                return source
    return None


def _alias_columns(node: exp.Expr) -> list[str]:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        return [c.name.lower() for c in alias.columns]
    return []


def _renamed(relation: DerivedRelation, names: list[str]) -> DerivedRelation:
    edges = [e for _, e in relation.output()]
    columns = {name: edges[i] if i < len(edges) else NO_EDGES for i, name in enumerate(names)}
    return DerivedRelation(columns, relation.rows, ())
