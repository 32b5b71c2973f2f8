"""Extent formats: round trips and statistics on every format (tlm and Parquet); tlm's
byte-level envelope, v1 compatibility and bad objects."""

from __future__ import annotations

import json
import re
import struct

import cbor2
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import FormatError, SchemaError
from kyma.engine.format._stats import (
    TOKEN_SET_CAP,
    CappedSet,
    ExtentStats,
    block_stats,
    holds_nul,
)
from kyma.engine.format.choice import FORMATS, segment_format
from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.format.predicate import (
    And,
    DynamicPathEquals,
    DynamicPathExists,
    Equals,
    InSet,
    Not,
    Or,
    StringHas,
    TimeRange,
)
from kyma.engine.format.tlm import TlmFormat
from kyma.engine.native import strings
from kyma.engine.storage import ObjectStore
from kyma.engine.types import DEFAULT_COLUMNS, Column, KymaType, arrow_schema

COLUMNS = [
    *DEFAULT_COLUMNS,
    Column("ok", KymaType("bool")),
    Column("code", KymaType("int")),
    Column("duration", KymaType("long")),
    Column("ratio", KymaType("real")),
    Column("service", KymaType("string")),
    Column("seen_at", KymaType("timestamp")),
    Column("embedding", KymaType("vector(3)")),
    Column("attributes", KymaType("dynamic")),
]
SCHEMA = arrow_schema(COLUMNS)
T0 = 1_700_000_000_000_000_000


def sample_rows(n: int) -> list[dict]:
    return [
        {
            "_timestamp": T0 + i * 1_000_000_000,
            "props": None if i % 4 else cbor2.dumps({"extra": i}),
            "ok": i % 2 == 0,
            "code": None if i % 5 == 0 else 200 + i % 3,
            "duration": i * 10,
            "ratio": i / 7,
            "service": f"svc-{i % 3}",
            "seen_at": T0 + i,
            "embedding": [float(i), 0.5, -1.0],
            "attributes": cbor2.dumps({"http.method": "GET", "n": {"deep": [i, "x"]}}),
        }
        for i in range(n)
    ]


@pytest.fixture(params=FORMATS)
def fmt_name(request: pytest.FixtureRequest) -> str:
    """Tests that take it run on every format kyma writes."""
    return request.param


def write(store: ObjectStore, rows: list[dict], block_rows: int = 4, fmt_name="tlm", **kw):
    fmt = (
        TlmFormat(block_rows=block_rows, **kw)
        if fmt_name == "tlm"
        else ParquetFormat(block_rows=block_rows, **kw)
    )
    writer = fmt.start_extent(store, SCHEMA, "tables/7")
    writer.append(pa.RecordBatch.from_pylist(rows, SCHEMA))
    return fmt, writer.finish()


def test_round_trip_every_type(store: ObjectStore, fmt_name: str) -> None:
    rows = sample_rows(10)
    fmt, result = write(store, rows, fmt_name=fmt_name)
    reader = fmt.open_extent(store, result.object_path)
    meta = reader.metadata()
    assert (meta.block_count, meta.row_count) == (3, 10)
    assert meta.version == {"tlm": 2, "parquet": 2}[fmt_name]
    assert meta.schema.equals(SCHEMA)
    read = pa.Table.from_batches([reader.read_block(b) for b in range(3)])
    assert read.equals(pa.Table.from_pylist(rows, SCHEMA))
    assert cbor2.loads(read["attributes"][3].as_py()) == {
        "http.method": "GET",
        "n": {"deep": [3, "x"]},
    }


def test_write_result_feeds_the_catalog(store: ObjectStore, fmt_name: str) -> None:
    _, result = write(store, sample_rows(10), fmt_name=fmt_name)
    assert result.object_path == f"tables/7/{result.extent_id}.{fmt_name}"
    assert result.format == fmt_name
    assert result.byte_size == store.size(result.object_path)
    assert (result.row_count, result.block_count) == (10, 3)
    assert (result.min_timestamp_nanos, result.max_timestamp_nanos) == (T0, T0 + 9_000_000_000)
    assert result.column_stats["service"] == {
        "distinct": ["svc-0", "svc-1", "svc-2"],
        "tokens": ["svc"],
    }
    assert result.column_stats["code"] == {"distinct": [200, 201, 202], "tokens": None}
    assert "ratio" not in result.column_stats
    assert result.present_paths == [
        "attributes/http.method",
        "attributes/n",
        "attributes/n/deep",
        "props/extra",
    ]


def test_envelope_byte_for_byte(local_store) -> None:
    _, result = write(local_store, sample_rows(10))
    raw = (local_store.root / result.object_path).read_bytes()
    assert raw[:5] == b"KYMA\x02" and raw[-5:] == b"KYMA\x02"
    (stats_len,) = struct.unpack("<I", raw[-9:-5])
    stats = json.loads(raw[-9 - stats_len : -9])
    assert [b["row_count"] for b in stats] == [4, 4, 2]
    assert stats[0]["columns"]["duration"] == {"Int64": {"min": 0, "max": 30, "nulls": 0}}
    assert stats[0]["columns"]["_timestamp"]["Ts"]["min"] == T0
    assert stats[0]["columns"]["code"] == {"Int64": {"min": 200, "max": 202, "nulls": 1}}
    assert "ratio" not in stats[0]["columns"]
    body = pa.ipc.open_file(pa.py_buffer(raw[5 : -9 - stats_len]))
    assert body.num_record_batches == 3
    assert body.get_batch(2).num_rows == 2


def test_block_size_is_configurable(local_store, fmt_name: str) -> None:
    fmt, result = write(local_store, sample_rows(100), block_rows=30, fmt_name=fmt_name)
    assert result.block_count == 4
    reader = fmt.open_extent(local_store, result.object_path)
    assert [reader.read_block(b).num_rows for b in range(4)] == [30, 30, 30, 10]


def test_compressed_bodies_round_trip(local_store) -> None:
    rows = sample_rows(50)
    fmt, result = write(local_store, rows, compression="zstd")
    reader = fmt.open_extent(local_store, result.object_path)
    read = pa.Table.from_batches([reader.read_block(b) for b in range(result.block_count)])
    assert read.equals(pa.Table.from_pylist(rows, SCHEMA))


def test_projection_returns_requested_columns_only(local_store, fmt_name: str) -> None:
    fmt, result = write(local_store, sample_rows(10), fmt_name=fmt_name)
    block = fmt.open_extent(local_store, result.object_path).read_block(
        1, ["service", "added_later"]
    )
    assert block.schema.names == ["service"]
    assert block.column(0).to_pylist() == ["svc-1", "svc-2", "svc-0", "svc-1"]


def test_v1_extents_stay_readable(local_store) -> None:
    table = pa.Table.from_pylist(sample_rows(10), SCHEMA)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, SCHEMA) as ipc:
        for batch in table.to_batches(max_chunksize=4):
            ipc.write_batch(batch)
    local_store.put_bytes("tables/7/old.tlm", b"KYMA\x01" + sink.getvalue().to_pybytes())
    reader = TlmFormat().open_extent(local_store, "tables/7/old.tlm")
    meta = reader.metadata()
    assert (meta.version, meta.block_count, meta.row_count, meta.block_stats) == (1, 3, 10, None)
    assert reader.pruned_blocks(Equals("service", "nope")) == [0, 1, 2]
    read = pa.Table.from_batches([reader.read_block(b) for b in range(3)])
    assert read.equals(table)


def test_pruned_blocks_uses_block_stats(local_store, fmt_name: str) -> None:
    fmt, result = write(local_store, sample_rows(12), fmt_name=fmt_name)
    reader = fmt.open_extent(local_store, result.object_path)
    second = 1_000_000_000
    assert reader.pruned_blocks(None) == [0, 1, 2]
    assert reader.pruned_blocks(Equals("duration", 50)) == [1]
    assert reader.pruned_blocks(InSet("duration", frozenset({0, 110}))) == [0, 2]
    assert reader.pruned_blocks(TimeRange("_timestamp", T0 + 8 * second, None)) == [2]
    assert reader.pruned_blocks(TimeRange("_timestamp", None, T0 + 4 * second)) == [0]
    assert reader.pruned_blocks(And((Equals("duration", 50), Equals("duration", 0)))) == []
    assert reader.pruned_blocks(Or((Equals("duration", 50), Equals("duration", 0)))) == [0, 1]
    assert reader.pruned_blocks(Equals("service", "zzz")) == []
    assert reader.pruned_blocks(Not(Equals("duration", 50))) == [0, 1, 2]
    assert reader.pruned_blocks(StringHas("service", "svc")) == [0, 1, 2]
    assert reader.pruned_blocks(DynamicPathExists("attributes", ("n", "deep"))) == [0, 1, 2]
    assert reader.pruned_blocks(DynamicPathExists("attributes", ("missing",))) == []
    assert reader.pruned_blocks(DynamicPathEquals("props", ("extra",), 4)) == [0, 1, 2]
    assert reader.pruned_blocks(DynamicPathEquals("props", ("other",), 4)) == []
    # Unknown columns and mismatched types keep every block.
    assert reader.pruned_blocks(Equals("nope", 1)) == [0, 1, 2]
    assert reader.pruned_blocks(Equals("duration", "50")) == [0, 1, 2]


def test_not_prunes_a_constant_block(local_store, fmt_name: str) -> None:
    rows = [{**r, "service": "only"} for r in sample_rows(4)]
    fmt, result = write(local_store, rows, fmt_name=fmt_name)
    reader = fmt.open_extent(local_store, result.object_path)
    assert reader.pruned_blocks(Not(Equals("service", "only"))) == []
    assert reader.pruned_blocks(Not(Equals("service", "other"))) == [0]


def test_long_strings_disable_min_max_but_not_correctness(local_store, fmt_name: str) -> None:
    rows = sample_rows(4)
    rows[2]["service"] = "x" * 257
    fmt, result = write(local_store, rows, fmt_name=fmt_name)
    reader = fmt.open_extent(local_store, result.object_path)
    stat = reader.metadata().block_stats[0].columns["service"]
    assert (stat.min, stat.max) == (None, None)
    assert reader.pruned_blocks(Equals("service", "x" * 257)) == [0]
    rows[2]["service"] = "x" * 256
    fmt, result = write(local_store, rows, fmt_name=fmt_name)
    stat = fmt.open_extent(local_store, result.object_path).metadata().block_stats[0]
    assert stat.columns["service"].max == "x" * 256


def test_distinct_and_token_sets_are_dropped_past_their_caps(local_store, fmt_name: str) -> None:
    rows = sample_rows(1001)
    for i, row in enumerate(rows):
        row["service"] = f"s{i}"
    _, result = write(local_store, rows, block_rows=300, fmt_name=fmt_name)
    assert result.column_stats["service"]["distinct"] is None
    assert result.column_stats["duration"]["distinct"] is None
    assert len(result.column_stats["service"]["tokens"]) == 1001
    rows = sample_rows(10)
    rows[0]["service"] = " ".join(f"w{i}" for i in range(10_001))
    _, result = write(local_store, rows, fmt_name=fmt_name)
    assert result.column_stats["service"]["tokens"] is None


def test_tokens_are_lowercased_ascii_words_of_two_or_more(local_store, fmt_name: str) -> None:
    rows = sample_rows(2)
    rows[0]["service"] = "Connection TIMEOUT: a b2 x/y ünï"
    rows[1]["service"] = None
    _, result = write(local_store, rows, fmt_name=fmt_name)
    assert result.column_stats["service"]["tokens"] == ["b2", "connection", "timeout"]


def test_empty_extent(local_store, fmt_name: str) -> None:
    fmt = segment_format(fmt_name)
    writer = fmt.start_extent(local_store, SCHEMA, "tables/7")
    result = writer.finish()
    assert (result.row_count, result.block_count, result.min_timestamp_nanos) == (0, 0, None)
    assert fmt.open_extent(local_store, result.object_path).pruned_blocks(None) == []


def test_append_rejects_a_foreign_schema(local_store, fmt_name: str) -> None:
    writer = segment_format(fmt_name).start_extent(local_store, SCHEMA, "tables/7")
    with pytest.raises(SchemaError, match="does not match"):
        writer.append(pa.record_batch({"x": [1]}))
    writer.abort()
    assert list(local_store.list("tables/")) == []


def _stats_len(raw: bytes) -> int:
    return struct.unpack("<I", raw[-9:-5])[0]


def _corrupt(local_store, raw: bytes):
    local_store.put_bytes("tables/7/bad.tlm", raw)
    reader = TlmFormat().open_extent(local_store, "tables/7/bad.tlm")
    return reader.metadata()


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda raw: b"NOPE!" + raw[5:], "bad magic"),
        (lambda raw: raw[:-3], "bad trailing magic"),
        (lambda raw: raw[:-9] + struct.pack("<I", 10**9) + raw[-5:], "exceeds the object size"),
        (lambda raw: raw[:-9] + struct.pack("<I", 3) + raw[-5:], "does not parse"),
        (lambda raw: raw[:40] + raw[-9 - _stats_len(raw) :], "Arrow IPC body does not parse"),
        (lambda raw: b"KYM", "shorter than the magic"),
        (lambda raw: b"KYMA\x02KYMA\x02", "too short"),
    ],
)
def test_corrupt_extents_raise_a_precise_format_error(local_store, mangle, message) -> None:
    _, result = write(local_store, sample_rows(10))
    raw = (local_store.root / result.object_path).read_bytes()
    with pytest.raises(FormatError, match=message) as err:
        _corrupt(local_store, mangle(raw))
    assert "tables/7/bad.tlm" in str(err.value)


def test_footer_and_body_disagreeing_is_a_format_error(local_store) -> None:
    _, result = write(local_store, sample_rows(10))
    raw = (local_store.root / result.object_path).read_bytes()
    (stats_len,) = struct.unpack("<I", raw[-9:-5])
    stats = json.loads(raw[-9 - stats_len : -9])[:2]
    footer = json.dumps(stats).encode()
    raw = raw[: -9 - stats_len] + footer + struct.pack("<I", len(footer)) + b"KYMA\x02"
    with pytest.raises(FormatError, match="footer has stats for 2 blocks, body has 3"):
        _corrupt(local_store, raw)


@given(
    texts=st.lists(st.none() | st.text(alphabet=" \t\nAb1-é_Z9.ü€", max_size=12), max_size=30),
    cut=st.integers(0, 5),
    large=st.booleans(),
)
def test_token_sets_are_the_regex_words_of_every_value(texts, cut: int, large: bool) -> None:
    """The words of a column (``native.strings.words``, one pass over its bytes) are what
    splitting each lowercased value on non-alphanumerics gives, also for sliced arrays,
    large strings and multi-byte characters next to words."""
    array = pa.array(texts, pa.large_string() if large else pa.string()).slice(cut)
    expected = {
        word
        for text in array.to_pylist()
        if text is not None
        for word in re.split(r"[^a-z0-9]+", text.lower())
        if len(word) >= 2
    }
    assert set(strings.words(array).to_pylist()) == expected


@given(
    batches=st.lists(st.sets(st.text(max_size=6) | st.integers(-(2**63), 2**63 - 1)), max_size=4),
    as_text=st.booleans(),
)
def test_capped_sets_sort_as_python_does(batches, as_text: bool) -> None:
    """A capped set of strings (any code points) or integers, added to batch by batch, sorts
    (by Arrow) as Python's ``sorted`` does, and past its cap is unknown."""
    kind = pa.string() if as_text else pa.int64()
    batches = [{v for v in b if isinstance(v, str) == as_text} for b in batches]
    held = CappedSet(cap=8)
    for batch in batches:
        held.add(pa.array(sorted(batch), kind))
    union = set().union(*batches)
    if len(union) > 8 or any("\x00" in v for v in union if isinstance(v, str)):
        assert held.sorted() is None
    else:
        assert held.sorted() == sorted(union)


@given(
    texts=st.lists(st.none() | st.text(alphabet="a\x00é", max_size=3), max_size=8),
    cut=st.integers(0, 3),
    large=st.booleans(),
)
def test_a_nul_is_found_by_one_scan_of_the_bytes(texts, cut: int, large: bool) -> None:
    """``holds_nul`` (numpy over the bytes the values span) agrees with a substring kernel,
    on sliced and large strings, with and without nulls."""
    array = pa.array(texts, pa.large_string() if large else pa.string()).slice(cut)
    expected = any("\x00" in text for text in array.to_pylist() if text is not None)
    assert holds_nul(array) == expected
    assert holds_nul(array.drop_null()) == expected


def _run_sets(values: list[str]) -> dict:
    batch = pa.record_batch({"s": pa.array(values, pa.string())})
    stats = ExtentStats(batch.schema)
    stats.update(batch, block_stats(batch))
    return stats.column_stats()["s"]


def test_a_runs_sets_equal_its_words_once_its_distinct_set_is_past_its_cap() -> None:
    """Words seen before and after the distinct set gives up, and some only at the run's
    end: the token set is every word of the run, as if it had been split whole."""
    rows = 35_000
    values = [f"Host-{i % 4_000} GET /v{i % 7}" for i in range(rows)]
    values[-3:] = ["late arrival", "only-after the_probe", "x"]
    words = {w for v in values for w in re.split(r"[^a-z0-9]+", v.lower()) if len(w) >= 2}
    assert len(words) <= TOKEN_SET_CAP
    sets = _run_sets(values)
    assert sets["tokens"] == sorted(words)
    assert sets["distinct"] is None  # 4 000+ distinct values: past the distinct cap


def test_ids_overflow_their_sets() -> None:
    sets = _run_sets([f"id-{i:08d}" for i in range(60_000)])
    assert sets == {"distinct": None, "tokens": None}


def test_token_sets_of_text_columns_are_the_words_of_every_value(
    local_store, fmt_name: str
) -> None:
    # text (a space per value): Parquet's token filters split it, and its token set is
    # their words; tlm splits the values itself. Both: the words of every value.
    rows = sample_rows(40)
    for i, row in enumerate(rows):
        row["service"] = None if i % 7 == 0 else f"GET /api/v{i % 3}/Items-{i} took {i}ms"
    _, result = write(local_store, rows, block_rows=16, fmt_name=fmt_name)
    values = pa.array([r["service"] for r in rows], pa.string()).drop_null()
    assert result.column_stats["service"]["distinct"] is not None
    assert result.column_stats["service"]["tokens"] == sorted(strings.words(values).to_pylist())
    for row in rows[:3]:
        row["service"] = " ".join(f"w{i}" for i in range(4_000))
    rows[0]["service"] += " w4000 w4001 w4002 w4003 w4004 w4005 w4006 w4007 w4008 w4009"
    rows[1]["service"] = " ".join(f"v{i}" for i in range(6_000))
    _, result = write(local_store, rows, block_rows=16, fmt_name=fmt_name)
    assert result.column_stats["service"]["tokens"] is None  # past TOKEN_SET_CAP
