"""Property: block pruning (stats and token filters) never drops a block that holds a row
matching the predicate."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import cbor2
import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kyma.engine.format import _token_filter
from kyma.engine.format.choice import FORMATS, segment_format
from kyma.engine.format.predicate import (
    And,
    BlockPredicate,
    DynamicPathEquals,
    DynamicPathExists,
    Equals,
    InSet,
    Not,
    Or,
    StringHas,
    TimeRange,
    dynamic_path,
)
from kyma.engine.query.jsonb import text_of as _text
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import TIMESTAMP

SCHEMA = pa.schema([("ts", TIMESTAMP), ("n", pa.int64()), ("s", pa.string()), ("d", pa.binary())])
WORDS = ["alpha", "beta", "Gamma", "x", "de-lta", "a1"]
KEYS = ["k", "m", "a/b"]

strings = st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join)
dyn_values = st.recursive(
    st.integers(-3, 3) | st.sampled_from(["v", "w"]),
    lambda inner: st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=6,
)
rows = st.fixed_dictionaries(
    {
        "ts": st.none() | st.integers(0, 50),
        "n": st.none() | st.integers(-5, 5),
        "s": st.none() | strings,
        "d": st.none() | dyn_values,
    }
)
paths = st.lists(st.sampled_from(KEYS), min_size=1, max_size=2).map(tuple)
# Shredded paths: ``d['k'] = 'v'`` compares text; ``d['k']::long`` ranges read "d/k".
PATH_NAMES = {
    dynamic_path("d", (a, *b)): (a, *b) for a in KEYS for b in [(), *[(k,) for k in KEYS]]
}
texts = st.sampled_from(["v", "w", "1", "-3", "0"])


def leaves() -> st.SearchStrategy[BlockPredicate]:
    return st.one_of(
        st.builds(
            TimeRange,
            st.just("ts"),
            st.none() | st.integers(-5, 55),
            st.none() | st.integers(-5, 55),
        ),
        st.builds(Equals, st.just("n"), st.integers(-6, 6)),
        st.builds(Equals, st.just("s"), strings),
        st.builds(Equals, st.just("ts"), st.integers(0, 50)),
        st.builds(InSet, st.just("n"), st.frozensets(st.integers(-6, 6), max_size=3)),
        st.builds(InSet, st.just("s"), st.frozensets(strings, max_size=3)),
        st.builds(StringHas, st.just("s"), st.sampled_from(["alpha", "gamma", "delta", "a1"])),
        st.builds(DynamicPathExists, st.just("d"), paths),
        st.builds(DynamicPathEquals, st.just("d"), paths, st.integers(-3, 3)),
        st.builds(DynamicPathEquals, st.just("d"), paths, texts),
        st.builds(
            TimeRange,
            st.sampled_from(sorted(PATH_NAMES)),
            st.none() | st.integers(-4, 4),
            st.none() | st.integers(-4, 4),
        ),
    )


predicates = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda c: And(tuple(c))),
        st.lists(inner, min_size=1, max_size=3).map(lambda c: Or(tuple(c))),
        inner.map(Not),
    ),
    max_leaves=6,
)


def _lookup(value: object, path: tuple[str, ...]) -> tuple[bool, object]:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def holds(p: BlockPredicate, row: dict) -> bool | None:
    """SQL three-valued truth of ``p`` on one row, straight from the definition."""
    match p:
        case TimeRange(col, start, end) if col in PATH_NAMES:  # CAST(text AS BIGINT)
            text = None if row["d"] is None else _text(_lookup(row["d"], PATH_NAMES[col])[1])
            if text is None or not re.fullmatch(r"-?[0-9]+", text):
                return None  # NULL, or a cast error: no row is TRUE
            v = int(text)
            return (start is None or v >= start) and (end is None or v < end)
        case TimeRange(col, start, end):
            v = row[col]
            return None if v is None else (start is None or v >= start) and (end is None or v < end)
        case Equals(col, value):
            return None if row[col] is None else row[col] == value
        case InSet(col, values):
            return None if row[col] is None else row[col] in values
        case StringHas(col, token):
            v = row[col]
            return None if v is None else token in re.split(r"[^a-z0-9]+", v.lower())
        case DynamicPathExists(col, path):
            return None if row[col] is None else _lookup(row[col], path)[0]
        case DynamicPathEquals(col, path, value):
            if row[col] is None:
                return None
            found, v = _lookup(row[col], path)
            if isinstance(value, str):  # text semantics, as kyma_dyn_get answers
                return None if not found or v is None else _text(v) == value
            return found and v == value
        case And(children):
            vals = [holds(c, row) for c in children]
            return False if False in vals else (None if None in vals else True)
        case Or(children):
            vals = [holds(c, row) for c in children]
            return True if True in vals else (None if None in vals else False)
        case Not(child):
            v = holds(child, row)
            return None if v is None else not v
    raise AssertionError(p)


def _check(fmt_name: str, data: list[dict], predicate, block_rows: int) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp))
        encoded = [{**r, "d": None if r["d"] is None else cbor2.dumps(r["d"])} for r in data]
        fmt = segment_format(fmt_name, block_rows=block_rows)
        writer = fmt.start_extent(store, SCHEMA, "t")
        writer.append(pa.RecordBatch.from_pylist(encoded, SCHEMA))
        path = writer.finish().object_path
        reader = fmt.open_extent(store, path)
        # stage 2 (block stats), then stage 3 (token filters)
        kept = set(
            _token_filter.pruned_by(reader, store, path, predicate, reader.pruned_blocks(predicate))
        )
        for i, row in enumerate(data):
            if holds(predicate, row) is True:
                assert i // block_rows in kept, (row, predicate)


@pytest.mark.parametrize("fmt_name", FORMATS)
@given(st.lists(rows, min_size=1, max_size=40), predicates, st.integers(1, 8))
def test_pruning_never_drops_a_matching_block(
    fmt_name: str, data: list[dict], predicate, block_rows
) -> None:
    _check(fmt_name, data, predicate, block_rows)


# Flat dynamic values of one type per extent (mostly): shredded paths with stats.
def _flat_rows(scalar: st.SearchStrategy) -> st.SearchStrategy[list[dict]]:
    d = st.dictionaries(st.sampled_from(KEYS[:2]), st.none() | scalar)
    row = st.fixed_dictionaries({"ts": st.none(), "n": st.none(), "s": st.none(), "d": d})
    return st.lists(row, min_size=1, max_size=30)


flat_extents = (
    _flat_rows(st.sampled_from(["v", "w", "1", "0"]))
    | _flat_rows(st.integers(-3, 3))
    | _flat_rows(st.sampled_from(["v", "1"]) | st.integers(-3, 3))
)
flat_paths = st.sampled_from([("k",), ("m",), ("k", "m")])
path_predicates = st.one_of(
    st.builds(DynamicPathEquals, st.just("d"), flat_paths, texts),
    st.builds(
        TimeRange,
        st.sampled_from(["d/k", "d/m"]),
        st.none() | st.integers(-4, 4),
        st.none() | st.integers(-4, 4),
    ),
)


def _flat(*values: object) -> list[dict]:
    return [{"ts": None, "n": None, "s": None, "d": {"k": v}} for v in values]


@given(flat_extents, path_predicates, st.integers(1, 6))
@example(_flat("v", "w"), DynamicPathEquals("d", ("k",), "v"), 2)
@example(_flat("v", "w"), DynamicPathEquals("d", ("k",), "w"), 2)
@example(_flat(3, -1), TimeRange("d/k", None, 0), 2)
@example(_flat(3, -1), TimeRange("d/k", 3, None), 2)
def test_pruning_on_shredded_paths_never_drops_a_matching_block(
    data: list[dict], predicate, block_rows
) -> None:
    _check("parquet", data, predicate, block_rows)
