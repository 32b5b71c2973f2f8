"""What a source can evaluate exactly as kyma would: data, read by the PushdownPlanner.

An expression is pushed only if every node in it is listed here. Adding a function a source
evaluates with the same semantics is one entry. Anything absent stays residual and runs in
DataFusion, with a reason code in the pushdown_summary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

# The shape of a query, not operations on values: every source accepts these.
STRUCTURE: frozenset[type[exp.Expression]] = frozenset(
    {
        exp.Select, exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order,
        exp.Ordered, exp.Limit, exp.Offset, exp.Alias, exp.TableAlias, exp.Identifier,
        exp.Table, exp.Subquery, exp.Star, exp.Column, exp.Literal, exp.Null, exp.Boolean,
        exp.Paren, exp.Tuple, exp.DataType, exp.Distinct, exp.Union, exp.Intersect, exp.Except,
        exp.Exists,
    }
)  # fmt: skip

# Filters, always pushed (LIKE's escapes mean the same in kyma and the source).
FILTERS: frozenset[type[exp.Expression]] = frozenset(
    {
        exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In, exp.Is, exp.Like,
        exp.Escape, exp.And, exp.Or, exp.Not, exp.Between,
    }
)  # fmt: skip

AGGREGATES: frozenset[type[exp.Expression]] = frozenset(
    {exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max}
)

# kyma's own functions: no source has them.
KYMA_FUNCTIONS = frozenset({"kyma_dyn_get", "has_token", "cosine_distance"})


@dataclass(frozen=True)
class Capabilities:
    """Expression classes a source evaluates with kyma's semantics, plus join support."""

    expressions: frozenset[type[exp.Expression]]
    joins: bool = True

    def blocker(self, node: exp.Expression) -> str | None:
        """Why one node cannot run at the source (a reason code), or None if it can."""
        if type(node) in self.expressions:
            return None
        if isinstance(node, exp.Window):
            return "window_function"
        if isinstance(node, exp.Join) and not self.joins:
            return "join_not_supported"
        if isinstance(node, exp.Func):
            return "kyma_udf" if function_name(node) in KYMA_FUNCTIONS else "function_not_pushable"
        return "expression_not_pushable"


def function_name(node: exp.Func) -> str:
    """``cosine_distance`` for both sqlglot's CosineDistance and an unknown function's call."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def first_blocker(
    node: exp.Expression,
    capabilities: Capabilities,
    enter: Callable[[exp.Query], bool] = lambda _: False,
) -> tuple[exp.Expression, str] | None:
    """The first node of ``node``'s tree the source cannot evaluate, with the reason.

    Nested queries are entered only where ``enter`` says so: the planner judges the others
    on their own.

    >>> from sqlglot import parse_one
    >>> caps = Capabilities(STRUCTURE | FILTERS)
    >>> first_blocker(parse_one("a = 1 AND NOT b IS NULL"), caps) is None
    True
    >>> node, reason = first_blocker(parse_one("cosine_distance(v, w) < 0.5"), caps)
    >>> reason
    'kyma_udf'
    """

    def skipped(n: exp.Expression) -> bool:
        return n is not node and isinstance(n, exp.Query) and not enter(n)

    for child in node.walk(prune=skipped):
        if skipped(child):
            continue
        reason = capabilities.blocker(child)
        if reason is not None:
            return child, reason
    return None
