"""Dynamic columns built by Arrow kernels (ingest/coerce/_cbor.py) against the slow reader.

The bodies are made to hit the traps of reading objects through pyarrow's inferred structs:
explicit nulls, keys in another order than the struct's, integers and floats in one field,
``-0`` and ``-0.0``, integers past 64 bits, escapes in keys and strings, nested objects,
lists, whitespace around colons, a key also used at the top level.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import cbor2
import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import IngestError
from kyma.engine.format import ParsedDynamic, SegmentFormat
from kyma.engine.format import _parsed as parsed_module
from kyma.engine.format._parsed import leaves
from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.format.tlm import TlmFormat
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import DEFAULT_COLUMNS, Column, KymaType, arrow_schema
from kyma.ingest.coerce._cbor import MAX_KEYS, encode_dynamic
from kyma.ingest.coerce._fast import coerce_fast
from kyma.ingest.coerce._json import parse_line
from kyma.ingest.coerce._layout import layout
from kyma.ingest.coerce._slow import coerce_rows

INGEST = 1_700_000_000_123_456_789
COLUMNS = (
    *DEFAULT_COLUMNS,
    Column("service", KymaType("string")),
    Column("attrs", KymaType("dynamic")),
    Column("more", KymaType("dynamic")),
)
KEYS = ["http.method", "user.id", "n", "service", 'q"t', "é", "a/b", "client", "x\ty", "z"]
MORE_KEYS = ["m", "é", "z"]
NESTED = ["address", "port", "n"]


def _string(text: str, ascii_only: bool, slash: bool) -> str:
    out = json.dumps(text, ensure_ascii=ascii_only)
    return out.replace("/", "\\/") if slash else out


strings = st.builds(
    _string,
    st.sampled_from(["GET", "/api/v1/x", "é", 'say "hi"', "tab\there", "null", '"n":'])
    | st.text(max_size=5),
    st.integers(0, 4).map(lambda n: n == 0),
    st.integers(0, 9).map(lambda n: n == 0),
)
ints = st.sampled_from(["0", "1", "-1", "23", "24", "255", "256", "-257", "65536", "-0"]) | (
    st.integers(-(2**63), 2**63 - 1).map(str)
)
floats = st.sampled_from(["-0.0", "0.0", "2.0", "1e2", "1.5", "-2.5e-3"]) | st.floats(
    allow_nan=False, allow_infinity=False
).map(repr)
# Each key of a body holds one kind of value (so pyarrow infers a struct), now and then
# null, an integer past 64 bits or a value of another kind.
KINDS = {
    "int": ints,
    "number": ints | floats,
    "string": strings,
    "bool": st.sampled_from(["true", "false"]),
    "list": st.lists(ints, max_size=2).map(lambda items: "[" + ",".join(items) + "]"),
}
odd = st.sampled_from(
    ["null", "null", "18446744073709551616", "-9223372036854775809", '"s"', "1E400"]
)


@st.composite
def objects(draw: st.DrawFn, kinds: dict[str, str], keys: list[str]) -> str:
    chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=4))
    if draw(st.integers(0, 3)):  # mostly in one order, as a serializer writes them
        chosen = [key for key in keys if key in chosen]
    parts = []
    for key in chosen:
        if kinds[key] == "object":
            value = draw(objects(kinds, NESTED))
        elif draw(st.integers(0, 9)) == 0:
            value = draw(odd)
        else:
            value = draw(KINDS[kinds[key]])
        colon = draw(st.sampled_from([":"] * 12 + [": ", " :"]))
        key_text = _string(key, draw(st.integers(0, 9)) == 0, draw(st.integers(0, 9)) == 0)
        parts.append(key_text + colon + value)
    return "{" + ",".join(parts) + "}"


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    common = ["int", "number", "string", "bool"] * 3
    kinds = {k: draw(st.sampled_from([*common, "list"])) for k in [*KEYS, *NESTED, *MORE_KEYS]}
    kinds["client"] = "object"
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        fields = []
        if draw(st.booleans()):
            fields.append('"service":' + draw(strings))
        for name, keys in (("attrs", KEYS), ("more", MORE_KEYS)):
            shape = draw(st.integers(0, 19))
            if shape == 0:
                continue
            value = draw(odd) if shape == 1 else draw(objects(kinds, keys))
            fields.append(f'"{name}":{value}')
        lines.append("{" + ",".join(draw(st.permutations(fields))) + "}")
    return ("\n".join(lines) + "\n").encode()


def _same_as_slow(body: bytes) -> None:
    slow = coerce_rows(body, COLUMNS, ingest_time_ns=INGEST).batch
    fast = coerce_fast(body, COLUMNS, frozenset(), INGEST)
    if fast is not None:
        assert fast.batch.equals(slow), body  # byte-identical CBOR, every column


@given(bodies())
def test_fast_path_builds_the_slow_readers_cbor(body: bytes) -> None:
    try:
        _same_as_slow(body)
    except IngestError:  # the slow reader refuses a body (1E400): the fast path must too
        assert coerce_fast(body, COLUMNS, frozenset(), INGEST) is None


@given(bodies())
def test_rows_the_encoder_vouches_for_are_byte_identical(body: bytes) -> None:
    lines = layout(body)
    try:
        table = pj.read_json(io.BytesIO(body))
    except pa.ArrowInvalid:  # no one type per field, or 1E400: the encoder is never asked
        return
    for name in ("attrs", "more"):
        if name not in table.column_names:
            continue
        values, exact = encode_dynamic(table.column(name).combine_chunks(), lines.lines)
        for text, value, vouched in zip(
            lines.lines.to_pylist(), values.to_pylist(), exact.to_pylist(), strict=True
        ):
            if vouched:
                parsed = parse_line(text, 1).get(name)
                assert value == (None if parsed is None else cbor2.dumps(parsed)), text


def test_typical_log_attributes_need_no_python() -> None:
    rows = [
        {
            "service": f"svc-{i}",
            "attrs": {
                "http.method": "GET",
                "http.status_code": 200 + i,
                "user.id": f"user-{i * 7919}",
                "url.path": f"/api/v1/cart/{i}",
                "ratio": i + 0.5,
                "ok": i % 2 == 0,
                "client": {"address": f"10.0.0.{i}", "port": -i * 1000},
            },
        }
        for i in range(300)
    ]
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    table = pj.read_json(io.BytesIO(body))
    values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.false_count == 0
    assert values.to_pylist() == [cbor2.dumps(r["attrs"]) for r in rows]
    _same_as_slow(body)


def test_rows_with_traps_are_left_to_python() -> None:
    lines = [
        '{"attrs":{"a":1,"b":"x"}}',
        '{"attrs":{"b":"y","a":2}}',  # another key order
        '{"attrs":{"a":null,"b":"z"}}',  # an explicit null
        '{"attrs":{"a":2.5,"b":"w"}}',  # a is double now: 1 and 2 were integers
        '{"attrs":{"a":3,"b":"\\u0077"}}',  # a \\u escape
        '{"attrs":{"a" : 4,"b":"v"}}',  # a space before the colon
        '{"a":5,"attrs":{"b":"u"}}',  # "a": outside the object
        '{"a":6,"attrs":{"b":"t","\\u0061":7.5}}',  # the key a, written otherwise, after b
    ]
    body = ("\n".join(lines) + "\n").encode()
    table = pj.read_json(io.BytesIO(body))
    _, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.to_pylist() == [False, False, False, True, False, False, False, False]
    _same_as_slow(body)


def test_keys_with_a_blank_before_the_colon_are_found() -> None:
    """A key written ``"a" :`` is a key of the row: before it was looked for with its
    blank, a null there read as absent, and its order went unchecked."""
    lines = [
        '{"attrs":{"a":"x","b":"y"}}',
        '{"attrs":{"a" :null,"b":"s"}}',  # an explicit null
        '{"attrs":{"b":"r","a"\t:"q"},"a":9}',  # after b, and "a": elsewhere in the line
        '{"attrs":{"a"\r :"p","b":"o"}}',
    ]
    body = ("\n".join(lines) + "\n").encode()
    table = pj.read_json(io.BytesIO(body))
    values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.to_pylist() == [True, False, False, True]
    assert values[3].as_py() == cbor2.dumps({"a": "p", "b": "o"})
    _same_as_slow(body)


def test_nested_keys_out_of_order_are_left_to_python() -> None:
    """The key checks of every nesting level run together (one pass over the lines)."""
    nested = [
        '{"attrs":{"a":1,"c":{"x":1,"y":"p"}}}',
        '{"attrs":{"a":2,"c":{"y":"q","x":2}}}',  # nested keys in another order
        '{"attrs":{"c":{"x":3},"a":3}}',  # the nested object before a
        '{"attrs":{"c":{"y":"r"}}}',
        '{"attrs":{"a":6,"c":{"x":6,"y":null}}}',  # a nested explicit null
    ]
    body = ("\n".join(nested) + "\n").encode()
    table = pj.read_json(io.BytesIO(body))
    _, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.to_pylist() == [True, False, False, True, False]
    _same_as_slow(body)


def test_rows_of_few_and_of_many_key_shapes_are_checked_alike() -> None:
    """Rows with the same keys and rows of 31 key shapes: the same rows are vouched for."""
    keys = [f"k{i}" for i in range(5)]
    good = [{k: f"v{i}" for j, k in enumerate(keys) if (i >> j) & 1} for i in range(1, 32)]
    traps = [
        '{"attrs":{"k0":"a","k1":null}}',  # an explicit null
        '{"attrs":{"k1":"a","k0":"b"}}',  # another order
        '{"attrs":{"k2":"a"},"more":{"k2":"b"}}',  # a key's text twice in the line
        '{"k2":"x","attrs":{"k0":"a"}}',  # a key's text outside the object
    ]
    for count in (4, 31):
        lines = [json.dumps({"attrs": row}) for row in good[:count]] + traps
        body = ("\n".join(lines) + "\n").encode()
        table = pj.read_json(io.BytesIO(body))
        values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
        assert exact.to_pylist() == [True] * count + [False] * len(traps)
        assert values.to_pylist()[:count] == [cbor2.dumps(row) for row in good[:count]]
        _same_as_slow(body)


def test_a_key_name_at_two_levels_is_vouched_for_in_its_place() -> None:
    """The keys a line writes are matched with the struct's in order, whatever the level:
    the same name twice is no reason to leave a row to Python, its misplacement is."""
    lines = [
        '{"attrs":{"id":1,"user":{"id":2}}}',
        '{"attrs":{"id":3,"user":{}}}',
        '{"attrs":{"user":{"id":4}}}',
        '{"attrs":{"user":{"id":5},"id":6}}',  # another order
        '{"attrs":{"id":null,"user":{"id":7}}}',  # an explicit null
    ]
    body = ("\n".join(lines) + "\n").encode()
    table = pj.read_json(io.BytesIO(body))
    values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.to_pylist() == [True, True, True, False, False]
    assert values.to_pylist()[:3] == [cbor2.dumps(json.loads(t)["attrs"]) for t in lines[:3]]
    _same_as_slow(body)


def test_colons_inside_strings_are_no_keys() -> None:
    lines = [
        '{"attrs":{"a":"a :","b":" :"}}',
        '{"attrs":{"a":"\\"b\\":","b":"x"}}',  # escaped quotes: Python's
        '{"attrs":{"a":"x","b":"y"},"c":":"}',
    ]
    body = ("\n".join(lines) + "\n").encode()
    table = pj.read_json(io.BytesIO(body))
    values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert exact.to_pylist() == [True, False, True]
    assert values[0].as_py() == cbor2.dumps({"a": "a :", "b": " :"})
    _same_as_slow(body)


def test_a_struct_wider_than_the_key_bound_is_left_to_python() -> None:
    rows = [{"attrs": {f"k{i}": i, f"k{i + 1}": "v"}} for i in range(0, MAX_KEYS + 2, 2)]
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    table = pj.read_json(io.BytesIO(body))
    values, exact = encode_dynamic(table.column("attrs").combine_chunks(), layout(body).lines)
    assert (exact.true_count, values.null_count) == (0, len(rows))
    _same_as_slow(body)


def _extent(  # type: ignore[no-untyped-def]
    batch: pa.RecordBatch,
    parsed: dict[str, ParsedDynamic],
    block_rows: int,
    bound: int,
    fmt: SegmentFormat | None = None,
):
    """An extent of ``batch`` (with ``parsed``): its write result, its bytes, its rows."""
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp))
        fmt = fmt or ParquetFormat(block_rows, bound)
        writer = fmt.start_extent(store, batch.schema, "t")
        writer.append(batch, parsed)
        result = writer.finish()
        data = (Path(tmp) / result.object_path).read_bytes()
        reader = fmt.open_extent(store, result.object_path)
        rows = pa.Table.from_batches(reader.read_blocks(reader.pruned_blocks(None)))
        reader.close()
    return result, data, rows


def _same_extents(body: bytes, block_rows: int, bound: int) -> None:
    """The extent written from the parsed columns -- the batch holding no bytes for the rows
    they vouch for, as the write path coerces -- equals the one from decoded CBOR: paths,
    block and column stats, shredded sub-columns, byte for byte; a format that does not
    shred (tlm) reads the same rows back."""
    whole = coerce_fast(body, COLUMNS, frozenset(), INGEST)
    fast = coerce_fast(body, COLUMNS, frozenset(), INGEST, deferred=True)
    assert whole is not None and fast is not None
    slow, slow_bytes, slow_rows = _extent(whole.batch, {}, block_rows, bound)
    quick, quick_bytes, quick_rows = _extent(fast.batch, fast.parsed, block_rows, bound)
    assert (quick.present_paths, quick.column_stats) == (slow.present_paths, slow.column_stats)
    assert quick.block_count == slow.block_count
    footer = pq.read_metadata(io.BytesIO(quick_bytes))
    assert footer.metadata == pq.read_metadata(io.BytesIO(slow_bytes)).metadata
    assert pq.read_table(io.BytesIO(quick_bytes)).equals(pq.read_table(io.BytesIO(slow_bytes)))
    assert quick_bytes == slow_bytes
    assert quick_rows.equals(slow_rows) and slow_rows.equals(pa.Table.from_batches([whole.batch]))
    tlm = TlmFormat(block_rows)
    _, _, tlm_rows = _extent(fast.batch, fast.parsed, block_rows, bound, tlm)
    assert tlm_rows.equals(slow_rows)


@given(bodies(), st.integers(1, 4), st.integers(0, 6))
def test_extents_from_the_parsed_struct_equal_those_from_cbor(
    body: bytes, block_rows: int, bound: int
) -> None:
    if coerce_fast(body, COLUMNS, frozenset(), INGEST) is None:
        return  # the slow reader's batch carries no parsed columns
    _same_extents(body, block_rows, bound)


def test_typical_log_attributes_write_paths_and_shreds_without_decoding() -> None:
    rows = [
        {
            "attrs": {
                "http.method": ["GET", "POST"][i % 2],
                "user.id": f"user-{i * 7919}",
                "ratio": i + 0.5,
                **({"client": {"address": f"10.0.0.{i}", "port": i}} if i % 3 else {}),
                **({"late": True} if i > 250 else {}),
            },
            **({"more": {"m": "x" * (i % 4)}} if i % 5 else {}),
        }
        for i in range(300)
    ]
    rows[7]["attrs"]["ratio"] = 2.0  # an integral double: this row's CBOR comes from Python
    rows[9]["attrs"]["user.id"] = None  # an explicit null: also Python's
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    fast = coerce_fast(body, COLUMNS, frozenset(), INGEST)
    assert fast is not None and set(fast.parsed) == {"attrs", "more"}
    parsed = fast.parsed["attrs"]
    assert parsed.exact.false_count == 2
    found = leaves(parsed)
    assert found is not None
    assert sorted(leaf.path for leaf in found) == [
        ("client",),
        ("client", "address"),
        ("client", "port"),
        ("http.method",),
        ("late",),
        ("ratio",),
        ("user.id",),
    ]
    for block_rows, bound in ((100, 256), (128, 3), (1000, 0)):
        _same_extents(body, block_rows, bound)


def _nested(depth: int, leaf: object) -> object:
    return leaf if depth == 0 else {f"d{depth}": _nested(depth - 1, leaf), f"s{depth}": depth}


def test_parsed_extents_past_the_path_depth_scalars_and_wide_structs() -> None:
    bodies = [  # (rows, how many of them Arrow's encoder vouches for)
        ([{"attrs": _nested(10, i), "more": i * 3} for i in range(40)], 40),  # deeper than 8
        ([{"attrs": f"text {i}", "more": i % 2 == 0} for i in range(40)], 40),  # scalars
        ([{"attrs": {f"k{i % 40}": i, "w": "x"}} for i in range(80)], 0),  # past MAX_KEYS
    ]
    for rows, exact in bodies:
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
        fast = coerce_fast(body, COLUMNS, frozenset(), INGEST)
        assert fast is not None and fast.parsed["attrs"].exact.true_count == exact
        for block_rows, bound in ((16, 256), (7, 4)):
            _same_extents(body, block_rows, bound)


def _log_rows(count: int, offset: int = 0) -> bytes:
    rows = [
        {
            "attrs": {
                "http.method": ["GET", "POST"][i % 2],
                "user.id": f"user-{i * 7919}",
                "client": {"address": f"10.0.0.{i % 256}", "port": i},
            },
        }
        for i in range(offset, offset + count)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_rows_whose_paths_are_all_shredded_are_never_encoded_as_cbor(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The write path's coercion leaves the vouched rows' CBOR out and the Parquet writer
    stores them as skeletons: no CBOR of theirs is built; past the shredded paths' bound,
    only the rows holding an unshredded path are encoded, and they read back whole."""
    body = _log_rows(300)
    encoded: list[int] = []
    real = parsed_module.cbor

    def counting(values: pa.Array) -> pa.Array:
        encoded.append(len(values))
        return real(values)

    monkeypatch.setattr(parsed_module, "cbor", counting)
    fast = coerce_fast(body, COLUMNS, frozenset(), INGEST, deferred=True)
    assert fast is not None and fast.parsed["attrs"].exact.false_count == 0
    assert set(fast.batch.column("attrs").to_pylist()) == {b""}
    _, data, rows = _extent(fast.batch, fast.parsed, 128, 256)
    assert encoded == []
    assert pq.read_table(io.BytesIO(data)).column("attrs").null_count == 300
    expected = [cbor2.dumps(json.loads(line)["attrs"]) for line in body.splitlines()]
    assert rows.column("attrs").to_pylist() == expected
    body = body + b'{"attrs":{"http.method":"PUT","rare":1}}\n'
    fast = coerce_fast(body, COLUMNS, frozenset(), INGEST, deferred=True)
    assert fast is not None
    _, _, rows = _extent(fast.batch, fast.parsed, 128, 4)  # "rare" is past the 4 paths
    assert encoded == [1]
    assert rows.column("attrs")[-1].as_py() == cbor2.dumps({"http.method": "PUT", "rare": 1})


def test_appends_of_other_parsed_types_or_none_read_back_whole() -> None:
    """An extent of several appends: parsed structs of another type, or a batch without
    parsed columns, are kept as CBOR; every row reads back as the slow reader wrote it."""
    parts = [_log_rows(40), b'{"attrs":{"n":1}}\n' * 30, _log_rows(20, 40), _log_rows(10, 60)]
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(Path(tmp))
        for fmt in (ParquetFormat(32), TlmFormat(32)):
            expected = []
            writer = fmt.start_extent(store, arrow_schema(tuple(COLUMNS)), "t")
            for i, part in enumerate(parts):
                deferred = i != 2  # the third: no parsed columns, the batch holds the CBOR
                fast = coerce_fast(part, COLUMNS, frozenset(), INGEST, deferred=deferred)
                assert fast is not None
                writer.append(fast.batch, fast.parsed if deferred else {})
                slow = coerce_rows(part, COLUMNS, ingest_time_ns=INGEST)
                expected += slow.batch.column("attrs").to_pylist()
            result = writer.finish()
            reader = fmt.open_extent(store, result.object_path)
            got = [b.column("attrs") for b in reader.read_blocks(reader.pruned_blocks(None))]
            assert pa.chunked_array(got).to_pylist() == expected


PROPS_FIELDS = frozenset(KEYS) - {"service"}


@st.composite
def bodies_with_overflow(draw: st.DrawFn) -> bytes:
    """Lines whose unknown top-level fields go to ``props`` (some with a ``props`` object
    of their own, which the row's fields merge into)."""
    common = ["int", "number", "string", "bool"] * 3
    kinds = {k: draw(st.sampled_from([*common, "list"])) for k in [*KEYS, *NESTED, *MORE_KEYS]}
    kinds["client"] = "object"
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        inner = draw(objects(kinds, sorted(PROPS_FIELDS)))[1:-1]
        fields = [inner] if inner else []
        if draw(st.integers(0, 5)) == 0:
            fields.append('"props":' + draw(objects(kinds, MORE_KEYS)))
        lines.append("{" + ",".join(draw(st.permutations(fields))) + "}")
    return ("\n".join(lines) + "\n").encode()


@given(bodies_with_overflow())
def test_props_from_overflow_fields_match_the_slow_reader(body: bytes) -> None:
    try:
        slow = coerce_rows(body, COLUMNS, props_fields=PROPS_FIELDS, ingest_time_ns=INGEST)
    except IngestError:
        assert coerce_fast(body, COLUMNS, PROPS_FIELDS, INGEST) is None
        return
    fast = coerce_fast(body, COLUMNS, PROPS_FIELDS, INGEST)
    if fast is not None:
        assert fast.batch.equals(slow.batch), body


def test_typical_overflow_fields_build_props_without_python(monkeypatch) -> None:
    rows = [
        {
            "service": f"svc-{i}",
            "http.method": "GET",
            "user.id": f"user-{i * 7919}",
            **({"n": i} if i % 3 else {}),
            "client": {"address": f"10.0.0.{i}", "port": i},
        }
        for i in range(300)
    ]
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()

    def no_python(*args: object) -> None:
        raise AssertionError("props converted in Python")

    monkeypatch.setattr("kyma.ingest.coerce._values.props_value", no_python)
    fast = coerce_fast(body, COLUMNS, PROPS_FIELDS, INGEST)
    assert fast is not None
    props = [cbor2.loads(v) for v in fast.batch.column("props").to_pylist()]
    assert props == [{k: v for k, v in r.items() if k != "service"} for r in rows]
