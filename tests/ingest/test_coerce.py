"""NDJSON coercion: the seed's table row by row, and the fast path against the slow reader."""

from __future__ import annotations

import json
import pickle
import struct
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import cbor2
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import IngestError
from kyma.engine.types import (
    DEFAULT_COLUMNS,
    TIMESTAMP,
    Column,
    KymaType,
    arrow_schema,
    parse_timestamp,
)
from kyma.ingest.coerce import Coerced, coerce_ndjson
from kyma.ingest.coerce._fast import coerce_fast
from kyma.ingest.coerce._slow import coerce_rows

INGEST = 1_700_000_000_123_456_789
NOON = 1_714_564_800_000_000_000  # 2024-05-01T12:00:00Z
INT64_MAX = 2**63 - 1


Columns = tuple[Column, ...]


def table(**types: str) -> Columns:
    return DEFAULT_COLUMNS + tuple(Column(n, KymaType.parse(t)) for n, t in types.items())


def canonical(batch: pa.RecordBatch) -> list[object]:
    """Every value, floats by bit pattern (so -0.0 != 0.0), timestamps as integers."""
    out: list[object] = [batch.schema]
    for field, array in zip(batch.schema, batch.columns, strict=True):
        if field.type == TIMESTAMP:
            array = array.cast(pa.int64())
        out.append(_exact(array.to_pylist()))
    return out


def _exact(value: object) -> object:
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return value


def read(
    reader: Callable[..., Coerced], body: bytes, columns: Columns, props: Sequence[str] = ()
) -> list[object] | None:
    """The canonical batch a reader makes of a body, or None if it raises IngestError."""
    try:
        return canonical(reader(body, columns, props_fields=props, ingest_time_ns=INGEST).batch)
    except IngestError:
        return None


def coerce(body: bytes, columns: Columns, **kw: object) -> Coerced:
    """coerce_ndjson, checked against the slow reader."""
    fast = coerce_ndjson(body, columns, ingest_time_ns=INGEST, **kw)
    slow = coerce_rows(body, columns, ingest_time_ns=INGEST, **kw)
    assert canonical(fast.batch) == canonical(slow.batch)
    assert fast.unknown_keys == slow.unknown_keys
    assert fast.rows == slow.rows == fast.batch.num_rows
    assert fast.batch.schema == arrow_schema(columns)
    return fast


def values(kind: str, *json_values: str) -> list[object]:
    """Column ``c`` of type ``kind`` after coercing one row per JSON value."""
    body = "".join(f'{{"c": {v}}}\n' for v in json_values).encode()
    array = coerce(body, table(c=kind)).batch.column("c")
    return (array.cast(pa.int64()) if array.type == TIMESTAMP else array).to_pylist()


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


COERCION_TABLE = [
    ("bool", "true", True),
    ("bool", "false", False),
    ("bool", "null", None),
    ("int", "7", 7),
    ("int", "-2147483648", -(2**31)),
    ("int", "2147483647", 2**31 - 1),
    ("int", "-0", 0),
    ("long", "9223372036854775807", INT64_MAX),
    ("long", "-9223372036854775808", -(2**63)),
    ("real", "1.5", 1.5),
    ("real", "2", 2.0),
    ("real", "1E2", 100.0),
    ("real", "1e308", 1e308),
    ("real", "5e-324", 5e-324),
    ("real", "1e-400", 0.0),
    ("real", "123456789012345678901234567890", 1.2345678901234568e29),
    ("float4", "0.1", f32(0.1)),
    ("float4", "16777217", 16777216.0),
    ("float4", "-3.4028235e38", f32(-3.4028235e38)),
    ("float4", "1e-45", f32(1e-45)),
    ("float4", "-0.0", -0.0),
    ("float4", "null", None),
    ("string", '"x"', "x"),
    ("string", '"\\u00fc\\n\\ud83d\\ude00"', "ü\n😀"),
    ("string", "7", "7"),
    ("string", "-0", "0"),
    ("string", "1.5", "1.5"),
    ("string", "1e2", "100.0"),
    ("string", "true", "true"),
    ("string", '{"a": [1, "é", null]}', '{"a":[1,"é",null]}'),
    ("string", "[]", "[]"),
    ("timestamp", '"2024-05-01T12:00:00Z"', NOON),
    ("timestamp", '"2024-05-01T12:00:00.123456789+02:00"', NOON - 7200 * 10**9 + 123456789),
    ("timestamp", '"2024-05-01t12:00:00z"', NOON),
    ("timestamp", '"2024-05-01 12:00:00Z"', NOON),
    ("timestamp", '"2024-05-01T12:00:00"', NOON),
    ("timestamp", '"2024-05-01T12:00:00.5"', NOON + 500_000_000),
    ("timestamp", '"2024-05-01T12:00:00-00:30"', NOON + 1800 * 10**9),
    ("timestamp", '"2024-05-01T12:00:00+0530"', NOON - 19800 * 10**9),
    ("timestamp", '"2024-05-01T12:00:00+05"', NOON - 18000 * 10**9),
    ("timestamp", '"2024-05-01T12:30"', NOON + 1800 * 10**9),
    ("timestamp", '"2024-05-01T12"', NOON),
    ("timestamp", '"2024-05-01"', NOON - 12 * 3600 * 10**9),
    ("timestamp", '"2262-04-11T23:47:16.854775807Z"', INT64_MAX),
    ("timestamp", '"1677-09-21T00:12:43.145224192Z"', -(2**63)),
    ("timestamp", "1714564800000000000", NOON),
    ("timestamp", "-5", -5),
    ("timestamp", "9223372036854775807", INT64_MAX),
    ("timestamp", "null", None),
    ("vector(3)", "[1, 2, 3]", [1.0, 2.0, 3.0]),
    ("vector(3)", "[0.1, 1e38, -2.5]", [f32(0.1), f32(1e38), -2.5]),
    ("vector(3)", "null", None),
    ("dynamic", '{"a": [1, null, "x"]}', cbor2.dumps({"a": [1, None, "x"]})),
    ("dynamic", "[1, 2]", cbor2.dumps([1, 2])),
    ("dynamic", '"x"', cbor2.dumps("x")),
    ("dynamic", "1.5", cbor2.dumps(1.5)),
    ("dynamic", "false", cbor2.dumps(False)),
    ("dynamic", "-0", cbor2.dumps(0)),
    ("dynamic", "null", None),
]


@pytest.mark.parametrize(("kind", "text", "expected"), COERCION_TABLE)
def test_coercion_table(kind: str, text: str, expected: object) -> None:
    assert values(kind, text) == [expected]
    assert values(kind, text, text) == [expected, expected]  # and the same value twice


def test_negative_zero_keeps_its_sign_in_real_and_vector_columns() -> None:
    signs = [v.hex()[0] for v in values("real", "-0", "-0.0", "0")]
    assert signs == ["-", "-", "0"]
    (vector,) = values("vector(2)", "[-0, 0]")
    assert [v.hex()[0] for v in vector] == ["-", "0"]


def test_missing_fields_are_null_for_every_type() -> None:
    kinds = ["bool", "int", "long", "real", "string", "timestamp", "vector(2)", "dynamic"]
    columns = table(**{f"c{i}": kind for i, kind in enumerate(kinds)})
    batch = coerce(b'{"other": 1}\n', columns).batch
    for name in batch.schema.names[1:]:
        assert batch.column(name).to_pylist() == [None], name


def test_timestamp_defaults_to_ingest_time_when_missing_or_null() -> None:
    body = b'{"_timestamp": null}\n{}\n{"_timestamp": "2024-05-01T12:00:00Z"}\n{"_timestamp": 5}\n'
    got = coerce(body, table()).batch.column("_timestamp").cast(pa.int64()).to_pylist()
    assert got == [INGEST, INGEST, NOON, 5]


def test_unknown_fields_are_dropped_and_columns_keep_table_order() -> None:
    columns = table(z="long", a="string")
    batch = coerce(b'{"a": "x", "unknown": [1, {"b": 2}], "z": 3}\n', columns).batch
    assert batch.schema.names == ["_timestamp", "props", "z", "a"]
    assert batch.column("z").to_pylist() == [3]
    assert batch.column("props").to_pylist() == [None]


def props_of(body: bytes, props_fields: list[str], **types: str) -> list[object]:
    got = coerce(body, table(**types), props_fields=props_fields).batch.column("props")
    return [None if v is None else cbor2.loads(v) for v in got.to_pylist()]


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1, "z": 2}\n{"y": "x", "a": 2}\n{"p": 1}\n',
        b'{"z": 1}\n{"z": {"n": 1}}\n{"y": 1, "d": [1]}\n',  # inference fails on z
    ],
)
def test_unknown_keys_are_reported_in_order_of_first_appearance(body: bytes) -> None:
    columns = table(a="long", d="dynamic")
    assert coerce(body, columns, props_fields=["p"]).unknown_keys == ["z", "y"]


def test_props_overflow_fields_are_stored_in_props() -> None:
    body = b'{"User": "ann", "a.b": [1, 2], "n": 1}\n{"n": 2}\n{"a.b": null}\n'
    assert props_of(body, ["User", "a.b"], n="long") == [{"User": "ann", "a.b": [1, 2]}, None, None]


def test_props_overflow_merges_into_the_row_props_object() -> None:
    body = (
        b'{"props": {"k": 1}, "X": true}\n'
        b'{"props": null, "X": 2}\n'
        b'{"props": {}}\n'
        b'{"props": {"k": {"deep": [null]}}}\n'
        b'{"X": null, "props": {"X": 3}}\n'
    )
    assert props_of(body, ["X"]) == [
        {"k": 1, "X": True},
        {"X": 2},
        {},
        {"k": {"deep": [None]}},
        {"X": 3},
    ]


def test_a_props_field_that_is_a_column_goes_to_its_column() -> None:
    batch = coerce(b'{"n": 4}\n', table(n="long"), props_fields=["n"]).batch
    assert batch.column("n").to_pylist() == [4]
    assert batch.column("props").to_pylist() == [None]


def test_props_overflow_clashing_with_props_names_the_field() -> None:
    body = b'{}\n{"props": {"X": 1}, "X": 2}\n'
    with pytest.raises(IngestError) as info:
        coerce_ndjson(body, table(), props_fields=["X"], ingest_time_ns=0)
    assert (info.value.line, info.value.field) == (2, "X")
    assert str(info.value) == "line 2, field 'X': the field is also a key of 'props'"


def test_props_fields_need_a_props_column() -> None:
    columns = (Column("n", KymaType("long")),)
    with pytest.raises(IngestError, match="belong in 'props'"):
        coerce_ndjson(b'{"X": 1}\n', columns, props_fields=["X"], ingest_time_ns=0)


def test_a_non_nullable_column_rejects_missing_values() -> None:
    columns = (*DEFAULT_COLUMNS, Column("n", KymaType("long"), nullable=False))
    assert coerce(b'{"n": 1}\n', columns).batch.column("n").to_pylist() == [1]
    with pytest.raises(IngestError) as info:
        coerce_ndjson(b'{"n": 1}\n{"m": 1}\n', columns, ingest_time_ns=0)
    assert (info.value.line, info.value.field) == (2, "n")


def test_blank_lines_crlf_bom_and_missing_final_newline() -> None:
    body = b'\xef\xbb\xbf{"n": 1}\r\n\r\n   \n\t\n{"n": 2}\r\n{"n": 3}'
    coerced = coerce(body, table(n="long"))
    assert coerced.rows == 3
    assert coerced.batch.column("n").to_pylist() == [1, 2, 3]


TS = "expected timestamp (RFC 3339 string or epoch-ns integer)"
MESSAGES = [
    (
        b'{"i": 1}\n{"i": 3000000000}\n',
        "line 2, field 'i': expected int (Int32), got 3000000000 (out of range)",
    ),
    (b'{}\n{"v": [1, 2]}\n', "line 2, field 'v': expected vector(3), got 2 numbers"),
    (
        b'{"v": [1, null, 3]}\n',
        "line 1, field 'v': expected vector(3), got null at index 1 (not a number)",
    ),
    (b'{"t": "soon"}\n', f"line 1, field 't': {TS}, got 'soon'"),
    (b'{"t": "0001-01-01"}\n', f"line 1, field 't': {TS}, got '0001-01-01' (out of range)"),
    (
        b'{"s": "' + b"x" * 200 + b'", "i": "7"}\n',
        "line 1, field 'i': expected int (Int32), got '7'",
    ),
    (b'{"b": 1}\n', "line 1, field 'b': expected bool, got 1"),
    (b'{"i": 1, "i": 2}\n', "line 1, field 'i': duplicate key 'i'"),
    (b'{"r": NaN}\n', "line 1, field 'r': NaN is not a JSON number"),
    (b'{"r": 1e999}\n', "line 1, field 'r': number 1e999 does not fit a double"),
    (
        b'{"f": 1}\n{"f": 3.5e38}\n',
        "line 2, field 'f': expected float4 (Float32), got 3.5e+38 (out of range)",
    ),
    (b'{"f": -1e-46}\n', "line 1, field 'f': expected float4 (Float32), got -1e-46 (out of range)"),
    (b'{"f": "1"}\n', "line 1, field 'f': expected float4 (Float32), got '1'"),
    (b'{"i": 1}\n\n[1]\n', "line 3: expected a JSON object, got an array"),
    (
        b'{"i": 1}\n\n{"i": 1,}\n',
        "line 3: invalid JSON: Expecting property name enclosed in double quotes (column 9)",
    ),
    (b'{"i": 1}\n{"s": "\xff"}\n', "line 2: invalid UTF-8 at byte 7 of the line"),
    (b"\n \n", "empty body: no JSON objects"),
]


@pytest.mark.parametrize(("body", "message"), MESSAGES)
def test_error_messages_are_precise(body: bytes, message: str) -> None:
    columns = table(
        b="bool", i="int", s="string", t="timestamp", v="vector(3)", r="real", f="float4"
    )
    with pytest.raises(IngestError) as info:
        coerce_ndjson(body, columns, ingest_time_ns=0)
    assert str(info.value) == message


def test_long_offending_values_are_cut_short() -> None:
    with pytest.raises(IngestError) as info:
        coerce_ndjson(b'{"i": "' + b"y" * 500 + b'"}\n', table(i="int"), ingest_time_ns=0)
    assert len(str(info.value)) < 140
    assert str(info.value).endswith("...")


def test_ingest_error_pickles_with_line_and_field() -> None:
    error = IngestError("line 3, field 'code': expected int (Int32), got 'x'", 3, "code")
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.line, copy.field) == (str(error), 3, "code")
    assert isinstance(copy, ValueError)


def test_timestamp_grammar_round_trips_through_datetime() -> None:
    moment = datetime(2001, 2, 3, 4, 5, 6, 789000, tzinfo=UTC)
    expected = int(moment.timestamp()) * 10**9 + 789_000_000
    for text in (moment.isoformat(), moment.isoformat(sep=" "), "2001-02-03T04:05:06.789Z"):
        assert parse_timestamp(text) == expected
    for text in ("2001-02-03T04:05:06.789 Z", "2001-02-29", "2001-02-03T04:05", "x"):
        assert (parse_timestamp(text) is None) == (text != "2001-02-03T04:05")


LOG_COLUMNS = table(level="string", status="int", latency="real", ok="bool", msg="string")


def log_line(i: int) -> dict[str, object]:
    return {
        "_timestamp": f"2024-05-01T12:00:{i % 60:02d}.{i:06d}Z",
        "level": ["info", "warn"][i % 2],
        "status": 200 + i % 5,
        "latency": i / 7,
        "ok": i % 3 == 0,
        "msg": f"request {i} ü",
        "extra": {"n": i},
    }


def ndjson(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.mark.parametrize(
    ("name", "body", "columns", "props_fields"),
    [
        ("scalar logs", ndjson([log_line(i) for i in range(50)]), LOG_COLUMNS, []),
        ("epoch-ns timestamps", b'{"_timestamp": 5}\n{"_timestamp": null}\n', table(), []),
        ("integers in a string column", b'{"s": 1}\n{"s": -0}\n{}\n', table(s="string"), []),
        ("bools in a string column", b'{"s": true}\n{"s": false}\n', table(s="string"), []),
        ("floats in a string column", b'{"s": 1}\n{"s": 1.0}\n', table(s="string"), []),
        ("objects in a string column", b'{"s": {"a": 1}}\n{"s": {}}\n', table(s="string"), []),
        ("float vectors", b'{"v": [1, 2.5]}\n{"v": null}\n{}\n', table(v="vector(2)"), []),
        ("int vectors", b'{"v": [1, 2]}\n{"v": [-3, 4]}\n', table(v="vector(2)"), []),
        ("props in some rows", b'{"a": 1}\n{"props": {"k": [1]}}\n{"X": 2}\n', table(), ["X"]),
        ("dynamic values", b'{"d": [1]}\n{"d": [{"x": 1}]}\n{}\n', table(d="dynamic"), []),
        ("dynamic of mixed types", b'{"d": 1}\n{"d": {"x": [1, "y"]}}\n', table(d="dynamic"), []),
        ("several blocks", ndjson([log_line(i) for i in range(12_000)]), LOG_COLUMNS, ["extra"]),
    ],
)
def test_the_fast_path_reads_common_shapes(
    name: str, body: bytes, columns: Columns, props_fields: list[str]
) -> None:
    fast = coerce_fast(body, columns, frozenset(props_fields), INGEST)
    assert fast is not None, name
    assert canonical(fast.batch) == read(coerce_rows, body, columns, props_fields)
    slow = coerce_rows(body, columns, props_fields=props_fields, ingest_time_ns=INGEST)
    assert fast.unknown_keys == slow.unknown_keys


@pytest.mark.parametrize(
    "body",
    [
        b'{"v": [null, 1.5]}\n',  # pyarrow's inference drops leading nulls (apache/arrow#51305)
        b'{"d": [null, {"a": 1}]}\n',
        b'{"d": 1}\n{"d": {"x": [1, "y"]}}\n{"d": [true]}\n',  # no type to infer
        b'{"d": 1, "u": 1}\n{"u": "x", "z": {"k": 1, "k": 2}}\n',  # dropped, yet a duplicate
        b'{"d": 1, "u": 1}\n{"u": "x", "z": [1.7976931348623159e308]}\n',  # rounds to inf
        b'{"d": ' + b"[" * 300 + b"]" * 300 + b"}\n",  # deeper than pyarrow is trusted with
        b'{"s": 1}\n{"s": "x"}\n',
        b'{"_timestamp": "2024-05-01t12:00:00z"}\n',
        b'{"s": "a"} {"s": "b"}\n',
    ],
)
def test_bodies_pyarrow_misreads_still_coerce_like_the_slow_reader(body: bytes) -> None:
    columns = table(v="vector(2)", d="dynamic", s="string")
    fast = coerce_fast(body, columns, frozenset(), INGEST)
    expected = read(coerce_rows, body, columns)
    assert fast is None or canonical(fast.batch) == expected
    assert read(coerce_ndjson, body, columns) == expected


@pytest.mark.parametrize(
    "body",
    [
        b"null\n",  # crashes pyarrow as a first line (apache/arrow#47409)
        b'{"a": 1}\nnull\n',  # read by pyarrow as an all-null row
        b'{"a": 1}{"a": 2}\n',  # read by pyarrow as two rows
        b'{"a":\n1}\n',  # read by pyarrow as one row
        b'{"a": "\xff"}\n',
        b'{"a": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n",  # overflows pyarrow's stack
        b"\n \n",
    ],
)
def test_the_fast_path_never_accepts_a_body_pyarrow_misreads_or_crashes_on(body: bytes) -> None:
    assert coerce_fast(body, table(a="long"), frozenset(), 0) is None
    with pytest.raises(IngestError):
        coerce_ndjson(body, table(a="long"), ingest_time_ns=0)


# --- property: the fast path equals the slow reader -----------------------------------------

KINDS = ["bool", "int", "long", "real", "float4", "string", "timestamp", "vector(1)", "vector(3)"]
KINDS += ["dynamic"]
OVERFLOW = ["X", "y.z"]
keys = st.text(max_size=3).filter(lambda k: k not in OVERFLOW)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def timestamp_texts(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(min_value=datetime(1678, 1, 1), max_value=datetime(2261, 12, 31)))
    text = moment.strftime("%Y-%m-%d") + draw(st.sampled_from("Tt "))
    text += moment.strftime("%H:%M:%S")
    digits = draw(st.integers(0, 9))
    if digits:
        text += "." + f"{moment.microsecond:06d}{draw(st.integers(0, 999)):03d}"[:digits]
    zone = draw(st.sampled_from(["", "Z", "z", "+{h}:{m}", "-{h}{m}", "+{h}"]))
    hours, minutes = draw(st.integers(0, 23)), draw(st.integers(0, 59))
    return text + zone.format(h=f"{hours:02d}", m=f"{minutes:02d}")


def vectors(dim: int) -> st.SearchStrategy[list[object]]:
    number = st.floats(-3.4e38, 3.4e38) | st.integers(-(2**60), 2**60)
    return st.lists(number, min_size=dim, max_size=dim)


VALID = {
    "bool": st.booleans(),
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "real": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**80), 2**80),
    "float4": st.floats(width=32, allow_nan=False, allow_infinity=False)
    | st.integers(-(2**80), 2**80),
    "string": st.text(max_size=8) | json_values,
    "timestamp": timestamp_texts() | st.integers(-(2**63), 2**63 - 1),
    "vector(1)": vectors(1),
    "vector(3)": vectors(3),
    "dynamic": json_values,
    "props": st.dictionaries(keys, json_values, max_size=3),
}


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, Columns, list[str]]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5))
    columns = DEFAULT_COLUMNS + tuple(Column(f"c{i}", KymaType(k)) for i, k in enumerate(kinds))
    fields = {c.name: c.type.name for c in columns} | {"props": "props"}
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        row: dict[str, object] = {}
        for name in draw(st.permutations([*fields, *OVERFLOW, "unknown"])):
            if draw(st.booleans()):
                continue
            strategy = VALID.get(fields.get(name, ""), json_values)
            row[name] = draw(st.none() | strategy)
        rows.append(row)
    ascii_only = draw(st.booleans())
    lines = [json.dumps(r, ensure_ascii=ascii_only) for r in rows]
    separator = st.sampled_from(["\n", "\r\n", "\n\n", "\n \t\n"])
    body = "".join(line + draw(separator) for line in lines)
    return body.encode(), columns, draw(st.sampled_from([[], OVERFLOW]))


@given(bodies())
def test_fast_path_equals_slow_reader(case: tuple[bytes, Columns, list[str]]) -> None:
    body, columns, props_fields = case
    slow = read(coerce_rows, body, columns, props_fields)
    assert slow is not None
    fast = coerce_fast(body, columns, frozenset(props_fields), INGEST)
    assert fast is None or canonical(fast.batch) == slow
    assert read(coerce_ndjson, body, columns, props_fields) == slow
    if fast is not None:
        full = coerce_rows(body, columns, props_fields=props_fields, ingest_time_ns=INGEST)
        assert fast.unknown_keys == full.unknown_keys


def _out_of(low: int, high: int) -> st.SearchStrategy[str]:
    return (st.integers(high + 1, high * 2**8) | st.integers(low * 2**8, low - 1)).map(str)


BAD = {
    "bool": st.sampled_from(["1", "0", '"true"', "[true]", "1.0", "{}"]),
    "int": _out_of(-(2**31), 2**31 - 1) | st.sampled_from(["1.5", "1e2", "1.0", '"7"', "true"]),
    "long": _out_of(-(2**63), 2**63 - 1) | st.sampled_from(["0.5", '"1"', "false", "[1]"]),
    "real": st.sampled_from(['"1.5"', "true", "[1.5]", "1e400", "-1e999", "1" + "0" * 400]),
    "float4": st.sampled_from(['"1.5"', "true", "[1.5]", "3.5e38", "-1e39", "1e-46", "1e400"]),
    "string": st.sampled_from(['"\\ud800"', '"a\\udc00b"', '["\\ud800"]', '{"a": 1, "a": 2}']),
    "timestamp": st.text(max_size=12).filter(lambda t: parse_timestamp(t) is None).map(json.dumps)
    | st.sampled_from(["1.5", "true", "[1]", "9223372036854775808", '"0001-01-01T00:00:00Z"']),
    "vector(1)": st.sampled_from(["[]", "[1, 2]", '["x"]', "[true]", "[null]", "[1e39]", "[[1]]"]),
    "vector(3)": st.sampled_from(["[1, 2]", "[1, 2, 3, 4]", '[1, "2", 3]', "[1, 2, -1e40]", "{}"]),
    "dynamic": st.sampled_from(['{"a": {"b": 1, "b": 2}}', '[1, {"x": 1e400}]', '"\\udfff"']),
    "props": st.sampled_from(["[1]", '"x"', "5", "true", '{"a": [1, 2, 1e999]}']),
}
ANYWHERE = st.sampled_from(["NaN", "Infinity", "-Infinity", "[NaN]", '{"k": -Infinity}'])


@given(bodies(), st.data())
def test_an_invalid_value_raises_ingest_error_naming_line_and_field(
    case: tuple[bytes, Columns, list[str]], data: st.DataObject
) -> None:
    body, columns, props_fields = case
    lines = body.decode().split("\n")
    number = data.draw(st.sampled_from([i + 1 for i, t in enumerate(lines) if t.strip()]))
    column = data.draw(st.sampled_from(columns))
    kind = "props" if column.name == "props" else column.type.name
    bad = data.draw(BAD[kind] | ANYWHERE)
    row = json.loads(lines[number - 1])
    row.pop(column.name, None)
    rest = json.dumps(row)
    lines[number - 1] = f'{{"{column.name}": {bad}' + (", " + rest[1:] if row else "}")
    mangled = "\n".join(lines).encode()
    for read in (coerce_ndjson, coerce_rows):
        with pytest.raises(IngestError) as info:
            read(mangled, columns, props_fields=props_fields, ingest_time_ns=INGEST)
        assert (info.value.line, info.value.field) == (number, column.name), str(info.value)


JUNK = [*(bytes([c]) for c in b'{}[]",:-0e\n '), b"NaN", b"null", b"\xff", b"\\u"]


@given(bodies(), st.data())
def test_mangled_bodies_raise_ingest_error_or_read_like_the_slow_reader(
    case: tuple[bytes, Columns, list[str]], data: st.DataObject
) -> None:
    body, columns, props_fields = case
    mangled = bytearray(body)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(mangled)))
        end = at + data.draw(st.integers(0, 2))
        mangled[at:end] = data.draw(st.sampled_from(JUNK))
    body = bytes(mangled)
    slow = read(coerce_rows, body, columns, props_fields)
    fast = coerce_fast(body, columns, frozenset(props_fields), INGEST)
    assert fast is None or canonical(fast.batch) == slow
    assert read(coerce_ndjson, body, columns, props_fields) == slow


@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_ingest_error(body: bytes) -> None:
    read(coerce_ndjson, body, table(s="string", d="dynamic"))
