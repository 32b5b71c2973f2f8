"""Value kinds and their conversions: the peer's widest-type table, as data.

A JSON value is normalized once: integers are ``long``, other numbers ``double``, strings
holding an RFC 3339 date-time with a zone ``timestamp`` (a :class:`Ts`), other strings
``string``. Arrays get the widest kind of their leaves and their dimension; records
(objects) are records. A value kyma cannot type without changing its meaning (a ragged
array, a record with a key that cannot be a column name, nesting too deep) becomes its JSON
text, a ``string``.

=========  =======================================  ================================
kind       converts into (no loss)                  incompatible with
=========  =======================================  ================================
bool       long, double, string                     timestamp
long       double (when exact), string              timestamp (but routed into one)
double     string                                   timestamp
timestamp  long (epoch ns), string                  bool, double
string     —                                        —
=========  =======================================  ================================
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kyma.engine.types import parse_timestamp
from kyma.ingest.coerce._json import is_int
from kyma.ingest.evolution import is_safe_name

KINDS = ("bool", "timestamp", "long", "double", "string")
"""In order of width: the widest kind of a compatible set is its last."""
PEER_NAMES = {
    "bool": "boolean",
    "int": "int",
    "long": "long",
    "double": "double",
    "timestamp": "timestamp",
    "string": "string",
}
KYMA_TYPES = {
    "bool": "bool",
    "int": "int",
    "long": "long",
    "double": "real",
    "timestamp": "timestamp",
    "string": "string",
}
DECLARED = {v: k for k, v in KYMA_TYPES.items()}
_INCOMPATIBLE = (frozenset({"bool", "timestamp"}), frozenset({"double", "timestamp"}))
_INTO = {
    "bool": {"bool"},
    "int": {"bool", "long"},  # a declared int column: longs in Int32 range
    "long": {"bool", "long", "timestamp"},
    "double": {"bool", "long", "double"},
    "timestamp": {"timestamp"},
    "string": set(KINDS),
}
INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)
MAX_NAME = 255
_NAME_ROOM = 24  # the longest type suffix a name may still get ("_array99_timestamp")


class Ts(str):
    """A string that is a timestamp; ``ns`` is its instant in epoch nanoseconds."""

    ns: int

    def __new__(cls, text: str, ns: int) -> Ts:
        obj = super().__new__(cls, text)
        obj.ns = ns
        return obj


@dataclass(frozen=True)
class Shape:
    """A value's type: a record or a leaf ``kind`` (None: only nulls), in ``dim`` arrays."""

    record: bool
    kind: str | None
    dim: int

    def label(self) -> str:
        """How written-data statistics name it: ``long``, ``string[][]``, ``record[]``."""
        base = "record" if self.record else PEER_NAMES.get(self.kind or "", "unknown")
        return base + "[]" * self.dim


STRING = Shape(False, "string", 0)


def join(kinds: Iterable[str | None]) -> str:
    """The widest kind of a set: ``string`` when two of them are incompatible.

    >>> join(["bool", "long", "double"]), join(["long", "timestamp"]), join(["bool", "timestamp"])
    ('double', 'long', 'string')
    """
    found = {"long" if k == "int" else k for k in kinds if k is not None}
    if not found or any(pair <= found for pair in _INCOMPATIBLE):
        return "string"
    return max(found, key=KINDS.index)


def leaf_kind(value: Any) -> str:
    if type(value) is bool:
        return "bool"
    if isinstance(value, Ts):
        return "timestamp"
    if type(value) is str:
        return "string"
    if type(value) is float:
        return "double"
    return "long"


def convert(value: Any, kind: str) -> Any:
    """``value`` (a normalized leaf) as ``kind`` stores it; ValueError if it would change.

    ``long`` into ``timestamp`` is the one routing exception (epoch nanoseconds).
    """
    source = leaf_kind(value)
    if source == kind:
        return value.ns if kind == "timestamp" else (int(value) if kind == "long" else value)
    if kind == "string":
        return json.dumps(value) if source in ("bool", "long", "double") else str(value)
    if source == "bool" and kind in ("long", "int", "double"):
        return int(value) if kind != "double" else float(value)
    if source == "long" and kind == "double":
        as_float = float(value)
        if int(as_float) == value:
            return as_float
    if source == "long" and kind == "int" and INT32[0] <= value <= INT32[1]:
        return int(value)
    if source == "long" and kind == "timestamp":
        return int(value)
    if source == "timestamp" and kind == "long":
        return value.ns
    raise ValueError(f"{value!r} does not convert to {kind}")


def converts(value: Any, kind: str, *, routing: bool) -> bool:
    """Whether every leaf of ``value`` converts to ``kind`` (``routing`` allows long into
    timestamp, which never counts as the value's own field)."""
    if value is None:
        return True
    if type(value) is list:
        return all(converts(item, kind, routing=routing) for item in value)
    source = leaf_kind(value)
    if source == "long" and kind == "timestamp":
        return routing
    if source not in _INTO[kind]:
        return False
    try:
        convert(value, kind)
    except ValueError:
        return False
    return True


def text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def normalize(value: Any, room: int) -> tuple[Any, Shape | None]:
    """The value as typed evolution stores it, and its shape. ``room`` is how many more
    characters a column name may grow by (records add ``.key``)."""
    if value is None:
        return None, None
    kind = type(value)
    if kind is bool:
        return value, Shape(False, "bool", 0)
    if kind is str:
        ns = parse_timestamp(value, require_zone=True)
        if ns is not None and INT64[0] <= ns <= INT64[1]:
            return Ts(value, ns), Shape(False, "timestamp", 0)
        return value, STRING
    if kind is float:
        return value, Shape(False, "double", 0)
    if is_int(value):
        if INT64[0] <= value <= INT64[1]:
            return value, Shape(False, "long", 0)
        return str(value), STRING
    if kind is dict:
        if not all(is_safe_name(k) and len(k) + _NAME_ROOM < room for k in value):
            return text(value), STRING
        return {k: normalize(v, room - len(k) - 1)[0] for k, v in value.items()}, Shape(
            True, None, 0
        )
    items = [normalize(item, room) for item in value]
    values = [v for v, _ in items]
    shape = list_shape(values, [s for _, s in items])
    return (values, shape) if shape is not None else (text(value), STRING)


def shape_of(value: Any) -> Shape | None:
    """The shape of an already normalized value."""
    if value is None:
        return None
    if type(value) is dict:
        return Shape(True, None, 0)
    if type(value) is list:
        return list_shape(value, [shape_of(v) for v in value])
    return Shape(False, leaf_kind(value), 0)


def list_shape(values: list[Any], shapes: list[Shape | None]) -> Shape | None:
    """An array's shape from its items'; None when ragged (items of several dimensions, or
    records beside other values)."""
    found = {s for s in shapes if s is not None}
    if not found:
        return Shape(False, None, 1)
    dims = {s.dim for s in found}
    records = {s.record for s in found}
    if len(dims) > 1 or len(records) > 1:
        return None
    (dim,) = dims
    if True in records:
        return Shape(True, None, dim + 1)
    kind = join(s.kind for s in found)
    if len({s.kind for s in found} - {None}) > 1 and not converts(values, kind, routing=False):
        kind = "string"
    return Shape(False, kind, dim + 1)
