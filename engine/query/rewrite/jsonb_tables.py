"""jsonb's set-returning functions in FROM: ``FROM t, jsonb_array_elements(t.doc -> 'a') AS e``.

DataFusion cannot run a lateral call, so the FROM item before the call becomes a derived
table that unnests the call's list next to every column of that item, named as the item
was: ``FROM (SELECT t.*, UNNEST(...) AS "__kyma_set" FROM t) AS t``. The call's columns
(``value``; ``key`` and ``value`` for ``jsonb_each``; the function's name for
``jsonb_object_keys``; renamed by an alias as in Postgres) then read that one column. A call
alone in FROM unnests with no other item. ``*`` next to a call over another item, and other
shapes (a call after several items, an outer join), are refused (0A000).

>>> import sqlglot
>>> sql = "SELECT id, e.value FROM t, jsonb_array_elements(t.doc) AS e"
>>> rule(sqlglot.parse_one(sql, read="postgres")).sql("postgres")
'SELECT id, t.__kyma_set AS value FROM (SELECT t.*, KYMA_JSONB_OF(UNNEST(\
KYMA_JSONB_ARRAY_ELEMENTS(t.doc))) AS __kyma_set FROM t) AS t'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query.rewrite.jsonb_functions import jsonb

COLUMN = "__kyma_set"
# function -> its columns (None: named by the alias, else by the function), jsonb values
_SETS: dict[str, tuple[tuple[str, ...] | None, bool]] = {
    "jsonb_array_elements": (("value",), True),
    "jsonb_array_elements_text": (("value",), False),
    "jsonb_object_keys": (None, False),
    "jsonb_each": (("key", "value"), True),
    "jsonb_each_text": (("key", "value"), False),
}


def _call(node: exp.Expression | None) -> exp.Anonymous | None:
    """The set-returning call a FROM item is, if it is one of jsonb's."""
    inner = node.this if isinstance(node, (exp.Table, exp.Lateral)) else None
    if isinstance(inner, exp.Anonymous) and inner.name.lower() in _SETS:
        return inner
    return None


def _names(name: str, item: exp.Expression) -> list[str]:
    alias = item.args.get("alias")
    given = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    columns, _ = _SETS[name]
    default = list(columns) if columns else [alias.name if alias and alias.name else name]
    if len(given) > len(default):
        raise UnsupportedStatementError(f"{name}(...) has {len(default)} columns")
    return given + default[len(given) :]


def _value(name: str, column: exp.Expression, part: int) -> exp.Expression:
    columns, is_jsonb = _SETS[name]
    if columns is not None and len(columns) == 2:
        field = exp.Literal.string(columns[part])
        column = exp.Anonymous(this="get_field", expressions=[column, field])
        wrap = part and is_jsonb  # jsonb_each's values are jsonb again
        return exp.Anonymous(this="kyma_jsonb_of", expressions=[column]) if wrap else column
    return column


def _unnest(call: exp.Anonymous) -> exp.Expression:
    name = call.name.lower()
    udf = exp.Anonymous(this=f"kyma_{name}", expressions=[jsonb(a) for a in call.expressions])
    unnested: exp.Expression = exp.Unnest(expressions=[udf])
    if name == "jsonb_array_elements":
        unnested = exp.Anonymous(this="kyma_jsonb_of", expressions=[unnested])
    return exp.Alias(this=unnested, alias=exp.to_identifier(COLUMN))  # not UNNEST's own alias


def _rewrite(select: exp.Select) -> None:
    joins = select.args.get("joins") or []
    source = select.args.get("from_")
    first = source.this if source is not None else None
    if (call := _call(first)) is not None and not joins:
        item, owner = first, "__kyma_sets"
        inner = exp.select(_unnest(call))
    elif first is not None and joins and (call := _call(joins[0].this)) and _lateral(joins[0]):
        item, owner = joins[0].this, first.alias_or_name
        if not owner or any(_call(j.this) for j in joins[1:]):
            raise UnsupportedStatementError("jsonb set functions in FROM: one, after one table")
        if any(isinstance(p, exp.Star) or p.is_star for p in select.expressions):
            raise UnsupportedStatementError(
                f"SELECT * next to {call.name}(...) in FROM: name the columns to select"
            )
        star = exp.Column(this=exp.Star(), table=exp.to_identifier(owner))
        inner = exp.select(star, _unnest(call)).from_(first.copy())
        select.set("joins", joins[1:])
    else:
        if any(_call(j.this) for j in joins):
            raise UnsupportedStatementError("jsonb set functions in FROM: one, after one table")
        return
    name, names = call.name.lower(), _names(call.name.lower(), item)
    alias = item.alias_or_name if item.alias else ""
    select.set("from_", exp.From(this=inner.subquery(owner)))
    target = exp.column(COLUMN, table=owner)
    for column in list(select.find_all(exp.Column)):
        if column.find_ancestor(exp.Select) is not select:
            continue
        named = column.table == alias if column.table else True
        if named and column.name in names:
            _replace(column, _value(name, target.copy(), names.index(column.name)))
        elif alias and not column.table and column.name == alias and len(names) == 1:
            _replace(column, _value(name, target.copy(), 0))
    if owner == "__kyma_sets":  # ``*`` is the call's columns
        expanded: list[exp.Expression] = []
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or projection.is_star:
                expanded += [
                    exp.alias_(_value(name, target.copy(), i), n) for i, n in enumerate(names)
                ]
            else:
                expanded.append(projection)
        select.set("expressions", expanded)


def _replace(column: exp.Column, value: exp.Expression) -> None:
    """``column`` read from the unnested column; a selected one keeps its output name."""
    if isinstance(column.parent, exp.Select) and column.arg_key == "expressions":
        value = exp.alias_(value, column.name)
    column.replace(value)


def _lateral(join: exp.Join) -> bool:
    """A comma, CROSS or inner join ``ON true``: every row of the call for each row."""
    on = join.args.get("on")
    kind = (join.args.get("side") or "", join.args.get("kind") or "")
    plain = kind in (("", ""), ("", "CROSS"), ("", "INNER"))
    return plain and (on is None or (isinstance(on, exp.Boolean) and on.this is True))


def rule(expression: exp.Expression) -> exp.Expression:
    for select in reversed(list(expression.find_all(exp.Select))):
        _rewrite(select)
    return expression
