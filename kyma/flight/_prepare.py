"""What CreatePreparedStatement answers beside the handle: the parameter schema, and the
statement the dataset schema is read from (``probe``).

A parameter's type is what the statement says of it, read from the parsed tree: a cast
(``CAST(? AS bigint)``, ``$1::int``), a comparison, ``IN`` or ``BETWEEN`` with a column of a
kyma table the statement names (``n = ?``), the column an INSERT's list gives it, ``LIMIT``/
``OFFSET``; else Arrow's null type (any value). Fields are named ``$1``, ``$2``… in
placeholder order.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import KymaError, SchemaError
from kyma.engine.query import kyma_type
from kyma.engine.query.dialect import Kyma
from kyma.flight._params import bind, placeholders

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)


def numbered(sql: str) -> str:
    """``sql`` with each ``?`` as the ``$n`` it stands for (``$n`` placeholders stay).

    >>> numbered("SELECT ? WHERE x = '?' AND y = ?")
    "SELECT $1 WHERE x = '?' AND y = $2"
    """
    parts, last = [], 0
    for start, end, index in placeholders(sql):
        parts += [sql[last:start], f"${index + 1}"]
        last = end
    return "".join([*parts, sql[last:]])


def probe(sql: str) -> str | None:
    """A query with NULL parameters that reads no rows, whose result's schema is the
    statement's; None for a statement that is not a query (it has no dataset schema)."""
    try:
        stmt = sqlglot.parse_one(numbered(sql), read=Kyma)
    except SqlglotError:
        return None  # the statement's error is told when it runs
    if not isinstance(stmt, exp.Query):
        return None
    count = len({index for _, _, index in placeholders(sql)})
    nulls = pa.table({f"${i + 1}": pa.nulls(1) for i in range(count)})
    return f"SELECT * FROM ({bind(sql, nulls)}\n) AS kyma_probe LIMIT 0"


def parameter_schema(sql: str, table: Callable[[str], TableInfo]) -> pa.Schema:
    """The statement's parameters and the types it implies; ``table`` looks a kyma table up
    (NotFoundError for another)."""
    count = max((index for _, _, index in placeholders(sql)), default=-1) + 1
    types: dict[int, pa.DataType] = {}
    if count:
        try:
            stmt = sqlglot.parse_one(numbered(sql), read=Kyma)
        except SqlglotError:  # the statement's error is told when it runs
            stmt = None
        if stmt is not None:
            columns = _columns(stmt, table)
            for node in stmt.find_all(exp.Parameter):
                number = node.this.name if isinstance(node.this, exp.Literal) else ""
                if number.isdigit() and (kind := _implied(node, columns)) is not None:
                    types.setdefault(int(number) - 1, kind)
    return pa.schema([pa.field(f"${i + 1}", types.get(i, pa.null())) for i in range(count)])


def _columns(stmt: exp.Expr, table: Callable[[str], TableInfo]) -> dict[str, pa.DataType]:
    """Column name → Arrow type over the kyma tables ``stmt`` names (the first one wins)."""
    found: dict[str, pa.DataType] = {}
    for node in stmt.find_all(exp.Table):
        if node.args.get("catalog") or not node.name:
            continue
        try:
            info = table(node.name)
        except KymaError:  # not kyma's, or not the caller's to see
            continue
        for field in info.schema:
            if not (field.metadata or {}):  # dynamic: what a client binds is not its CBOR
                found.setdefault(field.name, field.type)
    return found


def _implied(node: exp.Expression, columns: dict[str, pa.DataType]) -> pa.DataType | None:
    parent = node.parent
    if isinstance(parent, exp.Cast):
        try:
            return kyma_type(parent.to).to_arrow()
        except SchemaError:
            return None
    if isinstance(parent, exp.Limit | exp.Offset):
        return pa.int64()
    other: exp.Expr | None = None
    if isinstance(parent, _COMPARISONS):
        other = parent.left if parent.right is node else parent.right
    elif isinstance(parent, exp.In | exp.Between) and parent.this is not node:
        other = parent.this
    elif isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Values):
        other = _inserted_column(parent, node)
    if isinstance(other, exp.Column):
        return columns.get(other.name)
    return None


def _inserted_column(row: exp.Tuple, node: exp.Expression) -> exp.Column | None:
    """The column ``INSERT INTO t (a, b) VALUES (…, node, …)`` writes ``node`` into."""
    insert = row.parent.parent if row.parent else None
    if not isinstance(insert, exp.Insert) or not isinstance(insert.this, exp.Schema):
        return None
    named = insert.this.expressions
    index = row.expressions.index(node)
    return exp.column(named[index].name) if index < len(named) else None
