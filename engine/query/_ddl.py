"""Table DDL: CREATE TABLE [WITH (...)], ALTER TABLE … ADD COLUMN / SET (...), DROP TABLE,
SHOW TABLES, DESCRIBE."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import Catalog
from kyma.engine.errors import SchemaError, UnsupportedStatementError
from kyma.engine.query._parse import identifier, kyma_type, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column


def create_table(catalog: Catalog, stmt: exp.Create) -> QueryResult:
    if str(stmt.args.get("kind", "")).upper() != "TABLE":
        raise UnsupportedStatementError(f"CREATE {stmt.args.get('kind')} is not supported")
    schema = stmt.this
    if not isinstance(schema, exp.Schema) or stmt.expression is not None:
        raise UnsupportedStatementError(
            "CREATE TABLE needs a column list (AS SELECT is not supported)"
        )
    columns = []
    for coldef in schema.expressions:
        if not isinstance(coldef, exp.ColumnDef) or coldef.args.get("kind") is None:
            raise UnsupportedStatementError(f"unsupported table element {coldef.sql()!r}")
        columns.append(Column(identifier(coldef.this), kyma_type(coldef.args["kind"])))
    name = table_name(schema.this, creating=True)
    properties = stmt.args.get("properties")
    if properties is not None and properties.find(exp.ExternalProperty, exp.LocationProperty):
        raise UnsupportedStatementError(
            "CREATE EXTERNAL TABLE and LOCATION are not supported: kyma stores its tables"
            " itself and reads no host files; load files with CREATE SOURCE"
        )
    options = _options(properties)
    catalog.create_table(
        name, columns, if_not_exists=bool(stmt.args.get("exists")), options=options
    )
    return QueryResult.status_only("CREATE TABLE")


def _options(node: exp.Expression | None) -> dict[str, object]:
    """``WITH (name = 'value', ...)`` (or ``SET (...)``) as a dict; the catalog checks it."""
    options: dict[str, object] = {}
    for prop in node.expressions if node is not None else []:
        if isinstance(prop, exp.Properties):
            options.update(_options(prop))
            continue
        if type(prop) is exp.Property:  # subclasses are other clauses (STORED AS…)
            key, value = prop.this, prop.args.get("value")
        elif isinstance(prop, exp.EQ):
            key, value = prop.this, prop.expression
        else:
            raise UnsupportedStatementError(f"unsupported table option {prop.sql('postgres')!r}")
        if not isinstance(value, exp.Literal):
            raise UnsupportedStatementError(
                f"table option {key.sql('postgres')!r}: expected a literal value"
            )
        options[key.name] = value.this
    return options


def alter_table(catalog: Catalog, stmt: exp.Alter) -> QueryResult:
    name = table_name(stmt.this)
    actions = stmt.args.get("actions") or []
    if actions and all(isinstance(a, exp.AlterSet) for a in actions):
        for action in actions:
            catalog.set_table_options(name, _options(action))
        return QueryResult.status_only("ALTER TABLE")
    if not actions or not all(isinstance(a, exp.ColumnDef) for a in actions):
        raise UnsupportedStatementError(
            "ALTER TABLE supports ADD COLUMN and SET (option = 'value') only (schema only widens)"
        )
    for coldef in actions:
        col = Column(identifier(coldef.this), kyma_type(coldef.args["kind"]))
        catalog.add_column(name, col, if_not_exists=bool(coldef.args.get("exists")))
    return QueryResult.status_only("ALTER TABLE")


def drop_table(catalog: Catalog, stmt: exp.Drop) -> QueryResult:
    if str(stmt.args.get("kind", "")).upper() != "TABLE":
        raise UnsupportedStatementError(f"DROP {stmt.args.get('kind')} is not supported")
    names = [table_name(t) for t in stmt.args.get("tables") or [stmt.this]]
    exists, cascade = bool(stmt.args.get("exists")), bool(stmt.args.get("cascade"))
    catalog.drop_relations(names, "table", if_exists=exists, cascade=cascade)
    return QueryResult.status_only("DROP TABLE")


def show_tables(catalog: Catalog, visible: Callable[[str], bool] | None = None) -> QueryResult:
    """Every table, or those ``visible`` lets through (the ones the caller may read); not
    the tables holding materialized views' rows."""
    hidden = {v.storage for v in catalog.list_views()}
    tables = [
        t
        for t in catalog.list_tables()
        if t.name not in hidden and (visible is None or visible(t.name))
    ]
    table = pa.table(
        {
            "name": pa.array([t.name for t in tables], pa.string()),
            "columns": pa.array([len(t.columns) for t in tables], pa.int64()),
            "snapshot_id": pa.array([t.current_snapshot_id for t in tables], pa.int64()),
        }
    )
    return QueryResult(table, "SHOW TABLES")


def describe(catalog: Catalog, stmt: exp.Describe) -> QueryResult:
    info = catalog.get_table(table_name(stmt.this))
    table = pa.table(
        {
            "name": pa.array([c.name for c in info.columns], pa.string()),
            "type": pa.array([c.type.name for c in info.columns], pa.string()),
            "nullable": pa.array([c.nullable for c in info.columns], pa.bool_()),
            "default_column": pa.array(
                [c.name in DEFAULT_COLUMN_NAMES for c in info.columns], pa.bool_()
            ),
            "evolved_from": pa.array([c.evolved_from for c in info.columns], pa.string()),
        }
    )
    return QueryResult(table, "DESCRIBE")


def is_show_tables(stmt: exp.Expression) -> bool:
    if not isinstance(stmt, exp.Command) or str(stmt.this).upper() != "SHOW":
        return False
    words = stmt.expression.name.split() if stmt.expression is not None else []
    if [w.upper() for w in words] != ["TABLES"]:
        raise SchemaError(f"unknown SHOW {' '.join(words)!r}: expected SHOW TABLES")
    return True
