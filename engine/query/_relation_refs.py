"""Which references of a parsed query name a ``Relations`` relation, decided from its
``exp.Table`` nodes alone: ``pg_catalog.pg_class`` by its schema, a bare ``pg_class`` when no
kyma table (and no CTE) has that name. A name in a comment or a string is no node, so it
names nothing. Resolving renames each reference to the relation's session name.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from kyma.engine.query.relations import Relations, relation_of, session_name


def references(stmt: exp.Expression, relations: Relations) -> list[tuple[exp.Table, str | None]]:
    """(node, schema as written or None) of each reference that may name a relation."""
    ctes = {cte.alias_or_name for cte in stmt.find_all(exp.CTE)}
    found: list[tuple[exp.Table, str | None]] = []
    for table in stmt.find_all(exp.Table):
        if table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
            continue
        if relation_of(table) is not None:  # resolved already (a cached statement's copy)
            continue
        schema = table.args.get("db")
        if schema is not None:
            if _folded(schema) in relations.schemas:
                found.append((table, _folded(schema)))
        elif table.name not in ctes and relations.relation(None, _folded(table.this)):
            found.append((table, None))
    return found


def bare_names(refs: list[tuple[exp.Table, str | None]]) -> set[str]:
    """The unqualified names among ``refs``: a relation only if no kyma table has the name."""
    return {_folded(table.this) for table, schema in refs if schema is None}


def resolve(
    refs: list[tuple[exp.Table, str | None]], relations: Relations, is_table: Callable[[str], bool]
) -> set[str]:
    """Rename each reference in ``refs`` that names a relation to its session name (its
    alias kept, or its own name as the alias); the session names of the relations named."""
    named = set()
    for table, written in refs:
        name = _folded(table.this)
        if written is None and is_table(name):
            continue
        schema = relations.relation(written, name)
        if schema is None:
            continue
        session = session_name(schema, name)
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
        table.set("db", None)
        table.set("this", exp.to_identifier(session, quoted=True))
        named.add(session)
    return named


def _folded(node: exp.Expression) -> str:
    return node.name if isinstance(node, exp.Identifier) and node.quoted else node.name.lower()
