"""``sum(x + c)``, ``sum(c + x)`` and ``sum(x - c)`` of an integer column ``x`` and an integer
constant ``c`` as ``sum(x) + c * count(x)``, in Postgres's result type of that sum (bigint, or
numeric when ``x + c`` is an int8). Postgres raises 22003 when any row's ``x + c`` leaves its
type; that is when ``max(x) + c`` (``min(x) + c`` for a negative shift) does, checked once per
group instead of once per row (a checked cast costs DataFusion ~24 ms per 10 M values).
``DISTINCT`` and ``OVER`` sums stay as they are; ``FILTER`` applies to each aggregate. Applied
by ``postgres_semantics`` (it types the statement): ``applies(typed)`` tells such a sum,
``rule(node, typed)`` rewrites it, ``replaced(node)`` is what the rewrite replaces.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT sum(t.x - 2), sum(DISTINCT t.x + 1) FROM t")
>>> typed = annotate_types(stmt, schema={"t": {"x": "INT"}})
>>> [applies(node) for node in typed.find_all(exp.Sum)]
[True, False]
>>> rule(typed.find(exp.Sum), typed.find(exp.Sum)).sql()
'CASE WHEN NOT CAST(CAST(MIN(t.x) AS BIGINT) + CAST(-2 AS BIGINT) AS INT) IS NULL \
THEN SUM(t.x) + CAST(-2 AS BIGINT) * COUNT(t.x) END'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.rewrite import integer_overflow


def _shift(typed: exp.Sum) -> int | None:
    """The constant ``d`` of ``sum(x + d)`` (``sum(x - c)`` is ``d = -c``), else None."""
    term = typed.this
    if not isinstance(term, exp.Add | exp.Sub) or integer_overflow.integer_kind(term) is None:
        return None
    column, constant = term.left, term.right
    if isinstance(term, exp.Add) and integer_overflow.literal_value(column) is not None:
        column, constant = constant, column
    while isinstance(column, exp.Paren):
        column = column.this
    value = integer_overflow.literal_value(constant)
    if not isinstance(column, exp.Column) or integer_overflow.integer_kind(column) is None:
        return None
    if value is None:
        return None
    return -value if isinstance(term, exp.Sub) else value


def applies(typed: exp.Expression) -> bool:
    """A plain or filtered sum (no ``DISTINCT``, no ``OVER``) of an integer column shifted by
    an integer constant."""
    return isinstance(typed, exp.Sum) and _shift(typed) is not None and not _windowed(typed)


def _windowed(node: exp.Expression) -> bool:
    return isinstance(replaced(node).parent, exp.Window)


def replaced(node: exp.Expression) -> exp.Expression:
    """The sum, or the ``FILTER`` clause around it."""
    parent = node.parent
    return parent if isinstance(parent, exp.Filter) and node.arg_key == "this" else node


def rule(node: exp.Sum, typed: exp.Sum) -> exp.Expression:
    """``CASE WHEN <extreme + d, checked> IS NOT NULL THEN sum(x) + d * count(x) END``: NULL
    where ``x`` has no value (as ``sum``), 22003 where the extreme row's value overflows. A
    windowed sum written the same as a rewritten one is kept."""
    if _windowed(node):
        return node.copy()
    shift = _shift(typed)
    kind = integer_overflow.integer_kind(typed.this)
    assert shift is not None and kind is not None
    column = node.find(exp.Column)  # the one column of the term (its rewrite keeps it)
    assert column is not None
    wider = integer_overflow.WIDER[kind]
    filtered = replaced(node)

    def aggregate(call: type[exp.Func], value: exp.Expression) -> exp.Expression:
        if filtered is node:
            return call(this=value)
        return exp.Filter(this=call(this=value), expression=filtered.expression.copy())

    extreme = aggregate(exp.Max if shift >= 0 else exp.Min, column.copy())
    check = integer_overflow.checked(exp.Add, extreme, exp.Literal.number(shift), kind)
    value = column.copy() if kind != "int8" else exp.cast(column.copy(), wider)
    total = exp.Add(
        this=aggregate(exp.Sum, value),
        expression=exp.Mul(
            this=exp.cast(exp.Literal.number(shift), wider),
            expression=aggregate(exp.Count, column.copy()),
        ),
    )
    return exp.case().when(exp.Not(this=exp.Is(this=check, expression=exp.null())), total)
