"""Property: pruning never changes an answer (HTTP end to end, random data and predicates)."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine
from kyma.ingest.write_path import WritePath
from kyma.server import create_app

WORDS = ["alpha", "beta", "gamma", "delta"]
KEYS = ["k", "m"]

rows = st.fixed_dictionaries(
    {
        "_timestamp": st.integers(0, 59).map(lambda m: f"2026-01-01T00:{m:02d}:00Z"),
        "s": st.none() | st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(" ".join),
        "n": st.none() | st.integers(-3, 9),
        "a": st.none() | st.dictionaries(st.sampled_from(KEYS), st.sampled_from(["x", "y"])),
    }
)

leaf = st.one_of(
    st.sampled_from(WORDS + ["alpha beta"]).map(lambda w: f"s = '{w}'"),
    st.integers(-4, 10).map(lambda v: f"n = {v}"),
    st.tuples(st.sampled_from(["<", "<=", ">", ">=", "<>"]), st.integers(-4, 10)).map(
        lambda t: f"n {t[0]} {t[1]}"
    ),
    st.tuples(st.integers(-4, 10), st.integers(-4, 10)).map(
        lambda t: f"n BETWEEN {t[0]} AND {t[1]}"
    ),
    st.lists(st.integers(-4, 10), min_size=1, max_size=3).map(
        lambda vs: f"n IN ({', '.join(map(str, vs))})"
    ),
    st.tuples(st.sampled_from([">=", "<"]), st.integers(0, 60)).map(
        lambda t: f"_timestamp {t[0]} '2026-01-01T00:{min(t[1], 59):02d}:00Z'"
    ),
    st.sampled_from(WORDS + ["zeta"]).map(lambda w: f"has_token(s, '{w}')"),
    st.sampled_from(KEYS + ["q"]).map(lambda k: f"a['{k}'] IS NOT NULL"),
    st.tuples(st.sampled_from(KEYS), st.sampled_from(["x", "z"])).map(
        lambda t: f"a['{t[0]}'] = '{t[1]}'"
    ),
)
conditions = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"({t[0]} AND {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} OR {t[1]})"),
        inner.map(lambda c: f"NOT ({c})"),
    ),
    max_leaves=5,
)


@pytest.fixture
def small_blocks(services):
    """The app with three-row blocks, so block-level pruning has something to do."""
    fmt = segment_format(block_rows=3)
    services.format = fmt
    services.query = QueryEngine(services.catalog, services.store, fmt)
    services.write_path = WritePath(services.catalog, services.stores.ledger, services.store, fmt)
    return create_app(services).test_client()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(rows, min_size=1, max_size=8), min_size=1, max_size=4), conditions)
def test_pruning_never_changes_an_answer(small_blocks, batches, condition) -> None:
    client = small_blocks
    table = f"t_{uuid.uuid4().hex[:8]}"
    client.post("/v1/query", json={"sql": f"CREATE TABLE {table} (s string, n long, a dynamic)"})
    for batch in batches:
        body = "\n".join(json.dumps(r) for r in batch)
        assert client.post(f"/v1/ingest/{table}", data=body).status_code == 200
    query = (
        f"SELECT s, n, a['k'] AS k, _timestamp FROM {table} WHERE {condition} ORDER BY 1, 2, 3, 4"
    )
    pruned = client.post("/v1/query", json={"sql": query}).get_json()
    full = client.post("/v1/query", json={"sql": query, "pruning": False}).get_json()
    assert pruned["rows"] == full["rows"], condition
    assert full["stats"]["blocks_after_stats"] == full["stats"]["blocks_total"]
