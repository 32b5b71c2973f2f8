"""``ORDER BY <name>`` sorts by the result column of that name, as Postgres resolves it.

Postgres looks a bare name in ``ORDER BY`` up among the result columns' names first, and
only then among the input columns; DataFusion looks only at the input columns (and at
aliases). So where an unaliased result column takes a name from its expression (a cast
keeps its operand's: ``SELECT x::text FROM t ORDER BY x``), Postgres sorts by the result
(the text: ``'10'`` before ``'9'``) and DataFusion by the input column; for a bigint it
even refused the statement ("Projections require unique expression names"). Such an item
is rewritten to the result column's position. A name that two different result columns
share is refused (42702), as Postgres refuses it; one that names an alias or the very
column is left to DataFusion, which resolves it alike.

Applied by the SELECT planner with the Postgres result names (``_output_names``).

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT x::text, y FROM t ORDER BY x DESC, y", read="postgres")
>>> print(rule(stmt, ["x", "y"]).sql("postgres"))
SELECT CAST(x AS TEXT), y FROM t ORDER BY 1 DESC, y
>>> stmt = sqlglot.parse_one("SELECT x::text AS v, x FROM t ORDER BY x", read="postgres")
>>> print(rule(stmt, ["v", "x"]).sql("postgres"))
SELECT CAST(x AS TEXT) AS v, x FROM t ORDER BY x
>>> rule(sqlglot.parse_one("SELECT x::text, x FROM t ORDER BY x"), ["x", "x"])
Traceback (most recent call last):
...
kyma.engine.errors.AmbiguousColumnError: ORDER BY "x" is ambiguous
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import AmbiguousColumnError


def rule(stmt: exp.Expression, names: list[str] | None) -> exp.Expression:
    """``stmt`` with each ``ORDER BY`` name of a result column computed under that name
    turned into the column's position; ``names``: the result columns' Postgres names."""
    order = stmt.args.get("order")
    if names is None or not isinstance(stmt, exp.Select) or order is None:
        return stmt
    for ordered in order.expressions:
        key = ordered.this
        if not isinstance(key, exp.Column) or key.table:
            continue
        found = [i for i, name in enumerate(names) if name == key.name]
        if any(i >= len(stmt.expressions) for i in found) or not found:
            continue
        if len({stmt.expressions[i].unalias() for i in found}) > 1:
            raise AmbiguousColumnError(f'ORDER BY "{key.name}" is ambiguous')
        projection = stmt.expressions[found[0]]
        if isinstance(projection, exp.Alias | exp.Column | exp.Star):
            continue  # DataFusion resolves an alias and the column itself as Postgres does
        ordered.set("this", exp.Literal.number(found[0] + 1))
    return stmt
