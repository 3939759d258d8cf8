"""What the DuckDB-to-Spark rewrites share (pure: sqlglot only): a bottom-up tree rewrite, and the markers the
planner writes where an operand's type decides the Spark form (the driver resolves them, see ``.semantics``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from sqlglot import exp

INT_DIV = "__lh_int_div"
CAST = "__lh_cast"
#: ``__lh_typed('kind', operands..., id)``: a DuckDB function whose Spark form depends on its operands' types
#: (``duckdb_functions.typed_call`` writes them, ``duckdb_functions.resolve_typed`` resolves them)
TYPED = "__lh_typed"
MARKERS = (INT_DIV, CAST, TYPED)
#: Marker ids are unique in the process: a statement's Spark SQL may be assembled from several rewritten pieces.
marker_ids = itertools.count(1)


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
