"""Property: random batches of JSON with conflicting types never lose a value: every input
value can be read back, unchanged in meaning, from some column of its row (or ``props``)."""

from __future__ import annotations

import datetime
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kyma.engine.catalog import TableInfo
from kyma.engine.types import DEFAULT_COLUMNS, parse_timestamp
from kyma.ingest.typed import coerce_typed

KEYS = st.sampled_from(["a", "b", "c"])
TIMESTAMPS = st.integers(0, 4_000_000_000).map(
    lambda s: datetime.datetime.fromtimestamp(s, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.integers(2**63, 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | TIMESTAMPS
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)
BATCHES = st.lists(
    st.lists(st.dictionaries(KEYS, VALUES, max_size=3), min_size=1, max_size=4),
    min_size=1,
    max_size=4,
)


def meaning(value: object) -> object:
    """What a stored value means, as JSON: timestamps as instants, numbers as numbers."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return ("number", value)
    if isinstance(value, float):
        return ("number", value if not value.is_integer() else int(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [meaning(v) for v in value]
    if isinstance(value, dict):
        return {k: meaning(v) for k, v in value.items() if v is not None}
    if hasattr(value, "value") and hasattr(value, "tz"):  # pandas' Timestamp: epoch ns
        return ("number", int(value.value))  # type: ignore[attr-defined]
    return value


def readings(value: object) -> list[object]:
    """Every way a value may legitimately read back (the peer's conversions)."""
    out = [meaning(value)]
    if isinstance(value, str):
        ns = parse_timestamp(value, require_zone=True)
        if ns is not None:
            out.append(("number", ns))
    if isinstance(value, bool):
        out.append(("number", int(value)))
    if isinstance(value, int | float | bool):
        out.append(json.dumps(value))
    if isinstance(value, list | dict):
        out.append(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    return out


_SUFFIX = re.compile(r"_(array\d*_)?(boolean|long|double|timestamp|string|int|record)(_\d+)?$")


def stored_nodes(row: dict[str, object]) -> list[tuple[tuple[str, ...], tuple[int, ...], object]]:
    """(key path without type suffixes, index path, node) of every node of every cell."""
    out = []
    for name, cell in row.items():
        keys = tuple(_SUFFIX.sub("", segment) for segment in name.split("."))
        stack: list[tuple[tuple[int, ...], object]] = [((), cell)]
        while stack:
            index, node = stack.pop()
            out.append((keys, index, node))
            if isinstance(node, list):
                stack.extend(((*index, i), item) for i, item in enumerate(node))
    return out


def _wraps(stored: tuple[int, ...], wanted: tuple[int, ...]) -> bool:
    """Whether ``stored`` is ``wanted`` with zeros inserted (values wrapped in arrays)."""
    it = iter(stored)
    for i in wanted:
        for j in it:
            if j == i:
                break
            if j != 0:
                return False
        else:
            return False
    return all(j == 0 for j in it)


def found(value: object, nodes, keys: tuple[str, ...], index: tuple[int, ...] = ()) -> bool:  # type: ignore[no-untyped-def]
    """Whether ``value`` at (``keys``, ``index``) of the input reads back from ``nodes``."""
    if value is None or _records_without_values(value):
        return True
    wanted = readings(value)
    for k, i, node in nodes:
        if k == keys and _wraps(i, index) and meaning(node) in wanted:
            return True
    if isinstance(value, dict):
        return all(found(v, nodes, (*keys, k), index) for k, v in value.items())
    if isinstance(value, list) and value:
        return all(found(v, nodes, keys, (*index, i)) for i, v in enumerate(value))
    return False


def _records_without_values(value: object) -> bool:
    """Whether ``value`` holds a record and no scalar at all (``[{}]``, ``{"a": null}``)."""
    stack, record = [value], False
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            record = True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif node is not None:
            return False
    return record


def info_of(columns, origins) -> TableInfo:  # type: ignore[no-untyped-def]
    now = datetime.datetime.now(datetime.UTC)
    options = {"schema_evolution": "typed"}
    return TableInfo(1, "t", tuple(columns), None, now, options, origins)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(BATCHES)
def test_no_value_is_lost(requests: list[list[dict]]) -> None:
    columns, origins = list(DEFAULT_COLUMNS), {}
    for lines in requests:
        body = "\n".join(json.dumps(line) for line in lines).encode()
        typed = coerce_typed(body, info_of(columns, origins), evolve=True, ingest_time_ns=0)
        columns += [n.column for n in typed.new]
        origins |= typed.origins
        rows = typed.coerced.batch.to_pylist()
        for line, row in zip(lines, rows, strict=True):
            stored = {k: v for k, v in row.items() if v is not None and k != "_timestamp"}
            nodes = stored_nodes(stored)
            for key, value in line.items():
                assert found(value, nodes, (key,)), (key, value, stored)
