"""Which catalog relation a table node names, before or after the planner resolved it."""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.relations import relation_of


def catalog_name(table: exp.Expression) -> str | None:
    """``pg_class`` for ``pg_class``, ``pg_catalog.pg_class`` or its session name.

    >>> catalog_name(exp.to_table("pg_catalog.pg_attrdef")), catalog_name(exp.to_table("s.t"))
    ('pg_attrdef', None)
    """
    if not isinstance(table, exp.Table):
        return None
    resolved = relation_of(table)
    if resolved is not None:
        return resolved[1] if resolved[0] == "pg_catalog" else None
    schema = table.text("db").lower()
    return table.name.lower() if schema in ("", "pg_catalog") else None


def from_tables(select: exp.Expression) -> list[exp.Expression]:
    """The FROM item and the joined items of a SELECT, in order."""
    if not isinstance(select, exp.Select):
        return []
    source = select.args.get("from_")
    joins = [join.this for join in select.args.get("joins") or []]
    return ([source.this] if source is not None else []) + joins
