"""``evolved(my_field)``: the peer's ``COALESCE(my_field_string, CAST(my_field AS VARCHAR))``
in one call, over every column typed evolution made of the field.

The string variant comes first (it holds every value of a later type), then the field's own
column, then the other evolved columns in the order they were added, each cast to text.
Unlike the other rules it needs the tables' columns, so the planner calls ``rule`` with
them once the tables are resolved.

>>> import sqlglot
>>> from kyma.engine.types import Column, KymaType
>>> cols = [Column("size", KymaType("long"))]
>>> cols.append(Column("size_string", KymaType("string"), evolved_from="size"))
>>> rule(sqlglot.parse_one("SELECT evolved(size) FROM t", read="postgres"), [cols]).sql("postgres")
'SELECT COALESCE(size_string, CAST(size AS TEXT)) AS size FROM t'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlglot import exp

from kyma.engine.errors import NotFoundError, SqlError
from kyma.engine.types import Column

FUNCTION = "evolved"


def rule(expression: exp.Expression, tables: Iterable[Sequence[Column]] = ()) -> exp.Expression:
    tables = list(tables)

    def transform(node: exp.Expression) -> exp.Expression:
        if not (isinstance(node, exp.Anonymous) and str(node.this).lower() == FUNCTION):
            return node
        if len(node.expressions) != 1 or not isinstance(node.expressions[0], exp.Column):
            raise SqlError("evolved() takes one column name, e.g. evolved(size)")
        ref = node.expressions[0]
        variants = _variants(ref.name, tables)
        parts = [_text(ref, column) for column in variants]
        value = parts[0] if len(parts) == 1 else exp.Coalesce(this=parts[0], expressions=parts[1:])
        parent = node.parent
        if isinstance(parent, (exp.Select,)) and node.arg_key == "expressions":
            return exp.alias_(value, ref.name, quoted=not ref.name.islower() or "." in ref.name)
        return value

    return expression.transform(transform, copy=False)


def _variants(name: str, tables: list[Sequence[Column]]) -> list[Column]:
    for columns in tables:
        own = [c for c in columns if c.name == name]
        evolved = [c for c in columns if c.evolved_from == name]
        if own or evolved:
            strings = [c for c in evolved if c.type.name == "string"]
            return [*strings, *own, *(c for c in evolved if c not in strings)]
    raise NotFoundError(f"evolved({name}): no column {name!r} and none evolved from it")


def _text(ref: exp.Column, column: Column) -> exp.Expression:
    node = exp.column(column.name, table=ref.table or None, quoted=True)
    if not ref.args.get("this").quoted and column.name.islower() and "." not in column.name:
        node = exp.column(column.name, table=ref.table or None)
    if column.type.name == "string":
        return node
    return exp.Cast(this=node, to=exp.DataType.build("text"))
