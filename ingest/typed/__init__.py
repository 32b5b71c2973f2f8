"""Typed schema evolution: NDJSON → a batch of a typed table's columns, plus the columns to add.

For tables with ``schema_evolution = 'typed'``. New fields get their inferred type by the
peer's rules (``_kinds`` has the widest-type table, ``_families`` the naming and widening,
``_route`` the routing of values); ``_timestamp``, ``props`` and columns typed evolution
never infers (``vector``, ``dynamic``) take their fields with the plain converters. Every
value lands, unchanged in meaning, in at least one column (or, for a field that cannot be a
column name, in ``props``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import IngestError
from kyma.engine.types import Column
from kyma.ingest.coerce import Coerced
from kyma.ingest.coerce._slow import EMPTY, assemble, objects
from kyma.ingest.coerce._values import convert_rows
from kyma.ingest.evolution import MAX_NEW_COLUMNS, EvolutionPlan, is_safe_name
from kyma.ingest.typed._families import NewColumn, Schema
from kyma.ingest.typed._kinds import MAX_NAME, normalize
from kyma.ingest.typed._route import Cells, route

__all__ = ["TypedCoerced", "coerce_typed"]


@dataclass
class TypedCoerced:
    """The batch (of the table's columns plus ``new``), and the columns to add first."""

    coerced: Coerced
    plan: EvolutionPlan
    new: list[NewColumn] = field(default_factory=list)

    @property
    def origins(self) -> dict[str, dict[str, Any]]:
        return {n.column.name: n.origin for n in self.new}


def coerce_typed(
    body: bytes, info: TableInfo, *, evolve: bool, ingest_time_ns: int
) -> TypedCoerced:
    """Coerce a body for a typed table; IngestError names the first bad line and field."""
    rows = list(objects(body))
    if not rows:
        raise IngestError(EMPTY)
    schema = Schema.of(info)
    plain = schema.opaque(info)
    keys = list(dict.fromkeys(k for _, obj in rows for k in obj))
    typed = [k for k in keys if k not in plain and is_safe_name(k)]
    props = [k for k in keys if k not in plain and not is_safe_name(k)]
    values = {k: [normalize(obj.get(k), MAX_NAME - len(k)) for _, obj in rows] for k in typed}
    dropped: list[str] = []
    if not evolve:
        dropped, props = props, []
    else:
        for key in typed:
            trial = copy.deepcopy(schema)
            present = [(v, s) for v, s in values[key] if s is not None]
            trial.plan(trial.family(key), present)
            if len(trial.new) > MAX_NEW_COLUMNS:
                props.append(key)  # too many new columns for one request: the field waits
            else:
                schema = trial
        typed = [k for k in typed if k not in props]
    columns = [*info.columns, *(n.column for n in schema.new)]
    cells: dict[str, list[Any]] = {c.name: [None] * len(rows) for c in columns}
    labels: dict[str, set[str]] = {}
    for key in typed:
        family = schema.families.get(key)
        for i, (value, shape) in enumerate(values[key]):
            out: Cells = {}
            stored = family is not None and route(family, value, shape, out)
            if shape is not None and not stored:
                if evolve:
                    raise AssertionError(f"typed evolution lost a value of {key!r}: {value!r}")
                dropped.append(key)
            for name, (cell, seen) in out.items():
                cells[name][i] = cell
                labels.setdefault(name, set()).update(seen)
    standard = [c for c in columns if c.name in plain]
    converted, count = convert_rows(rows, standard, frozenset(props))
    arrays = []
    for column in columns:
        if column.name in converted:
            arrays.append(pa.array(converted[column.name], column.type.to_arrow()))
        else:
            arrays.append(_array(cells[column.name], column))
    coerced = assemble(arrays, columns, count, ingest_time_ns, [])
    plan = EvolutionPlan(
        new_columns=[n.column.name for n in schema.new],
        props_fields=props,
        dropped_fields=list(dict.fromkeys(dropped)),
    )
    coerced = Coerced(coerced.batch, coerced.rows, [], {k: sorted(v) for k, v in labels.items()})
    return TypedCoerced(coerced, plan, schema.new)


def _array(cells: list[Any], column: Column) -> pa.Array:
    try:
        return pa.array(cells, column.type.to_arrow())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:  # a kyma bug, not input
        raise IngestError(f"column {column.name!r}: cannot build {column.type}: {e}") from e
