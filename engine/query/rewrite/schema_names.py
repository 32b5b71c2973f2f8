"""``public.logs`` and ``kyma.public.logs``: kyma's tables by their Postgres names.

kyma's tables live in schema ``public`` of database ``kyma`` (what ``information_schema``
and ``\\dt`` show), so a table named with that schema, or that database and schema, is the
kyma table of that name: the rule drops the qualifiers (from columns that repeat them too).
A three-part name in another database is a connector's table and stays federation's; the
catalogs' own schemas (``pg_catalog``, ``information_schema``) are left alone. Any other
schema does not exist: ``nosuch.t`` is Postgres' 42P01 ``relation "nosuch.t" does not exist``.

>>> import sqlglot
>>> sql = "SELECT public.logs.msg FROM kyma.public.logs JOIN pg.public.users u ON true"
>>> rule(sqlglot.parse_one(sql, read="postgres")).sql("postgres")
'SELECT logs.msg FROM logs JOIN pg.public.users AS u ON TRUE'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import NotFoundError

DATABASE, SCHEMA = "kyma", "public"
"""The database and schema kyma's tables are in (``current_database()``, ``current_schema()``)."""
CATALOG_SCHEMAS = frozenset({"pg_catalog", "information_schema"})
QUALIFIED = "kyma_qualified"
"""The mark a table named with its schema keeps (``search_path`` applies to the others)."""


def _name(node: exp.Expression | None) -> str | None:
    if not isinstance(node, exp.Identifier):
        return None
    return node.name if node.quoted else node.name.lower()


def is_local(db: str | None, catalog: str | None) -> bool:
    """Whether a name qualified by ``catalog.db`` (each possibly None) is a kyma table's;
    NotFoundError for a schema of kyma's database that does not exist. False for
    a connector's tables and the catalogs' schemas."""
    if catalog is not None and catalog != DATABASE:
        return False
    if db is None or db == SCHEMA:
        return True
    if db in CATALOG_SCHEMAS:
        return False
    raise NotFoundError(f"schema {db!r} does not exist")


def local_name(table: exp.Table) -> exp.Table:
    """``table`` without its ``kyma.public`` qualifiers when it names a kyma table (in
    place); NotFoundError naming the relation for an unknown schema."""
    db, catalog = _name(table.args.get("db")), _name(table.args.get("catalog"))
    if db is None and catalog is None:
        return table
    try:
        local = is_local(db, catalog)
    except NotFoundError:
        where = ".".join(p for p in (catalog, db, _name(table.this) or table.name) if p)
        raise NotFoundError(f'relation "{where}" does not exist') from None
    if local:
        table.set("db", None)
        table.set("catalog", None)
        table.meta[QUALIFIED] = True
    return table


def searches_public(search_path: str) -> bool:
    """Whether a ``search_path`` setting names schema ``public`` (where unqualified names
    are looked up; ``"$user"`` names no schema of kyma's).

    >>> searches_public('"$user", public'), searches_public("nosuch"), searches_public("")
    (True, False, False)
    """
    names = (part.strip().strip("'") for part in search_path.split(","))
    return any(
        (name[1:-1] if name[:1] == '"' == name[-1:] and len(name) > 1 else name.lower()) == SCHEMA
        for name in names
    )


def rule(expression: exp.Expression) -> exp.Expression:
    for table in list(expression.find_all(exp.Table)):
        if isinstance(table.this, exp.Identifier):
            local_name(table)
    for column in list(expression.find_all(exp.Column)):
        db, catalog = _name(column.args.get("db")), _name(column.args.get("catalog"))
        if db == SCHEMA and catalog in (None, DATABASE):
            column.set("db", None)
            column.set("catalog", None)
    return expression
