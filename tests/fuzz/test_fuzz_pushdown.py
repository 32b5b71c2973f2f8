"""Generated federated queries through the PushdownPlanner raise nothing outside kyma's error
hierarchy. The planner does no I/O, so a connector that only describes ``public.items`` (the
table of the pushdown gate, whose query generators this reuses) is enough."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from kyma.connectors.base import Connector, Fetched, SourceColumn, SourceTable
from kyma.connectors.postgres._capabilities import POSTGRES
from kyma.connectors.pushdown import PushdownPlanner
from kyma.engine.errors import KymaError, NotFoundError
from kyma.engine.types import Column, KymaType

sys.path.append(str(Path(__file__).parents[1] / "connectors"))  # the gate's generators
from query_strategies import federated_queries, predicates  # noqa: E402

ITEMS = SourceTable(
    "public",
    "items",
    tuple(
        SourceColumn(Column(name, KymaType(kind)), kind)
        for name, kind in (
            ("id", "int"),
            ("grp", "int"),
            ("qty", "long"),
            ("price", "real"),
            ("score", "real"),
            ("name", "string"),
            ("tag", "string"),
            ("created_at", "timestamp"),
            ("day", "timestamp"),
            ("flag", "bool"),
        )
    ),
)


class DescribingConnector(Connector):
    """Plans like the Postgres connector (same capabilities); never connects."""

    name = "src"
    dialect = "postgres"
    capabilities = POSTGRES

    def __init__(self) -> None:  # no definition, no secret: it only describes a table
        pass

    def table(self, schema: str, name: str) -> SourceTable:
        if (schema, name) != ("public", "items"):
            raise NotFoundError(f"table {schema}.{name} does not exist in src")
        return ITEMS

    def tables(self, *, refresh: bool = False) -> list[SourceTable]:
        return [ITEMS]

    def output_expression(
        self, column: exp.Expression, source: SourceColumn, alias: str
    ) -> exp.Expression:
        return exp.alias_(column, alias)

    def fetch(self, sql: str, columns: Mapping[str, SourceColumn]) -> Fetched:
        raise AssertionError("planning must not fetch")

    def status(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass

    @property
    def redacted_source(self) -> str:
        return "postgres://***@***/fuzz"


PLANNER = PushdownPlanner(lambda name: DescribingConnector())
_REFS = st.sampled_from(["src.public.items", "src.public.items AS i", "live(src.public.items)"])


def _plan(sql: str, pushdown: bool) -> None:
    try:
        stmt = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return  # the parser's errors are the query path's to translate, not the planner's
    if not isinstance(stmt, exp.Query):
        return
    try:
        plan = PLANNER.plan(stmt, {"visits": {"id": "BIGINT"}}, pushdown=pushdown)
        plan.statement.sql(dialect="postgres")
        for scan in plan.scans:
            scan.summary()
    except KymaError:
        pass


@given(st.data(), st.booleans())
def test_generated_federated_queries_plan_or_raise_kyma_errors(data, pushdown: bool) -> None:  # type: ignore[no-untyped-def]
    ref = data.draw(_REFS)
    _plan(data.draw(federated_queries(ref)), pushdown)


@given(predicates(), st.sampled_from(["JOIN visits v ON v.id = i.id", "", ", src.public.nope n"]))
def test_joins_and_unknown_tables_plan_or_raise_kyma_errors(where: str, join: str) -> None:
    _plan(f"SELECT i.name, count(*) FROM src.public.items i {join} WHERE {where} GROUP BY 1", True)
