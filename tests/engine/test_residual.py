"""Dynamic values stored once: shredded leaves leave the CBOR column, reads rebuild it exactly.

The same rows go into two tables, one written with shredding off (every value whole, the
layout of older extents); every answer over them -- whole values, objects, paths, filters --
must be the same, and the shredded extent must hold no CBOR for rows whose every leaf is
shredded.
"""

from __future__ import annotations

import cbor2
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kyma.engine.format._residual import encoded, skeleton_of, skeletons
from kyma.engine.format._shred import shred
from kyma.engine.format._walk import DistinctValues
from kyma.engine.format.choice import ExtentFormats
from kyma.engine.format.parquet import ParquetFormat

ROWS = 3_000


def _values() -> list[object]:
    out: list[object] = []
    for i in range(ROWS):
        value: dict[str, object] = {
            "http.method": ["GET", "POST", "PUT"][i % 3],
            "user.id": f"user-{i * 7919 % 100_003}",
            "client": {"address": f"10.0.{i % 256}.{i // 256}", "port": 1024 + i},
            "ratio": i / 7,
        }
        if i % 10 == 3:
            value = {"client": value["client"], **value}  # another key order
        if i % 17 == 0:
            value["tags"] = ["a", i]  # an array: this row stays whole
        if i % 23 == 0:
            value["user.id"] = i  # another type at the same path
        out.append(None if i % 31 == 0 else value)
    out[5] = {"big": 2**70}  # past int64: whole
    out[6] = {"nan": float("nan"), "inf": float("-inf"), "t": True, "empty": ""}
    return out


@pytest.fixture
def tables(services):  # type: ignore[no-untyped-def]
    values = _values()
    batch = pa.record_batch(
        {
            "n": pa.array(range(ROWS), pa.int64()),
            "attributes": pa.array(
                [None if v is None else cbor2.dumps(v) for v in values], pa.binary()
            ),
        }
    )
    for name, fmt in (("t", ParquetFormat(block_rows=1000)), ("u", ParquetFormat(1000, 0))):
        services.query.execute(f"CREATE TABLE {name} (n long, attributes dynamic)")
        services.write_path.format = ExtentFormats(fmt)
        services.write_path.ingest_batches(name, iter([batch]), source="test")
    return services


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT n, attributes FROM {t} ORDER BY n",
        "SELECT n, attributes['client'] AS c FROM {t} ORDER BY n",
        "SELECT attributes['user.id'] AS u, count(*) AS k FROM {t} GROUP BY 1 ORDER BY 1 LIMIT 20",
        "SELECT n, attributes FROM {t} WHERE attributes['http.method'] = 'PUT' ORDER BY n",
        "SELECT count(*) AS k FROM {t} WHERE attributes['client']['port']::long > 2000",
        "SELECT n, attributes['tags'] AS tags FROM {t} WHERE n % 17 = 0 ORDER BY n",
    ],
)
def test_answers_equal_those_of_whole_values(tables, sql: str) -> None:  # type: ignore[no-untyped-def]
    stripped = tables.query.execute(sql.format(t="t")).table
    whole = tables.query.execute(sql.format(t="u")).table
    assert stripped.num_rows > 0
    assert stripped.equals(whole), sql


def test_rows_whose_leaves_are_all_shredded_hold_no_cbor(tables) -> None:  # type: ignore[no-untyped-def]
    (extent,) = tables.catalog.live_extents("t", tables.catalog.get_table("t").current_snapshot_id)
    path = tables.store.local_path(extent.object_path)
    stored = pq.read_table(path, columns=["attributes"]).column(0)
    values = _values()
    whole = [
        i
        for i, v in enumerate(values)
        if v is not None and (not isinstance(v, dict) or "tags" in v or "big" in v)
    ]
    # the rows kept whole are those with an array or a number past int64; the rest: none
    assert len(stored) - stored.null_count == len(whole)
    assert pq.read_metadata(path).metadata[b"kyma.format_version"] == b"2"


def test_shredded_values_encode_as_cbor2_does() -> None:
    cases = {
        "long": (
            pa.int64(),
            [0, 23, 24, 255, 256, 65_535, 65_536, 2**32 - 1, 2**32, 2**63 - 1, -1, -24, -25]
            + [-256, -257, -(2**63)],
        ),
        "double": (pa.float64(), [0.0, -0.0, 0.1, 1e300, float("inf"), float("-inf")]),
        "string": (pa.string(), ["", "a", "x" * 23, "x" * 24, "é" * 200, "y" * 256, "y" * 70_000]),
        "bool": (pa.bool_(), [True, False]),
    }
    for kind, (dtype, values) in cases.items():
        got = encoded(kind, pa.array(values, dtype)).to_pylist()
        assert got == [cbor2.dumps(v) for v in values], kind
        # with a null among them (its bytes are never spliced in), and sliced
        assert encoded(kind, pa.array([*values, None], dtype)).to_pylist()[:-1] == got, kind
        assert encoded(kind, pa.array(values, dtype).slice(1)).to_pylist() == got[1:], kind
    words = pa.array(["ab", "c" * 30, "d" * 300], pa.large_string())
    assert encoded("string", words).to_pylist() == [cbor2.dumps(w) for w in words.to_pylist()]
    assert encoded("double", pa.array([float("nan")])).to_pylist() == [cbor2.dumps(float("nan"))]


def test_alike_values_share_the_skeleton_each_would_have_alone() -> None:
    values = [v for v in _values() if v is not None]
    values += [
        {"a": 1, "b": "x"},
        {"a": 2**64, "b": "y"},  # the same keys, a past int64: not alike
        {"a": True, "b": "z"},  # a bool where the others hold ints
        {"a": None, "b": "w"},
        {"a": 3, "b": None},
        {"a": [1], "b": "v"},
        {1: "int key"},
        "a scalar",
    ]
    blocks = [pa.array([cbor2.dumps(v) for v in values], pa.binary())]
    distinct = DistinctValues(blocks)
    shredded = shred("attributes", distinct)
    index = {(s.path, s.type): i for i, s in enumerate(shredded.shreds)}
    skeleton, holes = skeletons(distinct, shredded)
    alone = [skeleton_of(v, index) for v in distinct.values]
    assert skeleton.to_pylist() == [None if f is None else f[0] for f in alone]
    assert holes.to_pylist() == [None if f is None else f[1] for f in alone]
    assert skeleton.null_count < len(skeleton) and distinct.alike
