"""Casts to Postgres' OID alias types (``regclass``, ``regtype`` …), which kyma has not:
a catalog table's name cast to ``regclass`` is its OID (``'pg_class'::regclass`` is 1259;
any other name 0: no kyma object has comments or dependencies to find by it), ``x::regtype``
read as text is ``format_type(x, -1)``, a cast to ``oid`` is one to ``bigint`` (kyma's OID
columns), and any other such cast is taken off.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT 'pg_class'::regclass, t::regtype::text, c.oid::regclass, x::oid FROM c", "postgres")
>>> rule(stmt).sql("postgres")
'SELECT 1259, FORMAT_TYPE(t, -1), c.oid, CAST(x AS BIGINT) FROM c'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_ALIASES = {"regclass", "regtype", "regnamespace", "regproc", "regrole"}
_CATALOG_OIDS = {
    "pg_class": 1259,
    "pg_attribute": 1249,
    "pg_type": 1247,
    "pg_namespace": 2615,
    "pg_constraint": 2606,
    "pg_proc": 1255,
    "pg_index": 2610,
    "pg_trigger": 2620,
    "pg_rewrite": 2618,
}
_TEXT = {exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR}


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs: list[tuple[exp.Expression, exp.Expression]] = []
    for cast in list(stmt.find_all(exp.Cast)):
        inner = cast.this
        alias = alias_type(cast.to)
        if isinstance(cast.to, exp.DataType) and cast.to.this in _TEXT:
            if isinstance(inner, exp.Cast) and alias_type(inner.to) == "regtype":
                arguments = [inner.this, exp.Literal.number(-1)]
                pairs.append((cast, exp.Anonymous(this="format_type", expressions=arguments)))
        elif alias == "regclass" and isinstance(inner, exp.Literal) and inner.is_string:
            name = inner.name.lower().removeprefix("pg_catalog.")
            pairs.append((cast, exp.Literal.number(_CATALOG_OIDS.get(name, 0))))
        elif alias is not None:
            pairs.append((cast, inner))
        elif isinstance(cast.to, exp.ObjectIdentifier) and cast.to.name.lower() == "oid":
            pairs.append((cast, exp.cast(inner, exp.DataType.Type.BIGINT)))
    replace_all(pairs)
    return stmt


def alias_type(to: exp.Expression) -> str | None:
    """The OID alias type a cast is to (``regclass``), or None.

    >>> alias_type(exp.DataType.build("regclass", dialect="postgres"))
    'regclass'
    """
    if isinstance(to, exp.ObjectIdentifier):
        name = to.name
    elif isinstance(to, exp.DataType) and to.this == exp.DataType.Type.USERDEFINED:
        kind = to.args.get("kind")
        name = kind.name if isinstance(kind, exp.Expression) else str(kind or "")
    else:
        return None
    return name.lower() if name.lower() in _ALIASES else None
