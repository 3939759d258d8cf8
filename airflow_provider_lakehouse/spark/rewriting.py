"""What the DuckDB-to-Spark rewrites share (pure: sqlglot only): a bottom-up tree rewrite, and the markers the
planner writes where an operand's type decides the Spark form (the driver resolves them, see ``.semantics``)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

INT_DIV = "__lh_int_div"
CAST = "__lh_cast"
#: ``__lh_typed('kind', operands..., id)``: a DuckDB function whose Spark form depends on its operands' types
#: (``duckdb_functions.typed_call`` writes them, ``duckdb_functions.resolve_typed`` resolves them)
TYPED = "__lh_typed"
#: ``__lh_arith('+'|'-'|'*', a, b, id)``: the script's own arithmetic, cast to DuckDB's type where it is a decimal
#: (``.semantics.arithmetic_markers`` writes them; the driver turns them back into operators first)
ARITHMETIC = "__lh_arith"
#: ``__lh_operands(expression, id)``: a comparison, ``CASE``, ``COALESCE`` ... whose operands DuckDB may type
#: together as FLOAT where Spark widens them to DOUBLE (``.float_operands`` writes and resolves them)
OPERANDS = "__lh_operands"
MARKERS = (INT_DIV, CAST, TYPED, ARITHMETIC, OPERANDS)
#: Marker ids are unique in the process: a statement's Spark SQL may be assembled from several rewritten pieces.
marker_ids = itertools.count(1)
#: sqlglot's timestamp types (Spark's TIMESTAMP is sqlglot's TIMESTAMPTZ, its TIMESTAMP_NTZ TIMESTAMPNTZ)
TIMESTAMP_TYPES = (
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIMESTAMPLTZ,
    exp.DataType.Type.TIMESTAMPNTZ,
    exp.DataType.Type.DATETIME,
)


def bottom_up(tree: exp.Expr, rewrite: Callable[[Any], exp.Expr]) -> exp.Expr:
    """Apply ``rewrite`` to every node of ``tree``, in place, each node after its descendants, so that a rewrite
    sees rewritten operands and nested calls are all rewritten (sqlglot's ``transform`` does not descend into a
    node it has replaced: ``log(log(x))`` would keep its inner ``log``)."""
    root = tree
    for node in reversed(list(tree.walk())):
        replacement = rewrite(node)
        if replacement is node:
            continue
        if node is root:
            root = replacement
        else:
            node.replace(replacement)
    return root


def replaced_markers(
    tree: exp.Expr, marker: str, replacement: Callable[[exp.Anonymous], exp.Expr]
) -> tuple[exp.Expr, bool]:
    """``tree`` with each call of ``marker`` replaced by ``replacement(call)``; and whether there were any."""
    found = False

    def replace(node: exp.Expr) -> exp.Expr:
        nonlocal found
        if not (isinstance(node, exp.Anonymous) and node.name.lower() == marker):
            return node
        found = True
        return replacement(node)

    return bottom_up(tree, replace), found


def spark_text(tree: exp.Expr, *, duckdb_operators: bool = False) -> str:
    """``tree`` as Spark SQL text: sqlglot's Spark generator, except where it writes something Spark computes
    differently. It writes ``percentile_cont(q)``/``percentile_disc(q) WITHIN GROUP (ORDER BY x)`` as
    ``percentile_approx(x, q)``, an estimate that also drops ``DESC``; Spark reads the original exactly.

    :param duckdb_operators: ``tree`` is DuckDB SQL, whose operators bind in DuckDB's order: parentheses keep
        that order where Spark's differs (see :data:`_SPARK_BINDING`). sqlglot parses Spark SQL in the same
        order, so a Spark script's tree is written without them and Spark reads its text in its own order.

    >>> spark_text(sqlglot.parse_one("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) FROM t", read="spark"))
    'SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY x DESC) FROM t'
    """

    def as_spark_reads_it(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.WithinGroup) and isinstance(node.this, (exp.PercentileCont, exp.PercentileDisc)):
            return exp.Var(this=f"{node.this.sql('spark')} WITHIN GROUP ({node.expression.sql('spark').strip()})")
        if duckdb_operators:
            _parenthesize_for_spark(node)
        return node

    return bottom_up(_named_structs_in_values(tree.copy()), as_spark_reads_it).sql("spark")


def _named_structs_in_values(tree: exp.Expr) -> exp.Expr:
    """Each struct literal inside ``VALUES`` as ``named_struct('k', v)``: Spark's parser takes a row's
    ``STRUCT(v AS k)`` for the row itself (``VALUES (STRUCT(1 AS a))`` is a column of integers, not of structs).

    >>> _named_structs_in_values(sqlglot.parse_one("SELECT * FROM VALUES (STRUCT(1 AS a))", read="spark")).sql("spark")
    "SELECT * FROM VALUES (NAMED_STRUCT('a', 1))"
    """
    for values in list(tree.find_all(exp.Values)):
        for struct in reversed(list(values.find_all(exp.Struct))):  # the innermost first
            fields = struct.expressions
            if fields and all(isinstance(f, (exp.PropertyEQ, exp.Alias)) for f in fields):
                pairs = [part for f in fields for part in (exp.Literal.string(_field_name(f)), _field_value(f))]
                struct.replace(exp.Anonymous(this="named_struct", expressions=pairs))
    return tree


def _field_name(field: exp.Expr) -> str:
    return field.alias if isinstance(field, exp.Alias) else field.this.name


def _field_value(field: exp.Expr) -> exp.Expr:
    return field.this if isinstance(field, exp.Alias) else field.expression


#: How tightly Spark binds each binary operator (higher binds tighter; its grammar's order). sqlglot writes a tree
#: without the parentheses its source did not need, and DuckDB's order differs: it binds ``||``, ``&``, ``|`` and
#: the shifts alike, left to right and below ``+`` (PostgreSQL's generic operators), where Spark binds ``||`` with
#: ``+`` and ``&`` before ``^`` before ``|``. DuckDB's ``1 | 2 & 0`` is ``(1 | 2) & 0``, 0; unparenthesized
#: Spark reads ``1 | (2 & 0)``, 1.
_SPARK_BINDING: dict[type[exp.Expr], int] = {
    exp.Mul: 7,
    exp.Div: 7,
    exp.Mod: 7,
    exp.IntDiv: 7,
    exp.Add: 6,
    exp.Sub: 6,
    exp.DPipe: 6,
    exp.BitwiseAnd: 5,
    exp.BitwiseXor: 4,
    exp.BitwiseOr: 3,
}


def _binding(node: exp.Expr) -> int | None:
    return _SPARK_BINDING.get(type(node))


def _parenthesize_for_spark(node: exp.Expr) -> None:
    """Put, in place, parentheses around an operand of a binary operator that Spark would otherwise bind to its
    neighbour (see :data:`_SPARK_BINDING`): a looser operator on either side, an equally tight one on the right.

    >>> tree = sqlglot.parse_one("SELECT 1 | 2 & 0, 'a' || 1 + 2, xor(a, 3) & 0, a - (b - c)", read="duckdb")
    >>> spark_text(tree, duckdb_operators=True)
    "SELECT (1 | 2) & 0, 'a' || (1 + 2), (a ^ 3) & 0, a - (b - c)"
    """
    outer = _binding(node)
    if outer is None:
        return
    for key, right in (("this", False), ("expression", True)):
        operand = node.args.get(key)
        inner = _binding(operand) if isinstance(operand, exp.Expr) else None
        if inner is not None and (inner < outer or (right and inner == outer)):
            node.set(key, exp.Paren(this=operand))


def typed_copy(
    tree: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]], metadata: dict[Any, Any]
) -> exp.Expr | None:
    """A qualified copy of ``tree`` with its expressions typed (the statement itself is not qualified, which
    would rename its output columns), or None where sqlglot cannot qualify it."""
    try:
        typed = qualify(
            tree.copy(),
            schema=dict(schemas),
            dialect="spark",
            validate_qualify_columns=False,
            identify=False,
            quote_identifiers=False,
        )
        return annotate_types(typed, schema=dict(schemas), dialect="spark", expression_metadata=metadata)
    except Exception:  # sqlglot's own limits, not the statement's: the caller keeps Spark's forms
        return None


def column_spellings(
    query: exp.Expr, schemas: Mapping[str, Mapping[str, str | exp.DataType]], qualifier: str | None = None
) -> dict[str, str]:
    """``{lowercase name: name}`` of the columns of the views ``query`` reads (of the one aliased ``qualifier``
    alone, for ``t.*``), or of all views where it reads none of them: qualifying spells names in lowercase, and
    two views may spell one name differently."""
    views = {
        table.name.lower()
        for table in query.find_all(exp.Table)
        if qualifier is None or table.alias_or_name.lower() == qualifier.lower()
    }
    read = [columns for view, columns in schemas.items() if view.lower() in views] or list(schemas.values())
    return {n.lower(): n for columns in reversed(read) for n in columns}


# -- building Spark expressions ------------------------------------------------------------------
@functools.cache
def _template(text: str) -> exp.Expr:
    return sqlglot.parse_one(text, read="spark")


def spark_expression(text: str, **parts: exp.Expr) -> exp.Expr:
    """Spark SQL ``text`` with its bare columns named like ``parts``' keys replaced by those expressions."""

    def fill(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in parts:
            return parts[node.name].copy()
        return node

    return _template(text).copy().transform(fill)


def string_literal(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def raise_error(message: str) -> exp.Expr:
    return exp.Anonymous(this="raise_error", expressions=[string_literal(message)])


def literal_text(node: exp.Expr | None) -> str | None:
    return node.name if isinstance(node, exp.Literal) and node.is_string else None


def int_literal(node: exp.Expr) -> int | None:
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.name)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_int:
        return -int(node.this.name)
    return None


def rows_where(query: exp.Query, names: list[str], condition: exp.Expr) -> exp.Exists:
    """``EXISTS (SELECT 1 FROM (query) AS __q(names...) WHERE condition)``: whether a row of ``query``, its
    columns named ``names``, meets ``condition`` (which may read the outer query's columns)."""
    alias = exp.TableAlias(this=exp.to_identifier("__q"), columns=[exp.to_identifier(n) for n in names])
    return exp.Exists(this=exp.select("1").from_(exp.Subquery(this=query.copy(), alias=alias)).where(condition))


def typed_call(kind: str, *operands: exp.Expr) -> exp.Expr:
    """A marker for ``kind`` over ``operands`` that the driver replaces once the operands' types are known
    (:func:`.typed_functions.resolve_typed`)."""
    return exp.Anonymous(
        this=TYPED,
        expressions=[string_literal(kind), *(o.copy() for o in operands), exp.Literal.number(next(marker_ids))],
    )
