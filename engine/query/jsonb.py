"""Postgres' jsonb functions over dynamic values (CBOR in a Binary column), as DataFusion UDFs.

Each function decodes each *distinct* value of a batch once (``pc.unique``), answers per
distinct value, and spreads the answers back with ``take``: a batch of a million rows holding
a few hundred distinct documents costs a few hundred decodes. Values come back as Postgres
answers them: jsonb results stay CBOR (a dynamic column: clients see JSON), text renders as
Postgres renders jsonb (``{"a": 1, "b": [1, 2]}``, object keys shortest first).

Paths (``->``, ``#>``) are JSON arrays of steps: a string is an object key, an integer an
array index (negative from the end), and a one-string list (``["0"]``, a ``#>`` step) is a key
of an object or, when it spells an integer, an index of an array.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import cbor2
import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf

from kyma.engine.errors import InvalidJsonError, JsonValueError, SqlError
from kyma.engine.types import KYMA_TYPE_KEY

DYNAMIC = pa.field("jsonb", pa.binary(), metadata={KYMA_TYPE_KEY: b"dynamic"})
_ABSENT = object()


def constant(array: pa.Array) -> Any:
    """The value of a literal argument (DataFusion passes literals as arrays)."""
    values = array.drop_null()
    return values[0].as_py() if len(values) else None


def parse_path(path_json: Any) -> list:
    try:
        path = json.loads(path_json or "[]")
    except ValueError:
        path = None
    if not isinstance(path, list) or not all(_is_step(s) for s in path):
        raise SqlError(f"a jsonb path must be a JSON array of keys and indexes, got {path_json!r}")
    return path


def _is_step(step: Any) -> bool:
    if isinstance(step, list):
        return len(step) == 1 and isinstance(step[0], str)
    return isinstance(step, str) or (isinstance(step, int) and not isinstance(step, bool))


def lookup(value: Any, path: list) -> Any:
    """The value at ``path`` in ``value``; ``_ABSENT`` when a step finds nothing."""
    for step in path:
        if isinstance(step, list):
            step = step[0] if isinstance(value, dict) else _index(step[0])
        if isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
            continue
        if not (isinstance(step, int) and isinstance(value, list)):
            return _ABSENT
        if not -len(value) <= step < len(value):
            return _ABSENT
        value = value[step]
    return value


def _index(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def render(value: Any) -> str:
    """A value as Postgres prints jsonb (Python's C JSON encoder, on a copy whose objects
    are in jsonb's key order; doubles in the words shredded ones read in (``_shred.double_text``)).

    >>> render({"bb": [1, 2.5, None], "a": {"x": "é\\n"}, "c": True})
    '{"a": {"x": "é\\\\n"}, "c": true, "bb": [1, 2.5, null]}'
    """
    return _ENCODER.encode(_ordered(value))


_ENCODER = json.JSONEncoder(separators=(", ", ": "), ensure_ascii=False, default=str)


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(sorted(((str(k), _ordered(v)) for k, v in value.items()), key=_key_order))
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def _key_order(item: tuple[str, Any]) -> tuple[int, bytes]:
    """jsonb's key order: shorter keys first, then by their bytes."""
    raw = item[0].encode()
    return len(raw), raw


def text_of(value: Any) -> str | None:
    """``->>``: NULL for JSON null, a string as it is, anything else rendered."""
    if value is None or value is _ABSENT:
        return None
    return value if isinstance(value, str) else render(value)


def kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "string"


def contains(a: Any, b: Any) -> bool:
    """``a @> b`` as Postgres defines jsonb containment."""
    if isinstance(b, dict):
        return isinstance(a, dict) and all(k in a and contains(a[k], v) for k, v in b.items())
    if isinstance(b, list):
        if not isinstance(a, list):
            return False
        return all(any(contains(x, v) for x in a) for v in b)
    if isinstance(a, list):  # an array contains a scalar it holds at top level
        return any(_same_scalar(x, b) for x in a)
    return _same_scalar(a, b)


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or kind(a) != kind(b):
        return False
    return bool(a == b)


def equal(a: Any, b: Any) -> bool:
    """jsonb equality: objects whatever their key order, numbers by value, no bool is 1."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return _same_scalar(a, b)


def exists(value: Any, key: str) -> bool:
    """``value ? key``: a top-level key of an object, string of an array, or the string."""
    if isinstance(value, dict):
        return key in value
    if isinstance(value, list):
        return any(isinstance(x, str) and x == key for x in value)
    return isinstance(value, str) and value == key


def _per_value(values: pa.Array, answer: Callable[[Any], Any], dtype: pa.DataType) -> pa.Array:
    """``answer`` of each distinct decoded value, spread over ``values`` (NULL stays NULL)."""
    distinct = pc.unique(values)
    answers = [None if raw is None else answer(cbor2.loads(raw)) for raw in distinct.to_pylist()]
    return pa.array(answers, dtype).take(pc.index_in(values, distinct))


def _encoded(value: Any) -> bytes | None:
    return None if value is _ABSENT else cbor2.dumps(value)


def jsonb_get(values: pa.Array, path_json: pa.Array) -> pa.Array:
    """``->`` and ``#>``: the value at a path, as jsonb (NULL when absent)."""
    path = parse_path(constant(path_json))
    return _per_value(values, lambda v: _encoded(lookup(v, path)), pa.binary())


def dyn_get(values: pa.Array, path_json: pa.Array) -> pa.Array:
    """``->>`` and ``#>>``: the value at a path as text (NULL when absent or JSON null)."""
    path = parse_path(constant(path_json))
    return _per_value(values, lambda v: text_of(lookup(v, path)), pa.string())


def jsonb_text(values: pa.Array) -> pa.Array:
    """``jsonb::text``."""
    return _per_value(values, render, pa.string())


def jsonb_from_text(texts: pa.Array) -> pa.Array:
    """``text::jsonb``: InvalidJsonError (22P02) for text that is not JSON."""
    distinct = pc.unique(texts)
    out = [None if text is None else cbor2.dumps(_parsed(text)) for text in distinct.to_pylist()]
    return pa.array(out, pa.binary()).take(pc.index_in(texts, distinct))


def _parsed(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError:
        raise InvalidJsonError(f"invalid input syntax for type json: {text!r}") from None


def _no_constant(word: str) -> Any:
    raise ValueError(word)


def typeof(values: pa.Array) -> pa.Array:
    return _per_value(values, kind, pa.string())


def array_length(values: pa.Array) -> pa.Array:
    return _per_value(values, lambda v: len(_array(v, "get array length of")), pa.int32())


def _array(value: Any, what: str) -> list:
    """``value`` when it is an array; else Postgres' error (``of a non-array``, ``from an
    object``, ``… a scalar``)."""
    if not isinstance(value, list):
        if not isinstance(value, dict):
            raise JsonValueError(f"cannot {what} a scalar")
        raise JsonValueError(
            f"cannot {what} {'a non-array' if what.endswith('of') else 'an object'}"
        )
    return value


def _object(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise JsonValueError(
            f"cannot {what} {'an array' if isinstance(value, list) else 'a scalar'}"
        )
    return value


def object_keys(values: pa.Array) -> pa.Array:
    def keys(v: Any) -> list[str]:
        return [k for _, k, _ in _items(_object(v, "call jsonb_object_keys on"))]

    return _per_value(values, keys, pa.list_(pa.string()))


def _items(value: dict) -> list[tuple[tuple[int, bytes], str, Any]]:
    """An object's (order, key, value) in jsonb's key order."""
    found = [(_key_order((str(k), v)), str(k), v) for k, v in value.items()]
    return sorted(found, key=lambda item: item[0])


def elements(values: pa.Array) -> pa.Array:
    return _per_value(
        values,
        lambda v: [cbor2.dumps(x) for x in _array(v, "extract elements from")],
        ELEMENTS,
    )


def elements_text(values: pa.Array) -> pa.Array:
    return _per_value(
        values,
        lambda v: [text_of(x) for x in _array(v, "extract elements from")],
        pa.list_(pa.string()),
    )


ELEMENTS = pa.list_(DYNAMIC)
EACH = pa.list_(pa.struct([("key", pa.string()), DYNAMIC.with_name("value")]))
EACH_TEXT = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))


def each(values: pa.Array) -> pa.Array:
    def pairs(v: Any) -> list[dict]:
        items = _items(_object(v, "call jsonb_each on"))
        return [{"key": k, "value": cbor2.dumps(x)} for _, k, x in items]

    return _per_value(values, pairs, EACH)


def each_text(values: pa.Array) -> pa.Array:
    def pairs(v: Any) -> list[dict]:
        items = _items(_object(v, "call jsonb_each_text on"))
        return [{"key": k, "value": text_of(x)} for _, k, x in items]

    return _per_value(values, pairs, EACH_TEXT)


def _pairwise(test: Callable[[Any, Any], bool]) -> Callable[[pa.Array, pa.Array], pa.Array]:
    """A UDF of two jsonb values: a constant right side (a literal) decodes once; two
    columns decode per row (two documents a row)."""

    def compare(values: pa.Array, other: pa.Array) -> pa.Array:
        if len(pc.unique(other)) <= 1:
            raw = constant(other)
            if raw is None:
                return pa.nulls(len(values), pa.bool_())
            wanted = cbor2.loads(raw)
            return _per_value(values, lambda v: test(v, wanted), pa.bool_())
        pairs = zip(values.to_pylist(), other.to_pylist(), strict=True)
        answers = [
            None if a is None or b is None else test(cbor2.loads(a), cbor2.loads(b))
            for a, b in pairs
        ]
        return pa.array(answers, pa.bool_())

    return compare


def exists_udf(values: pa.Array, key: pa.Array) -> pa.Array:
    wanted = constant(key)
    if wanted is None:
        return pa.nulls(len(values), pa.bool_())
    return _per_value(values, lambda v: exists(v, wanted), pa.bool_())


def exists_any(values: pa.Array, keys: pa.Array) -> pa.Array:
    wanted = [k for k in (constant(keys) or []) if k is not None]
    return _per_value(values, lambda v: any(exists(v, k) for k in wanted), pa.bool_())


def exists_all(values: pa.Array, keys: pa.Array) -> pa.Array:
    wanted = [k for k in (constant(keys) or []) if k is not None]
    return _per_value(values, lambda v: all(exists(v, k) for k in wanted), pa.bool_())


_B, _S = pa.binary(), pa.string()
FUNCTIONS = (
    udf(jsonb_get, [_B, _S], DYNAMIC, "immutable", name="kyma_jsonb_get"),
    udf(jsonb_text, [_B], _S, "immutable", name="kyma_jsonb_text"),
    udf(lambda values: values, [_B], DYNAMIC, "immutable", name="kyma_jsonb_of"),
    udf(jsonb_from_text, [_S], DYNAMIC, "immutable", name="kyma_jsonb"),
    udf(typeof, [_B], _S, "immutable", name="kyma_jsonb_typeof"),
    udf(array_length, [_B], pa.int32(), "immutable", name="kyma_jsonb_array_length"),
    udf(object_keys, [_B], pa.list_(_S), "immutable", name="kyma_jsonb_object_keys"),
    udf(elements, [_B], ELEMENTS, "immutable", name="kyma_jsonb_array_elements"),
    udf(elements_text, [_B], pa.list_(_S), "immutable", name="kyma_jsonb_array_elements_text"),
    udf(each, [_B], EACH, "immutable", name="kyma_jsonb_each"),
    udf(each_text, [_B], EACH_TEXT, "immutable", name="kyma_jsonb_each_text"),
    udf(_pairwise(contains), [_B, _B], pa.bool_(), "immutable", name="kyma_jsonb_contains"),
    udf(_pairwise(equal), [_B, _B], pa.bool_(), "immutable", name="kyma_jsonb_equals"),
    udf(exists_udf, [_B, _S], pa.bool_(), "immutable", name="kyma_jsonb_exists"),
    udf(exists_any, [_B, pa.list_(_S)], pa.bool_(), "immutable", name="kyma_jsonb_exists_any"),
    udf(exists_all, [_B, pa.list_(_S)], pa.bool_(), "immutable", name="kyma_jsonb_exists_all"),
)
