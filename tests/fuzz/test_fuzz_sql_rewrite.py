"""Arbitrary and generated SQL through the parser and kyma's rewrite rules raises nothing but
kyma's SqlError family (NotFoundError for unknown names)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from kyma.engine.errors import NotFoundError, SqlError
from kyma.engine.query._parse import parse
from kyma.engine.query.dialect import Explain
from kyma.engine.query.rewrite import evolved
from kyma.engine.types import Column, KymaType

COLUMNS = [
    Column("attributes", KymaType("dynamic")),
    Column("message", KymaType("string")),
    Column("n", KymaType("long")),
    Column("embedding", KymaType("vector(3)")),
]
_ATOMS = st.sampled_from(
    [
        "attributes['http.method']",
        "attributes['a']['b']",
        "attributes[1]",
        "embedding[2]",
        "message",
        "n::real",
        "n::long",
        "'x'",
        "NULL",
        "42",
        "has_token(message, 'timeout')",
        "cosine_distance(embedding, [0.1, 0.2, 0.3])",
        "count(*)",
        "(SELECT max(n) FROM logs)",
    ]
)
_OPS = st.sampled_from([" = ", " + ", " AND ", " OR ", " < ", " || ", " LIKE ", " -> ", " IN "])


@st.composite
def expressions(draw: st.DrawFn) -> str:
    parts = [draw(_ATOMS)]
    for _ in range(draw(st.integers(0, 4))):
        parts += [draw(_OPS), draw(_ATOMS)]
    text = "".join(parts)
    return f"({text})" if draw(st.booleans()) else text


@st.composite
def queries(draw: st.DrawFn) -> str:
    select = ", ".join(draw(st.lists(expressions(), min_size=1, max_size=3)))
    table = draw(
        st.sampled_from(
            ["logs", "logs@3", '"Logs"', "logs AS l", "logs AS OF SNAPSHOT 3", "pg.public.users"]
        )
    )
    sql = f"SELECT {select} FROM {table}"
    if draw(st.booleans()):
        sql += f" WHERE {draw(expressions())}"
    if draw(st.booleans()):
        sql += " GROUP BY 1 ORDER BY 1 DESC LIMIT 5"
    return draw(st.sampled_from(["", "EXPLAIN ", "WITH c AS (SELECT 1) "])) + sql


def _plan(sql: str) -> None:
    try:
        stmt = parse(sql)
        stmt = stmt.this if isinstance(stmt, Explain) else stmt
        if isinstance(stmt, exp.Query):
            evolved.rule(stmt, [COLUMNS])
            stmt.sql(dialect="postgres", identify=True)
    except (SqlError, NotFoundError):
        pass


@given(st.one_of(queries(), st.text(max_size=200)))
def test_sql_rewrite_raises_only_sql_errors(sql: str) -> None:
    _plan(sql)


@given(queries(), st.integers(0, 200), st.text(max_size=5))
def test_mangled_sql_raises_only_sql_errors(sql: str, at: int, junk: str) -> None:
    at %= len(sql) + 1
    _plan(sql[:at] + junk + sql[at:])
