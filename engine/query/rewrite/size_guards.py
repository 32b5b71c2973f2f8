"""Guards the size argument of functions that build as much as it says.

``repeat``, ``lpad``, ``rpad`` and ``array_repeat`` allocate their whole result in one call,
outside DataFusion's memory pool. Their size argument is wrapped in ``kyma_size_guard``
(see ``_estimate.register_guard``), which refuses a batch of rows whose results would pass
the memory limit before the function runs. Applied last, to the SQL DataFusion runs.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query._estimate import GUARD

_ELEMENT_BYTES = 16  # an array_repeat element, as estimated: a number or a short string


def _guarded(count: exp.Expression, unit: exp.Expression, name: str) -> exp.Expression:
    return exp.Anonymous(this=GUARD, expressions=[count, unit, exp.Literal.string(name)])


def rule(expression: exp.Expression) -> exp.Expression:
    """Wrap each size argument in ``kyma_size_guard(size, bytes per unit, name)``.

    >>> import sqlglot
    >>> rule(sqlglot.parse_one("SELECT lpad(s, n) FROM t", read="postgres")).sql("postgres")
    "SELECT LPAD(s, KYMA_SIZE_GUARD(n, 4, 'lpad')) FROM t"
    """
    for node in list(expression.find_all(exp.Repeat, exp.Pad, exp.Anonymous)):
        if isinstance(node, exp.Repeat):
            unit = exp.func("octet_length", node.this.copy())
            node.set("times", _guarded(node.args["times"], unit, "repeat"))
        elif isinstance(node, exp.Pad):
            name = "lpad" if node.args.get("is_left") else "rpad"
            node.set("expression", _guarded(node.expression, exp.Literal.number(4), name))
        elif str(node.name).lower() == "array_repeat" and len(node.expressions) == 2:
            element, count = node.expressions
            unit = exp.Literal.number(_ELEMENT_BYTES)
            node.set("expressions", [element, _guarded(count, unit, "array_repeat")])
    return expression
