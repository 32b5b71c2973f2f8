"""Result column names as Postgres gives them: ``count``, ``?column?``, the column's own name.

DataFusion names an unaliased result column after its expression (``count(*)``,
``Int64(1) + Int64(1)``); Postgres, and the tools written against it, expect the rules of
its ``FigureColname``: a column keeps its name, a function call takes the function's name,
a cast takes its operand's name (else the type's), a dynamic path takes its last key, and
anything else is ``?column?``. Names are computed from the statement before execution and
applied to the answer's schema by position, never twice in one answer.

>>> import sqlglot
>>> output_names(sqlglot.parse_one("SELECT a, count(*), 1 + 1, b::text AS x, c::int FROM t"))
['a', 'count', '?column?', 'x', 'c']
>>> output_names(sqlglot.parse_one("SELECT KYMA_DYN_GET(a, '[\\"http\\", \\"status\\"]')"))
['status']
>>> output_names(sqlglot.parse_one("SELECT * FROM t")) is None
True
"""

from __future__ import annotations

import json

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from kyma.engine.query.rewrite.array_literals import ARRAY_TEXT
from kyma.engine.query.rewrite.dynamic_paths import FUNCTION as DYNAMIC_PATH
from kyma.engine.query.rewrite.evolved import FUNCTION as EVOLVED
from kyma.engine.query.rewrite.time_fields import DATE_PART

UNNAMED = "?column?"

_CAST_NAMES = {
    exp.DataType.Type.BIGINT: "int8",
    exp.DataType.Type.INT: "int4",
    exp.DataType.Type.SMALLINT: "int2",
    exp.DataType.Type.DOUBLE: "float8",
    exp.DataType.Type.FLOAT: "float4",
    exp.DataType.Type.BOOLEAN: "bool",
    exp.DataType.Type.DECIMAL: "numeric",
    exp.DataType.Type.TIMESTAMPTZ: "timestamptz",
}
# kyma's jsonb UDFs -> the name of what they stand for ("": an operator, ``?column?``;
# "text"/"jsonb": a cast, named by its operand, else the type; "jsonb_of": its operand's)
_JSONB_NAMES = {
    "kyma_jsonb_get": "",
    "kyma_jsonb_contains": "",
    "kyma_jsonb_equals": "",
    "kyma_jsonb_exists": "",
    "kyma_jsonb_exists_any": "",
    "kyma_jsonb_exists_all": "",
    "kyma_jsonb_text": "text",
    "kyma_jsonb": "jsonb",
    **{
        f"kyma_{name}": name
        for name in (
            "jsonb_typeof",
            "jsonb_array_length",
            "jsonb_object_keys",
            "jsonb_array_elements",
            "jsonb_array_elements_text",
            "jsonb_each",
            "jsonb_each_text",
        )
    },
}
_NAMED_NODES: dict[type[exp.Expression], str] = {
    exp.Case: "case",
    exp.Exists: "exists",
    exp.Array: "array",
    exp.Boolean: "bool",
    exp.Interval: "interval",
    exp.CurrentVersion: "version",
}


def output_names(stmt: exp.Expression) -> list[str] | None:
    """The name of each result column of ``stmt``; None when a ``*`` makes them unknown."""
    select = stmt
    while isinstance(select, exp.SetOperation):  # a UNION is named by its first branch
        select = select.this
    if isinstance(select, exp.Subquery):
        select = select.unnest()
    if not isinstance(select, exp.Select):
        return None
    projections = select.expressions
    if any(isinstance(p, exp.Star) or isinstance(p.unalias(), exp.Star) for p in projections):
        return None
    if any(isinstance(p, exp.Column) and isinstance(p.this, exp.Star) for p in projections):
        return None
    return [_name(p) for p in projections]


def renamed(table: pa.Table, names: list[str] | None) -> pa.Table:
    """``table`` with ``names`` for its columns (field types and metadata kept). A column
    whose name another one already holds keeps the engine's (unique) name: no answer holds
    two columns of one name, which rows read as mappings would lose."""
    engine = table.column_names
    if names is None or len(names) != len(engine) or names == engine:
        return table
    taken = {e for n, e in zip(names, engine, strict=True) if n == e}  # aliases, columns
    chosen = []
    for name, engine_name in zip(names, engine, strict=True):
        chosen.append(name if name == engine_name or name not in taken else engine_name)
        taken.add(chosen[-1])
    if len(set(chosen)) != len(chosen):
        return table
    fields = [field.with_name(name) for field, name in zip(table.schema, chosen, strict=True)]
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields, table.schema.metadata))


def _name(node: exp.Expression) -> str:
    return _figure(node) or UNNAMED


def _figure(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column | exp.Dot):
        return node.name
    if isinstance(node, exp.Paren | exp.Window | exp.Filter | exp.Bracket):
        return _figure(node.this)
    if isinstance(node, exp.Cast):
        if node.meta.get(ARRAY_TEXT):  # '{…}'::int[] as written, named by its type
            return _cast_name(node.to)
        return _strong(node.this) or _cast_name(node.to)
    if isinstance(node, exp.Subquery):
        names = output_names(node.this)
        return names[0] if names else None
    for kind, name in _NAMED_NODES.items():
        if isinstance(node, kind):
            return name
    if isinstance(node, exp.Unnest) and len(node.expressions) == 1:  # a jsonb set function
        return _figure(node.expressions[0])
    if isinstance(node, exp.Anonymous):
        function = node.name.lower()
        if function == DYNAMIC_PATH:
            return _dynamic_key(node)
        if function in _JSONB_NAMES:  # named as the Postgres spelling it stands for
            named = _JSONB_NAMES[function]
            if named in ("", "text", "jsonb"):
                operand = node.expressions[0] if named and node.expressions else None
                return (_figure(operand) if operand is not None else None) or named or None
            return named
        if function in (EVOLVED, "kyma_jsonb_of") and len(node.expressions) == 1:
            # the column ``evolved`` coalesces; the set function ``kyma_jsonb_of`` marks
            return _figure(node.expressions[0])
        return function
    if isinstance(node, exp.Extract) and node.args.get(DATE_PART):
        return "date_part"
    if isinstance(node, exp.Func):
        return _function_name(node)
    return None


def _strong(node: exp.Expression) -> str | None:
    """The name a cast keeps from its operand: a column's, a function's, an alias's (what
    Postgres's FigureColname rates above a type name); a CASE, a cast, a constant give way
    to the cast's type (``CASE … END::text`` is ``text``)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast | exp.Case | exp.Boolean | exp.Interval):
        return None
    return _figure(node)


def _function_name(node: exp.Func) -> str:
    """The name Postgres calls ``node`` by: the one its SQL is written with (sqlglot's
    ``GroupConcat`` is written ``STRING_AGG(…)``), else sqlglot's name for it."""
    tokens = sqlglot.tokenize(node.sql("postgres"), read="postgres")
    if len(tokens) > 1 and tokens[1].token_type == TokenType.L_PAREN:
        return tokens[0].text.lower()
    return node.sql_name().lower()


def _cast_name(to: exp.DataType) -> str:
    while to.this == exp.DataType.Type.ARRAY and to.expressions:  # int[] names int4
        to = to.expressions[0]
    return _CAST_NAMES.get(to.this, to.sql("postgres").lower())


def _dynamic_key(call: exp.Anonymous) -> str | None:
    """The last key of ``kyma_dyn_get(column, '["a", "b"]')``: what ``a['a']['b']`` names."""
    path = call.expressions[1] if len(call.expressions) == 2 else None
    if not (isinstance(path, exp.Literal) and path.is_string):
        return None
    try:
        keys = json.loads(path.this)
    except ValueError:  # not a path: the function itself says so when it runs
        return None
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        return None  # ``->>`` with an index: Postgres's ``?column?``
    return keys[-1]
