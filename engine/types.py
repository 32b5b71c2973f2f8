"""kyma's column types and their Arrow representation.

==============  ==================================
kyma type       Arrow type
==============  ==================================
bool            bool
int             int32
long            int64
real            float64 (SQL ``double precision``; kept for compatibility)
float4          float32 (SQL ``real``, ``float4``, ``float(1..24)``)
string          utf8
timestamp       timestamp[ns, UTC]
vector(N)       fixed_size_list<float32>[N]
array(T)        list<T> (T any type but dynamic: ``array(array(long))`` nests)
dynamic         binary (CBOR of a JSON value)
==============  ==================================

Every table also has the default columns ``_timestamp timestamp`` and ``props dynamic``.

kyma's ``real`` is a 64-bit float, as it always was (tables, the tables API and stored
extents keep their meaning); Postgres's ``real`` is 32 bits, so SQL DDL maps ``real``,
``float4`` and ``float(p)`` with p <= 24 to ``float4``, and ``double precision`` to ``real``.
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass, field

import pyarrow as pa

from kyma.engine.errors import SchemaError

TIMESTAMP = pa.timestamp("ns", tz="UTC")
KYMA_TYPE_KEY = b"kyma.type"
"""Arrow field metadata naming the kyma type where Arrow's alone is ambiguous (dynamic is
binary); DataFusion carries it through column references, so answers can be rendered."""

_SCALARS: dict[str, pa.DataType] = {
    "bool": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "real": pa.float64(),
    "float4": pa.float32(),
    "string": pa.string(),
    "timestamp": TIMESTAMP,
    "dynamic": pa.binary(),
}
SCALARS: tuple[str, ...] = tuple(_SCALARS)
"""kyma's scalar types, stated once: every per-type table elsewhere covers exactly these."""
_VECTOR = re.compile(r"vector\((\d+)\)")
_ARRAY = re.compile(r"array\((.+)\)")
MAX_VECTOR_DIM = 65536
MAX_ARRAY_DEPTH = 64


@dataclass(frozen=True)
class KymaType:
    """A column type: a name such as ``long`` or ``vector(3)``."""

    name: str

    @classmethod
    def parse(cls, text: str) -> KymaType:
        """Parse a type name; raise SchemaError naming the bad text.

        >>> KymaType.parse(" Vector( 3 ) ").name, KymaType.parse("ARRAY(array(long))").name
        ('vector(3)', 'array(array(long))')
        """
        norm = re.sub(r"\s+", "", text).lower()
        if norm in _SCALARS:
            return cls(norm)
        match = _VECTOR.fullmatch(norm)
        if match and 0 < int(match.group(1)) <= MAX_VECTOR_DIM:
            return cls(f"vector({int(match.group(1))})")
        depth = 0
        while (match := _ARRAY.fullmatch(norm)) and depth < MAX_ARRAY_DEPTH:
            norm, depth = match.group(1), depth + 1
        if depth and norm in _SCALARS and norm != "dynamic":
            return cls("array(" * depth + norm + ")" * depth)
        if depth and _VECTOR.fullmatch(norm):
            return cls("array(" * depth + cls.parse(norm).name + ")" * depth)
        raise SchemaError(
            f"unknown type {text!r}: expected {', '.join(SCALARS[:-1])}, "
            f"vector(N) with 1 <= N <= {MAX_VECTOR_DIM}, {SCALARS[-1]}, or array(T) of any of"
            f" them but {SCALARS[-1]}"
        )

    @classmethod
    def array(cls, element: KymaType | str, depth: int = 1) -> KymaType:
        """``element`` inside ``depth`` arrays.

        >>> KymaType.array("long", 2).name
        'array(array(long))'
        """
        name = element if isinstance(element, str) else element.name
        return cls.parse("array(" * depth + name + ")" * depth)

    @property
    def array_depth(self) -> int:
        """How many arrays nest around the element type (0 for a non-array).

        >>> KymaType("array(array(real))").array_depth, KymaType("real").array_depth
        (2, 0)
        """
        return self.name.count("array(")

    @property
    def element(self) -> KymaType:
        """The innermost element type (the type itself for a non-array)."""
        depth = self.array_depth
        return KymaType(self.name[len("array(") * depth : len(self.name) - depth])

    @property
    def vector_dim(self) -> int | None:
        match = _VECTOR.fullmatch(self.name)
        return int(match.group(1)) if match else None

    def to_arrow(self) -> pa.DataType:
        match = _ARRAY.fullmatch(self.name)
        if match:
            return pa.list_(KymaType(match.group(1)).to_arrow())
        dim = self.vector_dim
        if dim is not None:
            return pa.list_(pa.float32(), dim)
        return _SCALARS[self.name]

    @classmethod
    def from_arrow(cls, dtype: pa.DataType) -> KymaType:
        """The kyma type an Arrow type stores; raise SchemaError if there is none."""
        if pa.types.is_fixed_size_list(dtype) and dtype.value_type == pa.float32():
            return cls(f"vector({dtype.list_size})")
        if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
            element = cls.from_arrow(dtype.value_type)
            if element.name != "dynamic":
                return cls(f"array({element.name})")
        if pa.types.is_timestamp(dtype):
            return cls("timestamp")
        for name, arrow in _SCALARS.items():
            if dtype == arrow:
                return cls(name)
        raise SchemaError(f"Arrow type {dtype} has no kyma type")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Column:
    name: str
    type: KymaType
    nullable: bool = True
    evolved_from: str | None = field(default=None, compare=False)
    """The field an evolved column (``size_double``) stands for, in a typed-evolution table."""

    def to_arrow(self) -> pa.Field:
        metadata = {KYMA_TYPE_KEY: b"dynamic"} if self.type.name == "dynamic" else None
        return pa.field(self.name, self.type.to_arrow(), nullable=self.nullable, metadata=metadata)


DEFAULT_COLUMNS = (
    Column("_timestamp", KymaType("timestamp")),
    Column("props", KymaType("dynamic")),
)
DEFAULT_COLUMN_NAMES = frozenset(c.name for c in DEFAULT_COLUMNS)


def arrow_schema(columns: list[Column] | tuple[Column, ...]) -> pa.Schema:
    return pa.schema([c.to_arrow() for c in columns])


# Arrow's ISO 8601 subset (YYYY-MM-DD, optionally [T ]hh[:mm[:ss[.f{1,9}]]] and a zone Z,
# ±hh, ±hhmm or ±hh:mm), plus lowercase t and z, which RFC 3339 allows and Arrow does not.
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[Tt ]([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?)?"
    r"([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)


def parse_timestamp(text: str, *, require_zone: bool = False) -> int | None:
    """Nanoseconds since the epoch (UTC) of a timestamp string, or None if it is not one.

    No zone means UTC, unless ``require_zone``, which refuses such strings.

    >>> parse_timestamp("1970-01-01t01:00:00.5+01:00")
    500000000
    >>> parse_timestamp("1970-01-01 00:00:01") is None, parse_timestamp("1970-02-30")
    (False, None)
    """
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if require_zone and zone is None:
        return None
    clock = [int(part or 0) for part in (hour, minute, second)]
    try:
        date = datetime.date(int(year), int(month), int(day))
    except ValueError:
        return None
    if clock[0] > 23 or clock[1] > 59 or clock[2] > 59:
        return None
    seconds = calendar.timegm(date.timetuple()) + clock[0] * 3600 + clock[1] * 60 + clock[2]
    if zone and zone not in "Zz":
        hours, minutes = int(zone[1:3]), int(zone[-2:] if len(zone) > 3 else 0)
        if hours > 23 or minutes > 59:
            return None
        seconds -= (1 if zone[0] == "+" else -1) * (hours * 3600 + minutes * 60)
    return seconds * 1_000_000_000 + int((fraction or "").ljust(9, "0"))
