"""Postgres types through CDC sync, row by row of the connector seed's type-mapping table:
the kyma column type, and the value after the snapshot and after streaming, which must be
what ``live()`` (the federation path) reads for the same row."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import cbor2
import pyarrow as pa
import pytest
from cdc_helpers import body, drain, kyma

from kyma.connectors.postgres._types import TIMESTAMP_INFINITY
from kyma.connectors.postgres.cdc.pgoutput import UNCHANGED, Update, decode
from kyma.engine.errors import FormatError
from kyma.engine.types import KYMA_TYPE_KEY, Column, KymaType, parse_timestamp

KYMA_TABLE = "pg__public__t"
UNSET: Any = object()


def ns(text: str) -> int:
    value = parse_timestamp(text)
    assert value is not None
    return value


@dataclass(frozen=True)
class Case:
    """A source column: its type, two literals, the kyma type the seed maps it to, and the
    value kyma holds for ``first`` (UNSET: only live() decides)."""

    column: str
    declared: str
    first: str
    second: str
    kyma: str
    expected: Any = UNSET


# One line per row of the seed's table and per note under it (domains, composites).
CASES = [
    Case("c_int2", "smallint", "-32768", "7", "int", -32768),
    Case("c_int4", "integer", "2147483647", "-1", "int", 2147483647),
    Case("c_int8", "bigint", "9223372036854775807", "-5", "long", 9223372036854775807),
    Case("c_oid", "oid", "4294967295", "12", "long", 4294967295),
    Case("c_float4", "real", "1.5", "3.4028235e38", "float4", 1.5),
    Case("c_float8", "double precision", "0.1", "0.30000000000000004", "real", 0.1),
    Case("c_num", "numeric(10,2)", "47.50", "-0.01", "real", 47.5),
    Case("c_num15", "numeric(15,0)", "999999999999999", "1", "real", 999999999999999.0),
    Case("c_num16", "numeric(16,2)", "12345678901234.56", "0", "string", "12345678901234.56"),
    Case("c_bignum", "numeric(30,3)", "12345678901234567890.123", "-1", "string",
         "12345678901234567890.123"),
    Case("c_anynum", "numeric", "0.10", "1e-20", "string", "0.10"),
    Case("c_bool", "boolean", "true", "false", "bool", True),
    Case("c_text", "text", "'héllo'", """'it''s "q" \\ {a,b} NULL'""", "string", "héllo"),
    Case("c_varchar", "varchar(5)", "'abc'", "'NULL'", "string", "abc"),
    Case("c_char", "char(3)", "'c'", "'xyz'", "string", "c"),  # blanks are insignificant
    Case("c_name", "name", "'nm'", "'other'", "string", "nm"),
    Case("c_uuid", "uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'",
         "'00000000-0000-0000-0000-000000000000'", "string",
         "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    Case("c_bytea", "bytea", r"'\xdeadbeef00'", "''", "string", "3q2+7wA="),
    Case("c_ts", "timestamp", "'2024-01-02 03:04:05.123456'", "'1970-01-01'", "timestamp",
         ns("2024-01-02T03:04:05.123456Z")),
    Case("c_tstz", "timestamptz", "'2024-01-15 12:00:00-05'", "'2000-02-29 23:59:59.999999+14'",
         "timestamp", ns("2024-01-15T17:00:00Z")),
    Case("c_date", "date", "'2024-02-29'", "'1900-01-01'", "timestamp", ns("2024-02-29T00:00:00Z")),
    Case("c_time", "time", "'24:00'", "'13:14:15.5'", "timestamp", ns("1970-01-02T00:00:00Z")),
    Case("c_json", "json", """'{"a": [1, 2.5, "x", null, true]}'""", "'[]'", "dynamic",
         {"a": [1, 2.5, "x", None, True]}),
    Case("c_jsonb", "jsonb", """'{"b": 12345678901234567890123}'""", "'\"s\"'", "dynamic",
         {"b": 12345678901234567890123}),
    Case("c_int_arr", "integer[]", "'{{1,2},{3,NULL}}'", "'{}'", "dynamic", [[1, 2], [3, None]]),
    Case("c_text_arr", "text[]", """'{"a b",NULL,"c,\\"d"}'""", """'{""}'""", "dynamic",
         ["a b", None, 'c,"d']),
    Case("c_int4range", "int4range", "'[1,5)'", "'empty'", "dynamic",
         {"lower": 1, "upper": 5, "lower_inc": True, "upper_inc": False}),
    Case("c_tstzrange", "tstzrange", "'[2024-01-01 00:00+00,)'", "'(,)'", "dynamic",
         {"lower": "2024-01-01T00:00:00+00:00", "upper": None, "lower_inc": True,
          "upper_inc": False}),
    Case("c_enum", "mood", "'ok'", "'sad'", "string", "ok"),
    Case("c_enum_elsewhere", 'other."Odd Mood"', "'é ok'", "'x'", "string", "é ok"),
    Case("c_inet", "inet", "'10.0.0.1'", "'::1/64'", "string", "10.0.0.1"),
    Case("c_cidr", "cidr", "'10.0.0.0/8'", "'2001:db8::/32'", "string", "10.0.0.0/8"),
    Case("c_mac", "macaddr", "'08:00:2b:01:02:03'", "'ff-ff-ff-ff-ff-ff'", "string",
         "08:00:2b:01:02:03"),
    Case("c_domain", "posint", "42", "1", "int", 42),
    Case("c_price", "price", "12.34", "0", "real", 12.34),
    Case("c_composite", "addr", "ROW('Main St', 12345)", "ROW(NULL, -1)", "dynamic",
         {"street": "Main St", "zip": 12345}),
]  # fmt: skip
# Only when the server has the extension (pg_available_extensions). The test server has
# neither PostGIS (geometry) nor pgvector (vector): those two rows of the seed are left out.
OPTIONAL = {
    "hstore": Case("c_hstore", "hstore", "'a=>1, b=>NULL'", "''", "dynamic", {"a": "1", "b": None}),
}
TYPES = """
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE SCHEMA other;
CREATE TYPE other."Odd Mood" AS ENUM ('x', 'é ok');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN price AS numeric(12, 2);
CREATE TYPE addr AS (street text, zip int);
"""


def plain(table: pa.Table, name: str) -> list[Any]:
    """A column's values: timestamps as epoch ns, dynamic values decoded."""
    column = table.column(name)
    if pa.types.is_timestamp(column.type):
        return column.cast(pa.int64()).to_pylist()
    if (table.schema.field(name).metadata or {}).get(KYMA_TYPE_KEY) == b"dynamic":
        return [None if v is None else cbor2.loads(v) for v in column.to_pylist()]
    return column.to_pylist()


def same(left: Any, right: Any) -> bool:
    """Equal and of the same Python type, NaN equal to NaN; a live() decimal (federation reads
    numeric exactly) equals the seed's real or string for it when their numbers are equal."""
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(right, Decimal) and isinstance(left, float | str):
        return Decimal(left) == right if isinstance(left, str) else left == float(right)
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    return type(left) is type(right) and left == right


def read(services, table: str, names: list[str]) -> dict[str, list[Any]]:  # type: ignore[no-untyped-def]
    """The columns of a kyma table, or of ``live(...)``, in id order."""
    select = ", ".join(f'"{n}"' for n in ["id", *names])
    answer = kyma(services, f"SELECT {select} FROM {table} ORDER BY id")
    return {n: plain(answer, n) for n in ["id", *names]}


def disagreements(  # type: ignore[no-untyped-def]
    services,
    stage: str,
    labels: dict[str, str],
    expected: dict[int, dict[str, Any]],
    not_live: tuple[str, ...] = (),
) -> list[str]:
    """Where pg.public.t differs from live(pg.public.t) or from ``expected`` ({id: {column:
    value}}), each named by the stage and the column's source type. The ``not_live`` columns
    hold numerics no exact decimal holds (NaN, ±Infinity, past 76 digits): live() refuses
    them, naming the column."""
    names = list(labels)
    synced = read(services, "pg.public.t", names)
    for name in not_live:
        with pytest.raises(FormatError, match=f"column '{name}' \\(numeric\\).*CAST"):
            read(services, "live(pg.public.t)", [name])
    live = read(services, "live(pg.public.t)", [n for n in names if n not in not_live])
    live.update({n: synced[n] for n in not_live})
    if synced["id"] != live["id"]:
        return [f"{stage}: ids {synced['id']} in kyma, {live['id']} live"]
    found = []
    for name, label in labels.items():
        if not same(synced[name], live[name]):
            found.append(f"{stage}, {label}: kyma {short(synced[name])}, live {short(live[name])}")
        for row_id, values in expected.items():
            want = values.get(name, UNSET)
            got = synced[name][synced["id"].index(row_id)]
            if want is not UNSET and not same(got, want):
                found.append(f"{stage}, {label}, id {row_id}: kyma {short(got)}, expected {want!r}")
    return found


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else f"{text[:300]}... ({len(text)} characters)"


def start_sync(services, cdc_source, worker, columns: str = "", *rows: str):  # type: ignore[no-untyped-def]
    """Create public.t with ``columns`` after an int key ``id`` (unless empty: it exists),
    insert ``rows``, and snapshot it."""
    if columns:
        cdc_source.execute(f"CREATE TABLE t (id int PRIMARY KEY, {columns})")
    for row in rows:
        cdc_source.execute(f"INSERT INTO t VALUES ({row})")
    services.connectors.create(body(cdc_source, ["public.t"]))
    w = worker()
    w.start()
    return w


def kyma_types(services, labels: dict[str, str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    info = services.catalog.get_table(KYMA_TABLE)
    return {label: str(c.type) if (c := info.column(n)) else "-" for n, label in labels.items()}


def test_every_seed_type_reads_the_same_snapshotted_streamed_and_live(
    services, cdc_source, worker
) -> None:
    """Each type's kyma column type is the seed's; its values after the snapshot, a streamed
    insert, updates (value to value, NULL to value, value to NULL) are what live() reads."""
    cdc_source.execute(TYPES)
    available = {n for (n,) in cdc_source.execute("SELECT name FROM pg_available_extensions")}
    extensions = [ext for ext in OPTIONAL if ext in available]
    for ext in extensions:
        cdc_source.execute(f"CREATE EXTENSION {ext}")
    cases = CASES + [OPTIONAL[ext] for ext in extensions]
    labels = {c.column: c.declared for c in cases}
    firsts = ", ".join(c.first for c in cases)
    columns = ", ".join(f"{c.column} {c.declared}" for c in cases)
    w = start_sync(services, cdc_source, worker, columns, f"1, {firsts}", "2")

    assert kyma_types(services, labels) == {c.declared: c.kyma for c in cases}
    assert services.connectors.status("pg")["type_warnings"] == []  # all in the seed's table
    first = {c.column: c.expected for c in cases}
    problems = disagreements(services, "snapshot", labels, {1: first})
    assert not problems, "\n".join(problems)

    cdc_source.execute(f"INSERT INTO t VALUES (3, {firsts})")
    cdc_source.execute(f"UPDATE t SET {', '.join(f'{c.column} = {c.second}' for c in cases)}")
    cdc_source.execute(f"UPDATE t SET ({', '.join(labels)}) = ({firsts}) WHERE id = 2")
    assert drain(w) == 3
    problems = disagreements(services, "streaming", labels, {2: first, 3: {}})
    assert not problems, "\n".join(problems)
    nulls = dict.fromkeys(labels, None)
    cdc_source.execute(f"UPDATE t SET ({', '.join(labels)}) = ({', '.join(['NULL'] * len(cases))})")
    assert drain(w) == 1
    problems = disagreements(services, "streamed NULLs", labels, {1: nulls, 2: nulls, 3: nulls})
    assert not problems, "\n".join(problems)


INF = TIMESTAMP_INFINITY
JAN_1 = ns("2024-01-01T00:00:00Z")
# column, type, a literal for each of three rows, and the values kyma holds for them
SPECIAL = [
    ("n_real", "numeric(10,2)", ("'NaN'", "NULL", "1.5"), (math.nan, None, 1.5)),  # no ±Inf
    ("n_text", "numeric", ("'NaN'", "'Infinity'", "'-Infinity'"), ("NaN", "Infinity", "-Infinity")),
    ("f4", "real", ("'NaN'", "'Infinity'", "'-Infinity'"), (math.nan, math.inf, -math.inf)),
    ("f8", "double precision", ("'NaN'", "'Infinity'", "'-Infinity'"),
     (math.nan, math.inf, -math.inf)),
    ("f8_arr", "double precision[]", ("'{NaN,Infinity,-Infinity,1.5}'", "NULL", "'{}'"),
     (["NaN", "Infinity", "-Infinity", 1.5], None, [])),  # as to_jsonb spells them
    ("ts", "timestamp", ("'infinity'", "'-infinity'", "'2024-01-01'"), (INF, -INF, JAN_1)),
    ("tstz", "timestamptz", ("'infinity'", "'-infinity'", "'2024-01-01+00'"), (INF, -INF, JAN_1)),
    ("d", "date", ("'infinity'", "'-infinity'", "'2024-01-01'"), (INF, -INF, JAN_1)),
    ("tsrange", "tstzrange", ("'[-infinity,infinity]'", "'(,infinity)'", "NULL"),
     ({"lower": "-infinity", "upper": "infinity", "lower_inc": True, "upper_inc": True},
      {"lower": None, "upper": "infinity", "lower_inc": False, "upper_inc": False}, None)),
    ("ts_arr", "timestamp[]", ("'{infinity,-infinity}'", "NULL", "NULL"),
     (["infinity", "-infinity"], None, None)),
]  # fmt: skip
SPECIAL_ROWS = [", ".join(literals[k] for _, _, literals, _ in SPECIAL) for k in range(3)]


def test_nan_and_infinities_read_the_same_snapshotted_streamed_and_live(
    services, cdc_source, worker
) -> None:
    """Numeric NaN and ±Infinity, ±infinity timestamps and dates: no crash, no finite stand-in
    but kyma's extreme timestamps, which order as Postgres orders infinities."""
    columns = ", ".join(f"{name} {declared}" for name, declared, _, _ in SPECIAL)
    rows = [f"{i}, {values}" for i, values in enumerate(SPECIAL_ROWS, 1)]
    w = start_sync(services, cdc_source, worker, columns, *rows)
    labels = {name: f"{declared} ({name})" for name, declared, _, _ in SPECIAL}

    def expected(*ids: int) -> dict[int, dict[str, Any]]:
        """Row k's values at ids[k]."""
        return {i: {name: v[k] for name, _, _, v in SPECIAL} for k, i in enumerate(ids)}

    refused = ("n_real", "n_text")
    problems = disagreements(services, "snapshot", labels, expected(1, 2, 3), refused)
    assert not problems, "\n".join(problems)

    for i, values in enumerate(SPECIAL_ROWS, 11):
        cdc_source.execute(f"INSERT INTO t VALUES ({i}, {values})")
    cdc_source.execute(  # rows 1 and 3 trade values, through UPDATE
        f"UPDATE t SET ({', '.join(labels)}) = (SELECT {', '.join(labels)} FROM t o"
        " WHERE o.id = 4 - t.id) WHERE id IN (1, 3)"
    )
    assert drain(w) == 4
    problems = disagreements(
        services, "streaming", labels, expected(3, 2, 1) | expected(11, 12, 13), refused
    )
    assert not problems, "\n".join(problems)

    ordered = kyma(services, "SELECT id FROM pg.public.t ORDER BY tstz, id").column("id")
    assert ordered.to_pylist() == [2, 12, 1, 13, 3, 11]
    later = kyma(services, "SELECT id FROM pg.public.t WHERE d > '2200-01-01' ORDER BY id")
    assert later.column("id").to_pylist() == [3, 11]


UNMAPPED = [
    Case("c_tsvector", "tsvector", "'b a'", "''", "dynamic", "'a' 'b'"),
    Case("c_point", "point", "'(1, 2.5)'", "'(0,0)'", "dynamic", "(1,2.5)"),
    Case("c_macaddr8", "macaddr8", "'08:00:2b:01:02:03:04:05'", "'0800.2b01.0203'", "dynamic",
         "08:00:2b:01:02:03:04:05"),
    Case("c_interval", "interval", "'1 day 02:03:04'", "'-1 year'", "dynamic", "1 day 02:03:04"),
    Case("c_timetz", "time with time zone", "'12:00+02'", "'00:00Z'", "dynamic", "12:00:00+02"),
    Case("c_money", "money", "'12.34'", "'-0.5'", "dynamic", "$12.34"),
    Case("c_bit", "bit(3)", "B'101'", "B'000'", "dynamic", "101"),
    Case("c_xml", "xml", "'<a x=\"1\">é</a>'", "'<b/>'", "dynamic", '<a x="1">é</a>'),
    Case("c_lsn", "pg_lsn", "'16/B374D848'", "'0/0'", "dynamic", "16/B374D848"),
]  # fmt: skip


def test_unmapped_types_land_in_dynamic_readable_and_warned(services, cdc_source, worker) -> None:
    """Types the seed does not list read as dynamic (their to_jsonb value), with a warning
    naming each in the connector's status."""
    labels = {c.column: c.declared for c in UNMAPPED}
    firsts = ", ".join(c.first for c in UNMAPPED)
    columns = ", ".join(f"{c.column} {c.declared}" for c in UNMAPPED)
    w = start_sync(services, cdc_source, worker, columns, f"1, {firsts}")

    assert kyma_types(services, labels) == dict.fromkeys(labels.values(), "dynamic")
    warnings = services.connectors.status("pg")["type_warnings"]
    assert warnings == [
        f"public.t.{c.column}: column type {c.declared!r} has no kyma mapping; it reads as dynamic"
        for c in UNMAPPED
    ]
    first = {c.column: c.expected for c in UNMAPPED}
    problems = disagreements(services, "snapshot", labels, {1: first})
    assert not problems, "\n".join(problems)

    cdc_source.execute(f"INSERT INTO t VALUES (2, {firsts})")
    cdc_source.execute(f"UPDATE t SET {', '.join(f'{c.column} = {c.second}' for c in UNMAPPED)}")
    assert drain(w) == 2
    problems = disagreements(services, "streaming", labels, {1: {}, 2: {}})
    assert not problems, "\n".join(problems)
    point = kyma(services, "SELECT c_point FROM pg.public.t WHERE id = 2")
    assert plain(point, "c_point") == ["(0,0)"]


TOASTED = {  # varlena types, each with a value far past the 2 kB TOAST threshold
    "c_text": ("text", "repeat('é', 5000)"),
    "c_bytea": ("bytea", "decode(repeat('00ff', 5000), 'hex')"),
    "c_numeric": ("numeric", "(repeat('9', 9000) || '.5')::numeric"),
    "c_jsonb": ("jsonb", "jsonb_build_object('k', repeat('x', 9000))"),
    "c_json": ("json", "json_build_object('k', repeat('y', 9000))"),
    "c_text_arr": ("text[]", "ARRAY[repeat('a', 9000), NULL]"),
    "c_int_arr": ("integer[]", "ARRAY(SELECT generate_series(1, 3000))"),
    "c_composite": ("addr", "ROW(repeat('s', 9000), 1)::addr"),
    "c_tsvector": ("tsvector", "to_tsvector('simple', repeat('w ', 10) || repeat('z', 2040))"),
    "c_xml": ("xml", "('<a>' || repeat('q', 9000) || '</a>')::xml"),
}


def test_unchanged_toasted_values_of_each_type_keep_their_value(
    services, cdc_source, worker
) -> None:
    """An UPDATE that leaves a TOASTed value alone does not send it: kyma takes the value it
    holds, which must read as live() reads it, whatever the type."""
    cdc_source.execute(TYPES)
    columns = ", ".join(f"{name} {declared}" for name, (declared, _) in TOASTED.items())
    storage = ", ".join(f"ALTER {name} SET STORAGE EXTERNAL" for name in TOASTED)
    values = ", ".join(value for _, value in TOASTED.values())
    cdc_source.execute(
        f"CREATE TABLE t (id int PRIMARY KEY, note text, {columns}); ALTER TABLE t {storage};"
        f" INSERT INTO t VALUES (1, 'old', {values})"
    )
    w = start_sync(services, cdc_source, worker)
    cdc_source.execute(f"INSERT INTO t VALUES (2, 'new', {values})")
    assert drain(w) == 1
    cdc_source.execute("UPDATE t SET note = 'touched'")
    peeked = cdc_source.execute(
        "SELECT data FROM pg_logical_slot_peek_binary_changes(%s, NULL, NULL, 'proto_version',"
        " '1', 'publication_names', %s)",
        (w.slot, w.slot),
    )
    updates = [m for m in map(decode, (bytes(d) for (d,) in peeked)) if isinstance(m, Update)]
    assert [m.new.count(UNCHANGED) for m in updates] == [len(TOASTED)] * 2  # none was sent
    assert drain(w) == 1
    labels = {"note": "text", **{name: declared for name, (declared, _) in TOASTED.items()}}
    touched = {"note": "touched"}
    problems = disagreements(
        services, "unchanged TOAST", labels, {1: touched, 2: touched}, ("c_numeric",)
    )
    assert not problems, "\n".join(problems)


SOURCE_JOINED_KEY = (
    {
        "k_tstz": "timestamptz",
        "k_num": "numeric",
        "k_uuid": "uuid",
        "k_bool": "boolean",
        "k_date": "date",
        "k_float": "double precision",
        "k_text": "text",
    },
    [
        "'2024-01-15 12:00:00.5-05', 1.50, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', true,"
        " '2024-02-29', 0.30000000000000004, 'a:b'",
        "'infinity', 'NaN', '00000000-0000-0000-0000-000000000000', false, '-infinity',"
        " 'Infinity', ''",
        "'1999-12-31 23:59:59+14', -0.000, 'ffffffff-ffff-ffff-ffff-ffffffffffff', false,"
        " '1970-01-01', -1e-300, 'é'",
    ],
)
# Only integers and text: the snapshot joins ``_kyma_pk`` in Arrow (``keys_joined_here``).
ARROW_JOINED_KEY = (
    {
        "k_small": "smallint",
        "k_big": "bigint",
        "k_int": "integer",
        "k_var": "varchar(8)",
        "k_text": "text",
    },
    [
        "-32768, -9223372036854775808, -7, 'a:b', ''",
        "32767, 9223372036854775807, 0, '', 'é:'",
        "0, 0, 2147483647, ' x ', ':'",
    ],
)


@pytest.mark.parametrize(
    ("key", "rows"), [SOURCE_JOINED_KEY, ARROW_JOINED_KEY], ids=["source", "arrow"]
)
def test_keys_of_every_kind_match_between_snapshot_and_streaming(
    services, cdc_source, worker, key: dict[str, str], rows: list[str]
) -> None:
    """``_kyma_pk`` is the key columns' output text, built for the snapshot (at the source,
    or in Arrow for integer and text keys) and from pgoutput when streaming: an update or
    delete must land on the snapshotted row."""
    columns = ", ".join(f"{name} {declared}" for name, declared in key.items())
    cdc_source.execute(f"CREATE TABLE t (id int, {columns}, PRIMARY KEY ({', '.join(key)}, id))")
    for i, row in enumerate(rows, 1):
        cdc_source.execute(f"INSERT INTO t VALUES ({i}, {row})")
    w = start_sync(services, cdc_source, worker)
    snapshotted = kyma(services, "SELECT id, _kyma_pk FROM pg.public.t__changes").to_pylist()
    pk = {row["id"]: row["_kyma_pk"] for row in snapshotted}

    cdc_source.execute("UPDATE t SET id = 11 WHERE id = 1")  # a new key: the old one deleted
    cdc_source.execute("DELETE FROM t WHERE id = 2")
    cdc_source.execute("UPDATE t SET k_text = k_text WHERE id = 3")  # the same key, updated
    assert drain(w) == 3
    changes = kyma(services, "SELECT _kyma_pk, _kyma_op FROM pg.public.t__changes").to_pylist()
    assert sorted((c["_kyma_pk"], c["_kyma_op"]) for c in changes) == sorted(
        [(pk[i], "insert") for i in (1, 2, 3)]
        + [(pk[1], "delete"), (pk[1].removesuffix(":1") + ":11", "update")]
        + [(pk[2], "delete"), (pk[3], "update")]
    )
    labels = {name: declared for name, declared in key.items()}
    problems = disagreements(services, "keys", labels, {})
    assert not problems, "\n".join(problems)


def test_a_real_column_mirrors_as_a_real(services, cdc_source, worker) -> None:  # type: ignore[no-untyped-def]
    """A source ``real`` is a float4 column in kyma, so queries over the mirror answer as the
    source (it was a double: ``x * 3`` of 0.1 was 0.30000000000000004, the source's
    0.30000000447034836, and ``x = 0.1`` held). A mirror made before, whose column is kyma's
    64-bit ``real``, keeps syncing into it."""
    old = [Column("old", KymaType("real"))]
    services.catalog.create_table(KYMA_TABLE, old, options={"cdc": "postgres"})
    rows = ("1, 0.1, 0.1", "2, 16777217, 2.5", "3, 'NaN', '-Infinity'")
    w = start_sync(services, cdc_source, worker, "x real, old real", *rows)
    cdc_source.execute("INSERT INTO t VALUES (4, 0.1, 1e-40), (5, 3.4028235e38, 0.3)")
    assert drain(w) == 1  # one transaction
    assert kyma_types(services, {"x": "x", "old": "old"}) == {"x": "float4", "old": "real"}
    sql = (
        "SELECT id, x::text AS a, (x * 3)::text AS b, (x = 0.1)::text AS c,"
        " (x IN (0.1, 2))::text AS d, (old * 3)::text AS e FROM {} ORDER BY id"
    )
    sums = "SELECT sum(x)::text, avg(x)::text, max(x)::text, count(*) FROM {} WHERE x < 1e30"
    for query in (sql, sums):
        mirrored = kyma(services, query.format("pg.public.t")).to_pydict().values()
        assert list(zip(*mirrored, strict=True)) == cdc_source.execute(query.format("t"))
