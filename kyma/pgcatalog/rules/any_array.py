"""``x = ANY('{r,p}')`` and ``x = ANY(ARRAY['r', 'p'])`` (pgcli binds its relation kinds so)
as ``x IN ('r', 'p')``: the same test, over a list DataFusion plans.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 1 WHERE k = ANY('{r,p}') OR k = ANY(ARRAY['v'])", "postgres")
>>> rule(stmt).sql("postgres")
"SELECT 1 WHERE k IN ('r', 'p') OR k IN ('v')"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for eq in list(stmt.find_all(exp.EQ)):
        any_ = eq.expression
        if not isinstance(any_, exp.Any):
            continue
        values = any_.this.unnest() if isinstance(any_.this, exp.Paren) else any_.this
        if isinstance(values, exp.Literal) and values.is_string:
            items = elements(values.name)
        elif isinstance(values, exp.Array):
            items = list(values.expressions)
        else:
            continue
        pairs.append((eq, exp.In(this=eq.this, expressions=items or [exp.null()])))
    replace_all(pairs)
    return stmt


def elements(text: str) -> list[exp.Expression]:
    """The elements of a one-dimensional array's text, as string literals.

    >>> [e.sql() for e in elements('{r, "p",f}')], elements("{}")
    (["'r'", "'p'", "'f'"], [])
    """
    parts = [p.strip().strip('"') for p in text.strip().strip("{}").split(",")]
    return [exp.Literal.string(p) for p in parts if p]
