"""The Parquet extent format: every kyma type round trips, the file is standard Parquet
(pyarrow and DuckDB read it), kyma's statistics sit in its footer, reads dispatch by format."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import cbor2
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import ConfigError, FormatError
from kyma.engine.format import _blocked
from kyma.engine.format.choice import segment_format
from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.format.parquet import _writer as _parquet_writer
from kyma.engine.format.predicate import Equals
from kyma.engine.storage import ObjectStore
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import TIMESTAMP, Column, KymaType, arrow_schema

TYPES = {
    "b": "bool",
    "i": "int",
    "l": "long",
    "r": "real",
    "s": "string",
    "t": "timestamp",
    "d": "dynamic",
    "v": "vector(3)",
    "al": "array(long)",
    "as": "array(string)",
    "aal": "array(array(long))",
}
SCHEMA = arrow_schema([Column(name, KymaType.parse(t)) for name, t in TYPES.items()])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
float32s = st.floats(width=32, allow_nan=False)
values = {
    "b": st.booleans(),
    "i": st.integers(-(2**31), 2**31 - 1),
    "l": st.integers(-(2**63), 2**63 - 1),
    "r": st.floats(allow_nan=False),
    "s": st.text(max_size=12),
    "t": st.integers(-(2**62), 2**62),
    "d": json_values.map(cbor2.dumps),
    "v": st.lists(float32s, min_size=3, max_size=3),
    "al": st.lists(st.none() | st.integers(-(2**63), 2**63 - 1), max_size=4),
    "as": st.lists(st.none() | st.text(max_size=4), max_size=4),
    "aal": st.lists(st.none() | st.lists(st.integers(-5, 5), max_size=3), max_size=3),
}
rows = st.fixed_dictionaries({name: st.none() | strategy for name, strategy in values.items()})


@given(st.lists(rows, max_size=30), st.integers(1, 7))
def test_every_type_round_trips(data: list[dict], block_rows: int) -> None:
    table = pa.Table.from_pylist(data, SCHEMA)
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp))
        fmt = ParquetFormat(block_rows=block_rows)
        writer = fmt.start_extent(store, SCHEMA, "t")
        writer.append(table.to_batches()[0] if data else pa.RecordBatch.from_pylist([], SCHEMA))
        result = writer.finish()
        reader = fmt.open_extent(store, result.object_path)
        meta = reader.metadata()
        assert meta.schema.equals(SCHEMA, check_metadata=True)
        assert (meta.row_count, meta.block_count) == (len(data), math.ceil(len(data) / block_rows))
        blocks = list(reader.read_blocks(list(range(meta.block_count))))
        assert [b.num_rows for b in blocks[:-1]] == [block_rows] * (len(blocks) - 1)
        back = pa.Table.from_batches(blocks, SCHEMA)
        assert back.equals(table)  # dynamic values come back byte-identical
        on_disk = pq.read_table(store.root / result.object_path)
        plain = [name for name in SCHEMA.names if name != "d"]
        assert on_disk.select(plain).equals(table.select(plain))  # pyarrow alone reads them
        # The dynamic column itself holds the values kept whole; the others (every leaf
        # shredded) are rebuilt by kyma's reader from their skeletons, as compared above.
        stored, written = on_disk.column("d").to_pylist(), table.column("d").to_pylist()
        assert all(s is None or s == w for s, w in zip(stored, written, strict=True))
        extra = on_disk.column_names[len(SCHEMA.names) :]
        # shredded paths of d, its skeletons and holes, and the token filters of text columns
        assert all(name.startswith(("__kyma/d/", "__kyma/~")) for name in extra)


def _write(store: ObjectStore, rows: list[dict], block_rows: int = 4):  # type: ignore[no-untyped-def]
    fmt = segment_format("parquet", block_rows)
    writer = fmt.start_extent(store, SCHEMA, "tables/3")
    writer.append(pa.RecordBatch.from_pylist(rows, SCHEMA))
    return fmt, writer.finish()


def sample(n: int) -> list[dict]:
    return [
        {
            "l": i,
            "r": i / 4,
            "s": f"svc-{i % 3}",
            "t": 1_700_000_000_000_000_000 + i,
            "d": cbor2.dumps({"http": {"status": 200 + i % 2}, "user.id": f"u{i}"}),
            "v": [float(i), 0.5, -1.0],
        }
        for i in range(n)
    ]


def test_projected_reads_of_chosen_blocks_on_every_store(store: ObjectStore) -> None:
    fmt, result = _write(store, sample(10))
    reader = fmt.open_extent(store, result.object_path)
    assert reader.pruned_blocks(Equals("l", 5)) == [1]
    batch = reader.read_block(1, ["s", "added_later", "l"])
    assert batch.schema.names == ["s", "l"]
    assert batch.column("l").to_pylist() == [4, 5, 6, 7]
    assert [b.num_rows for b in reader.read_blocks([2, 0], ["d"])] == [2, 4]
    assert reader.read_block(0, []).num_rows == 4  # count(*) reads no column
    with pytest.raises(FormatError, match="out of range"):
        reader.read_block(3)
    reader.close()


def test_a_small_extent_written_on_one_thread_is_the_threaded_one(
    local_store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below OVERLAP_BYTES the blocks are counted, walked and encoded on the calling thread:
    the stored bytes are those of the threaded write (stats thread, encoding thread)."""
    stored = []
    for overlap in (_blocked.OVERLAP_BYTES, 0):
        monkeypatch.setattr(_blocked, "OVERLAP_BYTES", overlap)
        monkeypatch.setattr(_parquet_writer, "OVERLAP_BYTES", overlap)
        _, result = _write(local_store, sample(10))
        stored.append(local_store.local_path(result.object_path).read_bytes())
    assert stored[0] == stored[1]


def test_footer_holds_kyma_stats_and_the_chosen_encodings(local_store) -> None:
    _, result = _write(local_store, sample(10))
    file = pq.ParquetFile(local_store.root / result.object_path)
    meta = file.metadata
    assert meta.num_row_groups == 3
    kv = meta.metadata
    assert kv[b"kyma.format_version"] == b"2"
    blocks = json.loads(kv[b"kyma.block_stats"])
    assert [b["row_count"] for b in blocks] == [4, 4, 2]
    assert blocks[0]["columns"]["l"] == {"Int64": {"min": 0, "max": 3, "nulls": 0}}
    assert json.loads(kv[b"kyma.column_stats"]) == result.column_stats
    assert json.loads(kv[b"kyma.present_paths"]) == ["d/http", "d/http/status", "d/user.id"]
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    encodings = {name: meta.row_group(0).column(i).encodings for i, name in enumerate(names)}
    assert "DELTA_BINARY_PACKED" in encodings["t"]
    assert "DELTA_BINARY_PACKED" in encodings["l"]
    assert "BYTE_STREAM_SPLIT" in encodings["r"]
    assert "BYTE_STREAM_SPLIT" in encodings["v.list.element"]
    assert "RLE_DICTIONARY" not in encodings["s"]  # 3 distinct strings in 4 rows
    chunk = meta.row_group(0).column(names.index("l"))
    assert chunk.compression == "ZSTD"
    assert (chunk.statistics.min, chunk.statistics.max) == (0, 3)
    assert chunk.has_column_index and chunk.has_offset_index  # the page index


def test_dictionaries_only_for_values_a_block_repeats(local_store) -> None:
    rows = [
        {
            "s": f"svc-{i % 3}",
            "as": [f"id-{i}"],
            "l": 200 + 100 * (i % 4),
            "i": i,
            "r": (i % 4) / 4,
            "t": 1_700_000_000_000_000_000 + i,
            "d": cbor2.dumps({"code": 200 + 100 * (i % 4), "user": f"u{i}", "m": f"m{i % 2}"}),
        }
        for i in range(32)
    ]
    _, result = _write(local_store, [*rows, {"s": "x"}], block_rows=16)
    meta = pq.ParquetFile(local_store.root / result.object_path).metadata
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    dictionary = {
        name
        for i, name in enumerate(names)
        if "RLE_DICTIONARY" in meta.row_group(0).column(i).encodings
    }
    assert dictionary - {"__kyma/~skeleton/d", "__kyma/~holes/d"} == {  # key layouts: always
        "s",  # 3 distinct strings in 16 rows
        "l",  # 4 distinct longs in 16 rows
        "r",  # 4 distinct doubles in 16 rows (they decode faster so, and take less room)
        "__kyma/d/code:long",
        "__kyma/d/m:string",
        "as.list.element",  # list elements are not sampled
    }
    assert "DELTA_BINARY_PACKED" in meta.row_group(0).column(names.index("i")).encodings
    assert "DELTA_BINARY_PACKED" in meta.row_group(0).column(names.index("t")).encodings
    back = pq.read_table(local_store.root / result.object_path)
    assert back.column("s").to_pylist() == [r["s"] for r in rows] + ["x"]
    assert back.column("__kyma/d/user:string").to_pylist()[:3] == ["u0", "u1", "u2"]


def test_an_extent_opens_in_duckdb(local_store) -> None:
    _, result = _write(local_store, sample(10))
    path = str(local_store.root / result.object_path)
    got = duckdb.execute(
        "SELECT s, count(*), sum(l), min(t) FROM read_parquet(?) GROUP BY s ORDER BY s", [path]
    ).fetchall()
    assert [(s, n, total) for s, n, total, _ in got] == [
        ("svc-0", 4, 18),
        ("svc-1", 3, 12),
        ("svc-2", 3, 15),
    ]
    (dim,) = duckdb.execute("SELECT max(len(v)) FROM read_parquet(?)", [path]).fetchone()
    assert dim == 3


def test_reads_dispatch_on_the_object(local_store) -> None:
    tlm = segment_format("tlm", 4)
    writer = tlm.start_extent(local_store, SCHEMA, "tables/3")
    writer.append(pa.RecordBatch.from_pylist(sample(5), SCHEMA))
    old = writer.finish()
    fmt, new = _write(local_store, sample(5))
    assert (old.format, new.format, fmt.name) == ("tlm", "parquet", "parquet")
    for result in (old, new):
        reader = fmt.open_extent(local_store, result.object_path)
        assert reader.read_block(0, ["l"]).column(0).to_pylist() == [0, 1, 2, 3]
    # Without a known suffix, the magic bytes decide.
    for result, key in ((old, "tables/3/a.bin"), (new, "tables/3/b.bin")):
        local_store.put_bytes(key, (local_store.root / result.object_path).read_bytes())
        assert fmt.open_extent(local_store, key).metadata().row_count == 5
    local_store.put_bytes("tables/3/c.bin", b"ORC\x00 not an extent")
    with pytest.raises(FormatError, match="neither a .parquet nor a .tlm"):
        fmt.open_extent(local_store, "tables/3/c.bin")


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda raw: raw[: len(raw) // 2], "not a readable Parquet file"),
        (lambda raw: b"PAR1", "not a readable Parquet file"),
        (lambda raw: raw[:100] + bytes(200) + raw[300:], "do not decode"),
    ],
)
def test_bad_objects_raise_format_errors(local_store, mangle, message: str) -> None:
    fmt, result = _write(local_store, sample(10))
    raw = (local_store.root / result.object_path).read_bytes()
    local_store.put_bytes("tables/3/bad.parquet", mangle(raw))
    with pytest.raises(FormatError, match=message):
        reader = fmt.open_extent(local_store, "tables/3/bad.parquet")
        list(reader.read_blocks([0, 1, 2]))


def test_a_foreign_parquet_file_keeps_every_block(local_store) -> None:
    table = pa.table({"ts": pa.array([1, 2, 3], TIMESTAMP), "n": [1, 2, 3]})
    path = local_store.root / "tables/3/foreign.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table, path, row_group_size=2)
    reader = segment_format().open_extent(local_store, "tables/3/foreign.parquet")
    assert (reader.metadata().block_stats, reader.metadata().version) == (None, 0)
    assert reader.pruned_blocks(Equals("n", 9)) == [0, 1]


def test_an_unknown_format_setting_is_refused() -> None:
    with pytest.raises(ConfigError, match="KYMA_EXTENT_FORMAT: expected one of"):
        segment_format("orc")


def test_the_footer_checksum_finds_a_flipped_byte(local_store) -> None:
    fmt, result = _write(local_store, sample(10))
    path = local_store.root / result.object_path
    raw = path.read_bytes()
    checksum = json.loads(pq.ParquetFile(path).metadata.metadata[b"kyma.checksum"])
    footer = int.from_bytes(raw[-8:-4], "little")
    assert 4 < checksum["bytes"] < len(raw) - 8 - footer  # the row groups; page index next
    fmt.open_extent(local_store, result.object_path).verify()  # intact: passes
    middle = checksum["bytes"] // 2
    local_store.put_bytes(
        "tables/3/flipped.parquet", raw[:middle] + bytes([raw[middle] ^ 1]) + raw[middle + 1 :]
    )
    reader = fmt.open_extent(local_store, "tables/3/flipped.parquet")
    with pytest.raises(FormatError, match="do not match the checksum in its footer"):
        reader.verify()


def test_strings_that_are_not_utf8_are_refused_on_read(local_store) -> None:
    """Arrow's Parquet decoder does not check UTF-8; the reader does (an ASCII chunk by its
    bytes alone, any other by Arrow's full check): a damaged page must not pass as text."""
    offsets = pa.py_buffer(b"".join(n.to_bytes(4, "little") for n in (0, 2, 4, 6)))
    data = b"ok" + "é".encode() + b"\xff\xfe"  # ASCII, UTF-8, not UTF-8
    bad = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(data)])
    path = local_store.root / "tables/4/bad.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"s": bad}), path, row_group_size=1, compression="none")
    reader = segment_format().open_extent(local_store, "tables/4/bad.parquet")
    assert reader.read_block(0).column("s").to_pylist() == ["ok"]
    assert reader.read_block(1).column("s").to_pylist() == ["é"]
    with pytest.raises(FormatError, match=r"blocks \[2\] do not decode: .*UTF8"):
        reader.read_block(2)
    with pytest.raises(FormatError, match="UTF8"):
        list(reader.read_blocks([0, 1, 2]))
