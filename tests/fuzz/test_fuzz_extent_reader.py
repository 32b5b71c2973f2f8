"""Corrupted and truncated extent bytes raise FormatError: never another error, a crash or
a hang. Runs ``HYPOTHESIS_PROFILE``'s examples (ci: 100, soak: 5 000)."""

from __future__ import annotations

import itertools
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kyma.engine.errors import FormatError
from kyma.engine.format.choice import FORMATS, segment_format
from kyma.engine.storage.local import LocalStore

SCHEMA = pa.schema(
    [
        pa.field("_timestamp", pa.timestamp("ns", "UTC")),
        pa.field("name", pa.string()),
        pa.field("n", pa.int64()),
        pa.field("tags", pa.list_(pa.string())),
    ]
)
_names = itertools.count()


@pytest.fixture(scope="module", params=FORMATS)
def extent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[LocalStore, bytes, str]:
    store = LocalStore(tmp_path_factory.mktemp("objects"))
    writer = segment_format(request.param, 16).start_extent(store, SCHEMA, "tables/1")
    rows = [
        {"_timestamp": i * 10**9, "name": f"n{i % 7}", "n": i, "tags": ["a", "b"][: i % 3]}
        for i in range(50)
    ]
    with writer:
        writer.append(pa.RecordBatch.from_pylist(rows, SCHEMA))
        path = writer.finish().object_path
    return store, Path(store.root, path).read_bytes(), request.param


@st.composite
def corruptions(draw: st.DrawFn, size: int) -> list[tuple[str, int, int]]:
    """Edits: set a byte, cut the tail, or drop a byte."""
    kind = st.sampled_from(["set", "truncate", "drop"])
    at = st.integers(0, size - 1)
    return draw(st.lists(st.tuples(kind, at, st.integers(0, 255)), min_size=1, max_size=8))


def _corrupt(data: bytes, edits: list[tuple[str, int, int]]) -> bytes:
    out = bytearray(data)
    for kind, at, value in edits:
        if not out:
            break
        at %= len(out)
        if kind == "set":
            out[at] = value
        elif kind == "truncate":
            del out[at:]
        else:
            del out[at]
    return bytes(out)


@settings(
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_corrupted_extents_raise_format_error(extent: tuple[LocalStore, bytes, str], data) -> None:  # type: ignore[no-untyped-def]
    store, good, suffix = extent
    broken = _corrupt(good, data.draw(corruptions(len(good))))
    path = f"fuzz/{next(_names)}.{suffix}"
    store.put_bytes(path, broken)
    try:
        reader = segment_format().open_extent(store, path)
        try:
            for block in reader.pruned_blocks(None):
                reader.read_block(block, SCHEMA.names).validate(full=True)
        finally:
            reader.close()
    except FormatError:
        pass
    finally:
        store.delete(path)
