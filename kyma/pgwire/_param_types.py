"""The types of ``$n`` parameters a client left unspecified, for ParameterDescription.

Postgres infers them from the statement; strict drivers (asyncpg) then encode each argument
as that type. Inferred here from the parsed statement: a cast (``$1::int``, ``CAST($2 AS
date)``), a comparison with a column of a table the statement reads (``n = $1``, ``$1 < ts``,
``n IN ($1, $2)``, ``ts BETWEEN $1 AND $2``) or ``LIMIT``/``OFFSET``; text otherwise (and for
a statement kyma's dialect cannot read: running it will say why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyarrow as pa
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kyma.engine.errors import KymaError
from kyma.engine.query import parse_statement
from kyma.pgwire import _types as t

_T = exp.DataType.Type
_OIDS = {
    _T.INT: t.INT4,
    _T.SMALLINT: t.INT2,
    _T.BIGINT: t.INT8,
    _T.FLOAT: t.FLOAT4,
    _T.DOUBLE: t.FLOAT8,
    _T.DECIMAL: t.NUMERIC,
    _T.BOOLEAN: t.BOOL,
    _T.TEXT: t.TEXT,
    _T.VARCHAR: t.TEXT,
    _T.DATE: t.DATE,
    _T.TIMESTAMP: t.TIMESTAMPTZ,
    _T.TIMESTAMPTZ: t.TIMESTAMPTZ,
    _T.JSONB: t.JSONB,
    _T.JSON: t.JSONB,
}
_ARRAYS = {_T.INT: 1007, _T.BIGINT: 1016, _T.TEXT: 1009}
_OID_ARRAY = 1028
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def _parsed(sql: str) -> exp.Expression | None:
    try:
        return parse_statement(sql)
    except (SqlglotError, KymaError):
        return None


def referenced_tables(sql: str) -> set[str]:
    """The names of the tables the statement reads (lower case).

    >>> sorted(referenced_tables('SELECT 1 FROM e JOIN "F" f ON true WHERE x = \\'from g\\''))
    ['e', 'f']
    """
    stmt = _parsed(sql)
    return set() if stmt is None else {table.name.lower() for table in stmt.find_all(exp.Table)}


def column_types(schemas: Iterable[pa.Schema]) -> dict[str, int]:
    """Column name (lower case) → type OID over ``schemas``; the first table wins a name."""
    found: dict[str, int] = {}
    for schema in schemas:
        for field in schema:
            found.setdefault(field.name.lower(), t.type_oid(field))
    return found


def infer(sql: str, declared: list[int], columns: Mapping[str, int]) -> list[int]:
    """Each parameter's OID: the declared one, else inferred, else text.

    >>> infer("SELECT * FROM e WHERE n = $1 AND $2 < ts LIMIT $3", [0, 0, 0],
    ...       {"n": 20, "ts": 1184})
    [20, 1184, 20]
    >>> infer("SELECT $1::int, CAST($2 AS double precision), e.x IN ($3, $4)", [0, 25, 0, 0],
    ...       {"x": 701})
    [23, 25, 701, 701]
    """
    stmt = _parsed(sql) if 0 in declared else None
    found: dict[int, int] = {}

    def note(node: exp.Expression, oid: int | None) -> None:
        number = _number(node)
        if number is not None and oid is not None:
            found.setdefault(number, oid)

    for node in stmt.walk() if stmt is not None else ():
        if isinstance(node, exp.Cast):
            note(node.this, _type_oid(node.to))
        elif isinstance(node, _COMPARISONS):
            note(node.expression, _column(node.this, columns))
            note(node.this, _column(node.expression, columns))
        elif isinstance(node, exp.In):
            for value in node.expressions:
                note(value, _column(node.this, columns))
        elif isinstance(node, exp.Between):
            for value in (node.args.get("low"), node.args.get("high")):
                if value is not None:
                    note(value, _column(node.this, columns))
        elif isinstance(node, exp.Limit | exp.Offset):
            note(node.expression, t.INT8)
    return [oid or found.get(i, t.TEXT) for i, oid in enumerate(declared, start=1)]


def _number(node: exp.Expression) -> int | None:
    """n of ``$n``, else None."""
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal):
        return int(node.this.name) if node.this.name.isdigit() else None
    return None


def _type_oid(to: exp.Expression) -> int | None:
    if not isinstance(to, exp.DataType):
        return None
    if to.this == _T.ARRAY and to.expressions:
        element = to.expressions[0]
        if not isinstance(element, exp.DataType):
            return None
        if element.this == _T.USERDEFINED and str(element.args.get("kind")).lower() == "oid":
            return _OID_ARRAY
        return _ARRAYS.get(element.this)
    return _OIDS.get(to.this)


def _column(node: exp.Expression, columns: Mapping[str, int]) -> int | None:
    return columns.get(node.name.lower()) if isinstance(node, exp.Column) else None
