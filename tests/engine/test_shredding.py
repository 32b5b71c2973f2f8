"""Shredded dynamic columns: values come back byte-identical, every path column answers what
``kyma_dyn_get`` answers over the CBOR (shredded, past the bound, absent, objects, tlm
extents), pruning on path stats, and other engines read the file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import cbor2
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.catalog import ExtentRef
from kyma.engine.format.choice import segment_format
from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.format.predicate import DynamicPathEquals, TimeRange
from kyma.engine.format.tlm import TlmFormat
from kyma.engine.query._path_columns import PathColumn
from kyma.engine.query._scan import TableScan, scan_blocks
from kyma.engine.query.udfs import dyn_get
from kyma.engine.storage.local import LocalStore

SCHEMA = pa.schema([("n", pa.int64()), ("d", pa.binary())])
KEYS = ["a", "b", "c", "a/b", "x.y"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=8,
)
dicts = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)


def _paths(value: object, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            out.add((*prefix, key))
            out |= _paths(child, (*prefix, key))
    return out


def _write(
    store: LocalStore, fmt_name: str, values: list, block_rows: int, bound: int | None = None
) -> ExtentRef:
    fmt = ParquetFormat(block_rows, bound) if fmt_name == "parquet" else TlmFormat(block_rows)
    writer = fmt.start_extent(store, SCHEMA, "t")
    rows = [{"n": i, "d": None if v is None else cbor2.dumps(v)} for i, v in enumerate(values)]
    writer.append(pa.RecordBatch.from_pylist(rows, SCHEMA))
    r = writer.finish()
    return ExtentRef(r.extent_id, r.object_path, r.byte_size, r.row_count, r.block_count)


def _scan(store, extents, paths, columns=("n", "d"), predicate=None):  # type: ignore[no-untyped-def]
    fields = [SCHEMA.field(c) for c in columns] + [pa.field(p.name, pa.string()) for p in paths]
    scan = TableScan(pa.schema(fields), predicate, paths=list(paths))
    batches = list(scan_blocks(scan, extents, store, segment_format()))
    return pa.Table.from_batches(batches, scan.schema)


@given(
    st.lists(st.none() | dicts | json_values, min_size=1, max_size=30),
    st.integers(1, 7),
    st.integers(0, 300),
)
def test_every_path_answers_what_kyma_dyn_get_answers(values, block_rows, bound) -> None:
    wanted = set().union(*(_paths(v) for v in values)) | {("zz",), ("a", "zz")}
    paths = [PathColumn("d", p) for p in sorted(wanted)]
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp))
        extents = [_write(store, f, values, block_rows, bound) for f in ("parquet", "tlm")]
        table = _scan(store, extents, paths)
        encoded = [None if v is None else cbor2.dumps(v) for v in values]
        assert table.column("d").to_pylist() == encoded * 2  # byte-identical, both formats
        for path in paths:
            expected = dyn_get(
                table.column("d").combine_chunks(), pa.array([json.dumps(path.path)])
            )
            assert table.column(path.name).combine_chunks().equals(expected), path


def test_a_path_only_query_reads_no_cbor(tmp_path) -> None:
    store = LocalStore(tmp_path)
    values = [{"status": 200 + i % 3, "user": f"u{i}", "o": {"k": i}} for i in range(100)]
    extent = _write(store, "parquet", values, 16)
    paths = [PathColumn("d", ("status",)), PathColumn("d", ("o", "k")), PathColumn("d", ("o",))]
    reader = segment_format().open_extent(store, extent.object_path)
    kinds = {(s.path, s.type) for s in reader.shredded()}
    assert kinds == {(("status",), "long"), (("user",), "string"), (("o", "k"), "long")}
    only_shredded = _scan(store, [extent], paths[:2], columns=("n",))
    assert only_shredded.column(paths[0].name).to_pylist() == [str(v["status"]) for v in values]
    from kyma.engine.query import _path_scan

    plan = _path_scan.plan(reader, paths[:2], list(range(extent.block_count)))
    assert "d" not in plan.reads  # the CBOR column chunk is never read
    plan = _path_scan.plan(reader, paths, list(range(extent.block_count)))
    assert "d" in plan.reads  # an object at the path: the CBOR answers it
    answered = _scan(store, [extent], paths, columns=("n",))
    assert answered.column(paths[2].name)[0].as_py() == '{"k": 0}'  # as Postgres renders jsonb


def test_path_stats_prune_blocks(tmp_path) -> None:
    store = LocalStore(tmp_path)
    values = [{"user": f"u{i:03d}", "size": i} for i in range(64)]
    extent = _write(store, "parquet", values, 8)
    reader = segment_format().open_extent(store, extent.object_path)
    assert reader.pruned_blocks(DynamicPathEquals("d", ("user",), "u017")) == [2]
    assert reader.pruned_blocks(DynamicPathEquals("d", ("user",), "nobody")) == []
    assert reader.pruned_blocks(TimeRange("d/size", 40, None)) == [5, 6, 7]


def test_an_extent_with_sub_columns_opens_in_duckdb_and_pyarrow(tmp_path) -> None:
    store = LocalStore(tmp_path)
    values = [{"user": f"u{i}", "size": i, "ok": i % 2 == 0} for i in range(10)]
    extent = _write(store, "parquet", values, 4)
    path = tmp_path / extent.object_path
    table = pq.read_table(path)
    assert table.column("__kyma/d/size:long").to_pylist() == list(range(10))
    # every leaf shredded: the dynamic column holds no CBOR of its own (kyma rebuilds it)
    assert table.column("d").null_count == len(values)
    with duckdb.connect(":memory:") as con:
        rows = con.execute(
            'SELECT "__kyma/d/user:string", count(*) FROM read_parquet(?)'
            ' WHERE "__kyma/d/ok:bool" GROUP BY 1 ORDER BY 1',
            [str(path)],
        ).fetchall()
    assert rows == [(f"u{i}", 1) for i in (0, 2, 4, 6, 8)]


def test_tlm_and_shredded_extents_answer_together_through_sql(services, client) -> None:
    from http_helpers import post_lines, sql

    sql(client, "CREATE TABLE logs (n long, attributes dynamic)")
    rows = [
        {
            "n": i,
            "attributes": {
                "user": f"u{i}",
                "status": 200 + i % 3,
                "ratio": i / 4,
                "ok": i % 2 == 0,
                "obj": {"k": i} if i % 5 else "flat",
                **({"rare": "x"} if i == 7 else {}),
            },
        }
        for i in range(40)
    ]
    services.write_path.format = segment_format("tlm", block_rows=8)
    post_lines(client, "logs", rows[:20])
    services.write_path.format = segment_format("parquet", block_rows=8)
    post_lines(client, "logs", rows[20:30])
    post_lines(client, "logs", rows[30:])
    keys = ["user", "status", "ratio", "ok", "obj", "rare", "nope"]
    select = ", ".join(f"attributes['{k}'] AS {k}" for k in keys)
    answer = sql(client, f"SELECT n, {select}, attributes['obj']['k'] AS k FROM logs ORDER BY n")
    expected = []
    for row in rows:
        attrs = row["attributes"]
        texts = [
            dyn_get(pa.array([cbor2.dumps(attrs)]), pa.array([json.dumps([k])]))[0] for k in keys
        ]
        obj = attrs["obj"]
        k = str(obj["k"]) if isinstance(obj, dict) else None
        expected.append([row["n"], *[t.as_py() for t in texts], k])
    assert answer["rows"] == expected
    grouped = sql(
        client,
        "SELECT attributes['status'] AS s, count(*) AS c FROM logs GROUP BY attributes['status']"
        " ORDER BY s",
    )
    assert grouped["rows"] == [["200", 14], ["201", 13], ["202", 13]]
    # Stage 1: the first shredded extent's distinct users lack u33; tlm has no path stats.
    needle = sql(client, "SELECT n FROM logs WHERE attributes['user'] = 'u33'")
    assert needle["rows"] == [[33]]
    assert (needle["stats"]["extents_total"], needle["stats"]["extents_after_catalog"]) == (3, 2)
    assert needle["stats"]["blocks_after_stats"] == 3 + 1  # tlm's blocks, then stage 2
    ranged = sql(client, "SELECT count(*) FROM logs WHERE attributes['status']::long >= 202")
    assert ranged["rows"] == [[13]]
    high = sql(client, "SELECT count(*) FROM logs WHERE attributes['status']::long > 202")
    assert high["rows"] == [[0]]
    assert high["stats"]["extents_after_catalog"] == 1  # only tlm: no stats to prune it


def test_path_columns_in_every_query_shape(client) -> None:
    from http_helpers import post_lines, sql

    sql(client, "CREATE TABLE ev (n long, attributes dynamic)")
    post_lines(client, "ev", [{"n": i, "attributes": {"u": f"u{i % 4}", "s": i}} for i in range(8)])
    queries = {
        "SELECT * FROM ev WHERE attributes['u'] = 'u3' ORDER BY n": [3, 7],
        "WITH c AS (SELECT n, attributes['u'] AS u FROM ev) SELECT n FROM c WHERE u = 'u1'"
        " ORDER BY n": [1, 5],
        "SELECT a.n FROM ev a JOIN ev b ON a.attributes['u'] = b.attributes['u']"
        " AND b.attributes['s']::long = 6 ORDER BY a.n": [2, 6],
        "SELECT n FROM ev l WHERE EXISTS (SELECT 1 FROM ev m WHERE m.attributes['u'] ="
        " l.attributes['u'] AND m.n > l.n) ORDER BY n": [0, 1, 2, 3],
        "SELECT n FROM ev WHERE attributes['s'] IN ('1', '2') UNION ALL"
        " SELECT n FROM ev WHERE attributes['u'] = 'u0' ORDER BY n": [0, 1, 2, 4],
        "SELECT n FROM ev WHERE attributes IS NOT NULL AND attributes['s']::long > 5 ORDER BY n": [
            6,
            7,
        ],
    }
    for query, expected in queries.items():
        answer = sql(client, query)
        at = [c["name"] for c in answer["columns"]].index("n")
        assert [row[at] for row in answer["rows"]] == expected, query
