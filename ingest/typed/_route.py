"""Routing: each value goes to the variant of its exact type and to every compatible wider
one, converted (``4`` into ``size`` and, as ``4.0``, into ``size_double``), wrapped into
arrays up to the variant's dimension; records spread over their keys' columns."""

from __future__ import annotations

from typing import Any

from kyma.ingest.typed._families import Family, Record
from kyma.ingest.typed._kinds import Shape, convert, shape_of

Cells = dict[str, tuple[Any, frozenset[str]]]
"""Column name → (cell value, the labels of the value types in it)."""


def route(family: Family, value: Any, shape: Shape | None, out: Cells) -> bool:
    """Put ``value``'s cells into ``out``; False if some part of it found no column."""
    if shape is None:
        return True
    if not shape.record:
        targets = family.leaf_targets(value, shape, routing=True)
        label = frozenset([shape.label()])
        for kind, dim in targets:
            out[family.leaves[(kind, dim)]] = (_wrap(_convert(value, kind), dim - shape.dim), label)
        return bool(family.leaf_targets(value, shape, routing=False))
    records = family.record_targets(shape)
    stored = bool(records)
    for record in records:
        stored &= _collect(record, _wrap(value, record.dim - shape.dim), record.dim, out)
    return stored


def _collect(record: Record, value: Any, depth: int, out: Cells) -> bool:
    """The cells of a record variant's columns for one (possibly nested) record value."""
    if depth == 0:
        stored = True
        for key, child in value.items():
            family = record.children.get(key)
            shape = shape_of(child)
            if family is None:
                stored &= shape is None
            else:
                stored &= route(family, child, shape, out)
        return stored
    if value is None:
        return True
    parts: list[Cells] = []
    stored = True
    for item in value:
        part: Cells = {}
        if item is not None:
            stored &= _collect(record, item, depth - 1, part)
        parts.append(part)
    for name in record.columns():
        labels = frozenset().union(*(p[name][1] for p in parts if name in p))
        out[name] = ([p[name][0] if name in p else None for p in parts], labels)
    return stored


def _convert(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if type(value) is list:
        return [_convert(item, kind) for item in value]
    return convert(value, kind)


def _wrap(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value
