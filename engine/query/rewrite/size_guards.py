"""Guards the functions that build as much as their arguments say, before they build it.

``repeat``, ``lpad``, ``rpad`` and ``array_repeat`` allocate their whole result in one call,
outside DataFusion's memory pool. Their size argument is wrapped in ``kyma_size_guard``
(see ``_estimate.register_guard``), which refuses a batch of rows whose results would pass
the memory limit before the function runs.

``range`` and ``generate_series`` with bounds that are not literals, and concatenations
(``||``, ``concat``) of values that are not, become ``CASE WHEN <guard> THEN <call> END``:
DataFusion evaluates the condition over the whole batch first, so the guard (the series'
lengths, or the operands' summed bytes) refuses the batch before the call builds it. A
chain of concatenations is guarded once, at its top: one guard per level of nesting bounds
the doubling of ``s || s`` repeated over subqueries or a recursive CTE. An operand's size is
``octet_length(CAST(operand AS TEXT))``: any type has a text form (bytes that are not UTF-8
do not, and fail the statement).
Applied last, to the SQL DataFusion runs.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query._estimate import GUARD, SERIES_GUARD

_ELEMENT_BYTES = 16  # an array_repeat element, as estimated: a number or a short string
_SERIES = (exp.GenerateSeries, exp.ExplodingGenerateSeries)


def _guarded(count: exp.Expression, unit: exp.Expression, name: str) -> exp.Expression:
    return exp.Anonymous(this=GUARD, expressions=[count, unit, exp.Literal.string(name)])


def _when(condition: exp.Expression, node: exp.Expression) -> None:
    """Replace ``node`` by ``CASE WHEN condition THEN node END``."""
    case = exp.Case(ifs=[exp.If(this=condition, true=node.copy())])
    node.replace(case)


def rule(expression: exp.Expression) -> exp.Expression:
    """Guard each size argument, series and concatenation.

    >>> import sqlglot
    >>> rule(sqlglot.parse_one("SELECT lpad(s, n) FROM t", read="postgres")).sql("postgres")
    "SELECT LPAD(s, KYMA_SIZE_GUARD(n, 4, 'lpad')) FROM t"
    >>> rule(sqlglot.parse_one("SELECT range(1, n) FROM t", read="postgres")).sql("postgres")
    "SELECT CASE WHEN KYMA_SERIES_GUARD(1, n, 1, 'range') THEN RANGE(1, n) END FROM t"
    """
    kinds = (exp.Repeat, exp.Pad, exp.Anonymous, *_SERIES, exp.DPipe, exp.Concat)
    for node in list(expression.find_all(*kinds)):
        if isinstance(node, exp.Repeat):
            unit = exp.func("octet_length", node.this.copy())
            node.set("times", _guarded(node.args["times"], unit, "repeat"))
        elif isinstance(node, exp.Pad):
            name = "lpad" if node.args.get("is_left") else "rpad"
            node.set("expression", _guarded(node.expression, exp.Literal.number(4), name))
        elif isinstance(node, exp.DPipe | exp.Concat):
            _guard_concatenation(node)
        elif isinstance(node, _SERIES) or str(node.name).lower() == "range":
            _guard_series(node)
        elif str(node.name).lower() == "array_repeat" and len(node.expressions) == 2:
            element, count = node.expressions
            unit = exp.Literal.number(_ELEMENT_BYTES)
            node.set("expressions", [element, _guarded(count, unit, "array_repeat")])
    return expression


def _literal(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal | exp.Null) or (
        isinstance(node, exp.Neg | exp.Paren) and _literal(node.this)
    )


def _guard_series(node: exp.Expression) -> None:
    """``range``/``generate_series`` over numbers, in an expression (a table function's
    arguments are literals, estimated before planning)."""
    if isinstance(node.parent, exp.Table):
        return
    if isinstance(node, exp.Anonymous):
        args = list(node.expressions)
        name = "range"
    else:
        args = [node.args.get(k) for k in ("start", "end", "step") if node.args.get(k)]
        name = "generate_series"
    if not 1 <= len(args) <= 3 or all(_literal(a) for a in args):
        return
    if any(
        isinstance(a, exp.Interval)
        or (isinstance(a, exp.Literal) and a.is_string)
        or (isinstance(a, exp.Cast) and not a.to.is_type(*exp.DataType.NUMERIC_TYPES))
        for a in args
    ):
        return  # a series of dates or timestamps
    if len(args) == 1:
        args = [exp.Literal.number(0), *args]
    start, stop = args[0].copy(), args[1].copy()
    step = args[2].copy() if len(args) == 3 else exp.Literal.number(1)
    condition = exp.Anonymous(
        this=SERIES_GUARD, expressions=[start, stop, step, exp.Literal.string(name)]
    )
    _when(condition, node)


def _operands(node: exp.Expression) -> list[exp.Expression]:
    """The values a chain of concatenations joins."""
    if isinstance(node, exp.Paren):
        return _operands(node.this)
    if isinstance(node, exp.DPipe):
        return _operands(node.this) + _operands(node.expression)
    if isinstance(node, exp.Concat):
        return [o for child in node.expressions for o in _operands(child)]
    return [node]


def _guard_concatenation(node: exp.DPipe | exp.Concat) -> None:
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    if isinstance(parent, exp.DPipe | exp.Concat):
        return  # guarded at the top of the chain
    operands = _operands(node)
    if all(_literal(o) for o in operands):
        return  # estimated before planning
    sizes: list[exp.Expression] = []
    for operand in operands:
        if _literal(operand):
            sizes.append(exp.Literal.number(len(operand.name)))
        else:
            size = exp.func("octet_length", exp.cast(operand.copy(), "TEXT"))
            sizes.append(exp.func("coalesce", size, exp.Literal.number(0)))
    total = sizes[0]
    for size in sizes[1:]:
        total = exp.Add(this=total, expression=size)
    counted = _guarded(total, exp.Literal.number(1), "concatenation")
    _when(exp.GTE(this=counted, expression=exp.Literal.number(0)), node)
