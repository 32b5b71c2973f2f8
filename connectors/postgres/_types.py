"""Postgres column types → kyma types, the SQL that fetches each, and ADBC results → kyma Arrow.

The mapping follows the connector seed's table. ``fetch_expression`` reshapes on the source
what ADBC cannot hand over cleanly (enums, ranges, hstore, arrays, network types), so that
``to_kyma`` can decide every field from its Arrow type and ``POSTGRESQL:type`` metadata alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from string import ascii_lowercase, ascii_uppercase, digits

import cbor2
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from kyma.engine.errors import FormatError
from kyma.engine.types import Column, KymaType

PG_TYPE_KEY = b"POSTGRESQL:type"
PG_TYPMOD_KEY = b"POSTGRESQL:typmod"
MAX_REAL_PRECISION = 15
"""Numerics of at most 15 digits survive a double exactly; wider ones read as strings."""


@dataclass(frozen=True)
class PgType:
    """An introspected column type: ``format_type`` text, base typname (domains unwrapped),
    ``pg_type.typcategory``, for numerics the declared precision, and for text the locale
    of its collation."""

    name: str
    typname: str
    category: str
    numeric_precision: int | None = None
    collation: str | None = None

    @property
    def orders_as_bytes(self) -> bool:
        """Whether the source orders this column's values as kyma does (by UTF-8 bytes)."""
        return self.collation is None or self.collation in BYTE_ORDER_COLLATIONS


BYTE_ORDER_COLLATIONS = frozenset({"C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"})


_BY_CATEGORY = {"A": "dynamic", "R": "dynamic", "E": "string", "C": "dynamic"}  # C: composite
_BY_TYPNAME = {
    **dict.fromkeys(("int2", "int4"), "int"),
    **dict.fromkeys(("int8", "oid"), "long"),
    "float4": "float4",  # kyma's real is a double: a mirrored real stays 32 bits
    "float8": "real",
    "bool": "bool",
    **dict.fromkeys(("text", "varchar", "bpchar", "name", "uuid", "bytea"), "string"),
    **dict.fromkeys(("inet", "cidr", "macaddr"), "string"),
    **dict.fromkeys(("timestamp", "timestamptz", "date", "time"), "timestamp"),
    **dict.fromkeys(("json", "jsonb", "hstore"), "dynamic"),
}
DYNAMIC = KymaType("dynamic")


def kyma_type(
    pg_type: PgType, *, numeric_mode: str = "real", geometry_mode: str | None = None
) -> tuple[KymaType, str | None]:
    """The kyma type of a column, and a warning when the type is out of band.

    >>> kyma_type(PgType("numeric(10,2)", "numeric", "N", 10))
    (KymaType(name='real'), None)
    >>> kyma_type(PgType("tsvector", "tsvector", "U"))[1]
    "column type 'tsvector' has no kyma mapping; it reads as dynamic"
    """
    name = _BY_CATEGORY.get(pg_type.category) or _BY_TYPNAME.get(pg_type.typname)
    if name is not None:
        return KymaType(name), None
    if pg_type.typname == "numeric":
        precision = pg_type.numeric_precision
        real = numeric_mode == "real" and precision is not None and precision <= MAX_REAL_PRECISION
        return KymaType("real" if real else "string"), None
    if pg_type.typname == "vector" and pg_type.name.startswith("vector("):
        return KymaType.parse(pg_type.name), None
    if pg_type.typname == "geometry":
        if geometry_mode == "wkt":
            return KymaType("string"), None
        return DYNAMIC, f"column type {pg_type.name!r} reads as dynamic unless geometry_mode='wkt'"
    return DYNAMIC, f"column type {pg_type.name!r} has no kyma mapping; it reads as dynamic"


def _call(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _range(column: exp.Expression) -> exp.Expression:
    keys = ("lower", "upper", "lower_inc", "upper_inc")
    pairs = [part for key in keys for part in (exp.Literal.string(key), _call(key, column.copy()))]
    present = exp.not_(column.copy().is_(exp.null()))
    return exp.case().when(present, _call("jsonb_build_object", *pairs))


def _text(column: exp.Expression) -> exp.Expression:
    return exp.cast(column, "text")


def _to_jsonb(column: exp.Expression) -> exp.Expression:
    return _call("to_jsonb", column)


Wire = Callable[[exp.Expression], exp.Expression]


def _float8(column: exp.Expression) -> exp.Expression:
    return exp.cast(column, exp.DataType.build("double precision", dialect="postgres"))


_WIRE_BY_CATEGORY: dict[str, Wire] = {"A": _to_jsonb, "R": _range, "E": _text, "C": _to_jsonb}
_WIRE_BY_TYPNAME: dict[str, Wire] = {
    "inet": lambda c: _call("abbrev", c),  # the inet output text; ::text always adds /32
    "cidr": _text,
    "macaddr": _text,
    "hstore": lambda c: _call("hstore_to_jsonb", c),
    "vector": lambda c: exp.cast(c, exp.DataType.build("real[]", dialect="postgres")),
    "geometry": lambda c: _call("ST_AsText", c),
}


def fetch_expression(
    column_sql: exp.Expression,
    pg_type: PgType,
    alias: str,
    *,
    numeric_mode: str = "real",
    geometry_mode: str | None = None,
    exact_numeric: bool = False,
) -> exp.Expression:
    """The SELECT item that fetches a column so ``to_kyma`` reads it as ``kyma_type`` says.

    ``exact_numeric`` (federation) fetches numerics as they are, for ``to_kyma`` to read as
    decimals; otherwise (CDC into kyma tables) as the seed's real or string.

    >>> fetch_expression(exp.column("m"), PgType("mood", "mood", "E"), "m").sql("postgres")
    'CAST(m AS TEXT) AS "m"'
    """
    kind, warning = kyma_type(pg_type, numeric_mode=numeric_mode, geometry_mode=geometry_mode)
    if warning is not None:
        wire = _to_jsonb
    elif pg_type.typname == "numeric" and exact_numeric:
        wire = None
    elif pg_type.typname == "numeric":
        # As float8 at the source: the same correctly rounded double as casting the decimal
        # text here, at half the fetch cost (measured in bench/federation.py).
        wire = _text if kind.name == "string" else _float8
    else:
        wire = _WIRE_BY_CATEGORY.get(pg_type.category) or _WIRE_BY_TYPNAME.get(pg_type.typname)
    column = column_sql.copy()
    return exp.alias_(wire(column) if wire else column, alias, quoted=True)


Convert = Callable[[pa.Array], pa.Array]
_NS_PER_UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_NS_PER_DAY = 86_400 * 10**9
_HEX = np.frombuffer(b"".join(b"%02x" % i for i in range(256)), np.uint8).reshape(256, 2)
_UUID_DIGITS = [i for i in range(36) if i not in (8, 13, 18, 23)]
_BASE64 = np.frombuffer((ascii_uppercase + ascii_lowercase + digits + "+/").encode(), np.uint8)


def _keep_nulls(source: pa.Array, result: pa.Array) -> pa.Array:
    if not source.null_count:
        return result
    return pc.if_else(pc.is_valid(source), result, pa.scalar(None, result.type))


TIMESTAMP_INFINITY = 2**63 - 1
"""Postgres's 'infinity' (timestamp, timestamptz, date) in kyma: the largest timestamp,
2262-04-11T23:47:16.854775807Z; '-infinity' is its negation (not -2**63, numpy's NaT). They
order after and before every finite value, as in Postgres; snapshot, streaming and live()
all convert here. Finite values outside kyma's years 1677 to 2262 raise."""
_PG_EPOCH_DAYS = 10_957  # 1970-01-01 to 2000-01-01, Postgres's epoch


def _wrapped(value: int, bits: int) -> int:
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


# ADBC moves Postgres's infinities (the int64 µs and int32 day extremes, counted from 2000)
# to 1970 with wrapping arithmetic: the (+infinity, -infinity) counts that arrive, by unit.
_ADBC_INFINITIES = {
    "us": tuple(_wrapped(v + _PG_EPOCH_DAYS * 86_400 * 10**6, 64) for v in (2**63 - 1, -(2**63))),
    "day": tuple(_wrapped(v + _PG_EPOCH_DAYS, 32) for v in (2**31 - 1, -(2**31))),
}


def _instant(array: pa.Array) -> pa.Array:
    """Dates, times and timestamps as ns since the epoch, UTC: wall values read as UTC, a
    time lands on 1970-01-01 (24:00 on 01-02), ±infinity on ±TIMESTAMP_INFINITY."""
    if pa.types.is_date32(array.type):
        count, per, unit = array.cast(pa.int32()).cast(pa.int64()), _NS_PER_DAY, "day"
    else:
        count, per, unit = array.cast(pa.int64()), _NS_PER_UNIT[array.type.unit], array.type.unit
    infinite = None
    if not pa.types.is_time(array.type) and unit in _ADBC_INFINITIES:
        plus, minus = (pc.equal(count, v) for v in _ADBC_INFINITIES[unit])
        if pc.any(pc.or_(plus, minus)).as_py():
            infinite = pc.or_(plus, minus)
            count = pc.if_else(infinite, 0, count)
    try:
        ns = pc.multiply_checked(count, per)
    except pa.ArrowInvalid:
        raise ValueError("a value lies outside kyma's timestamps (years 1677 to 2262)") from None
    if infinite is not None:
        signed = pc.if_else(plus, TIMESTAMP_INFINITY, -TIMESTAMP_INFINITY)
        ns = pc.if_else(infinite, signed, ns)
    return ns.cast(pa.timestamp("ns", tz="UTC"))


def _uuid(array: pa.Array) -> pa.Array:
    """16 bytes each → lowercase 8-4-4-4-12 text, in numpy."""
    storage = array.storage
    raw = np.frombuffer(storage.buffers()[1], np.uint8, len(storage) * 16, storage.offset * 16)
    text = np.full((len(storage), 36), ord("-"), np.uint8)
    text[:, _UUID_DIGITS] = _HEX[raw].reshape(-1, 32)
    offsets = pa.py_buffer(np.arange(len(storage) + 1, dtype=np.int32) * 36)
    strings = pa.StringArray.from_buffers(len(storage), offsets, pa.py_buffer(text))
    return _keep_nulls(storage, strings)


def _base64(array: pa.Array) -> pa.Array:
    """Each value → standard padded base64, in numpy: pad to whole 3-byte groups, split
    each group into four 6-bit indexes, then mark the padding."""
    offsets = np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * 4)
    first, last = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(array.buffers()[2] or b"", np.uint8)[first:last]
    lengths = np.diff(offsets)
    groups = (lengths + 2) // 3
    starts = 3 * (np.cumsum(groups) - groups)
    padded = np.zeros(3 * int(groups.sum()), np.uint32)
    padded[np.arange(first, last) + np.repeat(starts - offsets[:-1], lengths)] = data
    words = padded.reshape(-1, 3) @ np.array([1 << 16, 1 << 8, 1], np.uint32)
    text = _BASE64[(words[:, None] >> np.array([18, 12, 6, 0], np.uint32)) & 63].reshape(-1)
    ends = 4 * np.cumsum(groups)
    text[ends[lengths % 3 != 0] - 1] = ord("=")
    text[ends[lengths % 3 == 1] - 2] = ord("=")
    out_offsets = pa.py_buffer(np.concatenate([[0], ends]).astype(np.int64))
    strings = pa.LargeStringArray.from_buffers(len(array), out_offsets, pa.py_buffer(text))
    return _keep_nulls(array, strings.cast(pa.string()))


def _json_cbor(array: pa.Array) -> pa.Array:
    """JSON text → CBOR of the document, one value at a time (as ingest does for dynamic).

    The stdlib decoder, as Postgres numbers may pass 64 bits and orjson turns those into floats.
    """
    texts = array.storage.to_pylist()
    return pa.array([None if t is None else cbor2.dumps(json.loads(t)) for t in texts], pa.binary())


def _list_cbor(array: pa.Array) -> pa.Array:
    """Lists → CBOR arrays, one row at a time: items convert like columns (vectorized);
    timestamps become RFC 3339 text, dynamic items their values."""
    offsets = array.offsets.to_numpy()
    first, last = int(offsets[0]), int(offsets[-1])
    kind, convert = _converter(pa.field("item", array.type.value_type), {})
    items = convert(array.values.slice(first, last - first))
    if kind.name == "timestamp":
        items = pc.strftime(items, format="%Y-%m-%dT%H:%M:%SZ")
    values = items.to_pylist()
    if kind.name == "dynamic":
        values = [None if v is None else cbor2.loads(v) for v in values]
    valid = pc.is_valid(array).to_pylist()
    rows = [
        cbor2.dumps(values[start - first : end - first]) if ok else None
        for start, end, ok in zip(offsets[:-1], offsets[1:], valid, strict=True)
    ]
    return pa.array(rows, pa.binary())


def _vector(dim: int) -> Convert:
    def convert(array: pa.Array) -> pa.Array:
        lengths = pc.list_value_length(array)
        wrong = pc.filter(lengths, pc.not_equal(lengths, dim))
        if len(wrong):
            raise ValueError(f"expected vector({dim}), got {wrong[0].as_py()} dimensions")
        return array.cast(pa.list_(pa.float32(), dim))

    return convert


def _numeric(typmod: int) -> tuple[KymaType, Convert]:
    """numeric(p, s) arrives as decimal text; typmod is ((p << 16) | s) + 4, -1 if none."""
    if typmod >= 4 and (typmod - 4) >> 16 > MAX_REAL_PRECISION:
        return KymaType("string"), lambda a: a.storage
    return KymaType("real"), lambda a: a.storage.cast(pa.float64())


MAX_DECIMAL_DIGITS = 76
"""The widest exact decimal kyma computes with (Arrow's decimal256)."""


_CAST_HINT = "; read it as CAST(column AS double precision) or AS text"


def exact_decimal(array: pa.Array, typmod: int) -> pa.Array:
    """numeric text → an Arrow decimal that holds every value exactly: numeric(p, s) as
    decimal(p, s); unconstrained numeric as the narrowest decimal the values fit.

    Raises ValueError for NaN, infinities and values past 76 digits, which no decimal holds.
    """
    text = array.storage if isinstance(array, pa.ExtensionArray) else array
    special = pc.match_substring_regex(text, "^[-+]?[A-Za-z]")
    if pc.any(special).as_py():
        value = pc.filter(text, special)[0].as_py()
        raise ValueError(f"numeric {value!r} has no exact decimal in kyma{_CAST_HINT}")
    if typmod >= 4:
        precision, scale = (typmod - 4) >> 16, (typmod - 4) & 0xFFFF
    else:
        precision, scale = _fitting_decimal(text)
    if precision > MAX_DECIMAL_DIGITS:
        raise ValueError(
            f"numeric of {precision} digits is wider than kyma's 76-digit decimals{_CAST_HINT}"
        )
    kind = pa.decimal128 if precision <= 38 else pa.decimal256
    return text.cast(kind(max(precision, 1), scale))


def _fitting_decimal(text: pa.Array) -> tuple[int, int]:
    """(precision, scale) that hold every value of a column of decimal text."""
    if not len(text) or text.null_count == len(text):
        return 1, 0
    unsigned = pc.replace_substring_regex(text, "^[-+]", "")
    digits = pc.utf8_length(unsigned)
    point = pc.find_substring(unsigned, ".")
    decimals = pc.if_else(pc.less(point, 0), 0, pc.subtract(pc.subtract(digits, point), 1))
    whole = pc.subtract(pc.subtract(digits, decimals), pc.if_else(pc.less(point, 0), 0, 1))
    scale = pc.max(decimals).as_py() or 0
    return max(pc.max(whole).as_py() or 1, 1) + scale, scale


def _same(array: pa.Array) -> pa.Array:
    return array


_RULES: tuple[tuple[Callable[[pa.DataType], bool], str, Convert], ...] = (
    (pa.types.is_boolean, "bool", _same),
    (pa.types.is_int16, "int", lambda array: array.cast(pa.int32())),
    (pa.types.is_int32, "int", _same),
    (pa.types.is_int64, "long", _same),
    (pa.types.is_float32, "float4", _same),
    (pa.types.is_float64, "real", _same),
    (pa.types.is_string, "string", _same),
    (pa.types.is_binary, "string", _base64),
    (pa.types.is_timestamp, "timestamp", _instant),
    (pa.types.is_date32, "timestamp", _instant),
    (pa.types.is_time64, "timestamp", _instant),
    (lambda t: isinstance(t, pa.UuidType), "string", _uuid),
    (lambda t: isinstance(t, pa.JsonType), "dynamic", _json_cbor),
    (pa.types.is_list, "dynamic", _list_cbor),
)


def padded(column: exp.Expression, pg_type: PgType) -> exp.Expression:
    """A char(n) column as LIKE sees it in Postgres: with its blanks (kyma fetches it trimmed).

    >>> padded(exp.column("c"), PgType("character(5)", "bpchar", "S")).sql("postgres")
    "RPAD(c, 5, ' ')"
    """
    width = re.fullmatch(r"character\((\d+)\)", pg_type.name)
    if pg_type.typname != "bpchar" or width is None:
        return column
    return exp.Anonymous(
        this="RPAD",
        expressions=[
            column.copy(),
            exp.Literal.number(int(width.group(1))),
            exp.Literal.string(" "),
        ],
    )


def _blank_trimmed(array: pa.Array) -> pa.Array:
    """char(n) without its padding: Postgres ignores trailing blanks of bpchar in
    comparisons, length, LIKE and concatenation, so kyma's evaluation must not see them."""
    return pc.utf8_rtrim(array, characters=" ")


def _converter(
    field: pa.Field, vectors: Mapping[str, int], exact_numeric: bool = False
) -> tuple[KymaType, Convert]:
    metadata = field.metadata or {}
    pg = metadata.get(PG_TYPE_KEY, b"").decode()
    dtype = field.type
    if pg == "bpchar" and pa.types.is_string(dtype):
        return KymaType("string"), _blank_trimmed
    if field.name in vectors and pa.types.is_list(dtype):
        return KymaType.parse(f"vector({vectors[field.name]})"), _vector(vectors[field.name])
    if pg == "oid" and pa.types.is_int32(dtype):  # ADBC sends the unsigned oid as int32
        return KymaType("long"), lambda array: array.view(pa.uint32()).cast(pa.int64())
    if isinstance(dtype, pa.OpaqueType) and dtype.type_name == "numeric":
        typmod = int(metadata.get(PG_TYPMOD_KEY, b"-1"))
        if exact_numeric:
            return KymaType("real"), lambda array: exact_decimal(array, typmod)
        return _numeric(typmod)
    for matches, name, convert in _RULES:
        if matches(dtype):
            return KymaType(name), convert
    raise FormatError(
        f"column {field.name!r}: Postgres type {pg or '?'!r} arrives as {dtype}, which kyma"
        " cannot read; select it through fetch_expression"
    )


def arrow_field(name: str, kind: KymaType) -> pa.Field:
    """The Arrow field of a kyma column (dynamic carries the ``kyma.type`` metadata)."""
    return Column(name, kind).to_arrow()


def to_kyma(
    table: pa.Table, *, vectors: Mapping[str, int] | None = None, exact_numeric: bool = False
) -> pa.Table:
    """An ADBC result with every field converted to its kyma Arrow type.

    ``vectors`` names the fields holding pgvector columns fetched as ``real[]`` and their
    dimension. ``exact_numeric`` (federation) reads numerics as Arrow decimals, so sums,
    averages and comparisons in kyma are Postgres's. Raises FormatError naming the field a
    value or a type cannot convert in.
    """
    fields, columns = [], []
    for field, column in zip(table.schema, table.columns, strict=True):
        kind, convert = _converter(field, vectors or {}, exact_numeric)
        try:
            if exact_numeric and isinstance(field.type, pa.OpaqueType):
                chunks = [convert(column.combine_chunks())]  # one decimal type per column
            else:
                chunks = [convert(chunk) for chunk in column.chunks if len(chunk)]
        except (ValueError, pa.ArrowInvalid, cbor2.CBORError) as e:
            pg = (field.metadata or {}).get(PG_TYPE_KEY, b"?").decode()
            raise FormatError(f"column {field.name!r} ({pg}): {e}") from e
        if chunks and pa.types.is_decimal(chunks[0].type):
            fields.append(pa.field(field.name, chunks[0].type))
            columns.append(pa.chunked_array(chunks, chunks[0].type))
            continue
        fields.append(arrow_field(field.name, kind))
        columns.append(pa.chunked_array(chunks, kind.to_arrow()))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))
