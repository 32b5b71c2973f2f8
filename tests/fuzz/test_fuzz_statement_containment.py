"""Random statements from a grammar of nested set operations, casts and literals, sent to a
real ``kyma serve``: it keeps answering and never answers 500 (a crash is a dead process,
an unforeseen failure a 500). The grammar leans on what crashed DataFusion: long set-operation
chains, huge digit strings cast to decimals, deep nesting. ~50 examples in CI, 2 000 under
``make soak``."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_helpers import Serve, postmaster_pid, query

SOAK = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "soak"
EXAMPLES = 2_000 if SOAK else 50
ANSWERS = {200, 400, 404, 408, 409, 413}  # 408: a timeout; 413: a limit

_TYPES = st.sampled_from(
    ["int", "bigint", "numeric", "decimal(38, 0)", "decimal(10, 2)", "text", "double precision"]
)
_DIGITS = st.sampled_from([1, 19, 39, 77, 5_000, 150_000])
_REPEATS = st.sampled_from([1, 40, 200_000, 1_000_000, 3_000_000])


def _cast(value: str, to: str, style: int) -> str:
    return f"CAST({value} AS {to})" if style == 0 else f"({value})::{to}"


_LITERALS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    _DIGITS.map(lambda n: "9" * n),
    _DIGITS.map(lambda n: f"'{'1' * n}'"),
    _REPEATS.map(lambda n: f"repeat('7', {n})"),
    st.sampled_from(["NULL", "'abc'", "' 12.5 '", "'-0'", "'1e5'", "s", "length(s)"]),
)


def _values(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, _TYPES, st.integers(0, 1)).map(lambda t: _cast(*t)),
        st.tuples(children, st.sampled_from(["+", "*", "||", "="]), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(children, children).map(lambda p: f"coalesce({p[0]}, {p[1]})"),
    )


_VALUES = st.recursive(_LITERALS, _values, max_leaves=6)
_SELECTS = _VALUES.map(lambda v: f"SELECT {v} AS v FROM t")
_OPERATIONS = st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"])
_CHAINS = st.sampled_from([2, 10, 200, 1_001, 4_000])


def _queries(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, _OPERATIONS, children).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
        st.tuples(_CHAINS, _OPERATIONS).map(
            lambda t: f" {t[1]} ".join(f"SELECT {i} AS v" for i in range(t[0]))
        ),
        children.map(lambda q: f"SELECT v FROM ({q}) AS sub"),
        st.tuples(_TYPES, children).map(lambda t: f"SELECT CAST(v AS {t[0]}) FROM ({t[1]}) x"),
    )


_STATEMENTS = st.recursive(_SELECTS, _queries, max_leaves=4)


@pytest.fixture(scope="module")
def serve() -> Iterator[Serve]:
    home = Path(tempfile.mkdtemp(prefix="kyma-fuzz-", dir="/tmp")) / "home"
    serve = Serve(home, KYMA_QUERY_TIMEOUT_SECONDS="20")
    try:
        serve.sql("CREATE TABLE t (s string)")
        for value in ("12.5", "1" * 900_000, "abc"):
            serve.post("/v1/ingest/t", {"s": value})
        yield serve
    finally:
        if serve.proc.poll() is None:
            serve.stop(signal.SIGKILL)
        pid = postmaster_pid(home)
        if pid:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home.parent, ignore_errors=True)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sql=_STATEMENTS)
def test_the_server_answers_every_statement_without_a_500(serve: Serve, sql: str) -> None:
    try:
        status, _, answer = query(serve, sql, timeout=120)
    except OSError as e:  # the connection died: the server with it?
        raise AssertionError(f"no answer ({e}) to {sql[:300]!r}") from None
    assert serve.proc.poll() is None, f"the server died on {sql[:300]!r}"
    assert status in ANSWERS, (status, answer, sql[:300])
    status, _, answer = query(serve, "SELECT 1 AS one")
    assert (status, answer["rows"]) == (200, [[1]])
