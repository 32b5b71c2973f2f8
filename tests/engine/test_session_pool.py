"""DataFusion sessions handed from one statement to the next (``_contexts``): the next
statement takes the last one's session, emptied of its tables; a kept or failed statement's
session is not handed on; answers do not change."""

from __future__ import annotations

import pyarrow as pa
import pytest
from datafusion import SessionContext

from kyma.engine.query import _contexts


def _table(ctx: SessionContext, name: str) -> None:
    ctx.register_record_batches(name, [[pa.record_batch({"x": [1]})]])


def test_the_next_statement_takes_the_last_ones_session_without_its_tables() -> None:
    pool = _contexts.Contexts()
    made: list[SessionContext] = []

    def make() -> SessionContext:
        made.append(SessionContext())
        return made[-1]

    first = pool.take("k", make)
    _table(first, '"__kyma_scan/t/0"')
    pool.give("k", first)
    assert pool.take("k", make) is first and len(made) == 1
    assert first.catalog().schema().names() == set()
    assert pool.take("k", make) is not first  # one statement at a time per session
    assert pool.take("other settings", make) is made[-1] and len(made) == 3


def test_a_session_that_outlives_or_fails_its_statement_is_not_handed_on() -> None:
    with _contexts.contexts.lease():
        kept = _contexts.session("kept", SessionContext)
        _contexts.keep(kept)
    assert _contexts.session("kept", SessionContext) is not kept  # outside a lease: new
    with pytest.raises(ZeroDivisionError), _contexts.contexts.lease():
        failed = _contexts.session("failed", SessionContext)
        _ = 1 / 0
    with _contexts.contexts.lease():
        assert _contexts.session("failed", SessionContext) is not failed
        again = _contexts.session("kept", SessionContext)
        assert again is not kept
    with _contexts.contexts.lease():
        assert _contexts.session("kept", SessionContext) is again


def test_a_session_holding_more_than_tables_is_dropped() -> None:
    pool = _contexts.Contexts()
    ctx = SessionContext()
    ctx.sql("CREATE SCHEMA extra").collect()
    pool.give("k", ctx)
    assert pool.take("k", SessionContext) is not ctx


def test_statements_in_a_row_answer_alike(services) -> None:  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE a (n long)")
    services.query.execute("CREATE TABLE b (m string)")
    services.query.execute("INSERT INTO a (n) VALUES (1), (2), (3)")
    services.query.execute("INSERT INTO b (m) VALUES ('x')")
    for _ in range(2):
        assert services.query.execute("SELECT sum(n) AS s FROM a").table.to_pylist() == [{"s": 6}]
        assert services.query.execute("SELECT m FROM b").table.column("m").to_pylist() == ["x"]
        got = services.query.execute("SELECT n, m FROM a, b WHERE n > 2").table.to_pylist()
        assert got == [{"n": 3, "m": "x"}]
