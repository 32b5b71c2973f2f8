"""``pg_catalog.`` before a function or a type taken off: every function and type clients
qualify so (``pg_catalog.format_type``, ``::pg_catalog.text``) is one kyma knows unqualified.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT pg_catalog.format_type(a, -1), x::pg_catalog.text", "postgres")
>>> rule(stmt).sql("postgres")
'SELECT FORMAT_TYPE(a, -1), CAST(x AS TEXT)'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

CATALOG = "pg_catalog"


def rule(stmt: exp.Expression) -> exp.Expression:
    replace_all(
        (dot, dot.expression)
        for dot in list(stmt.find_all(exp.Dot))
        if _catalog(dot.this) and isinstance(dot.expression, exp.Func)
    )
    types = []
    for dtype in stmt.find_all(exp.DataType):
        kind = dtype.args.get("kind")
        user = dtype.this == exp.DataType.Type.USERDEFINED
        if user and isinstance(kind, exp.Dot) and _catalog(kind.this):
            types.append((dtype, exp.DataType.build(kind.expression.name, dialect="postgres")))
    replace_all(types)
    return stmt


def _catalog(node: exp.Expression) -> bool:
    return isinstance(node, exp.Identifier | exp.Column) and node.name.lower() == CATALOG
