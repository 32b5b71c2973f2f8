"""A table's fields as families of typed variants, and how new values widen them.

A *family* is one JSON key at one place (``size``, or ``b`` inside the record ``a``). Its
variants are leaf columns, one per (kind, array dimension), and records, one per array
dimension, whose own keys are families again. The variant named after the key itself is
the one seen first; every later one gets a type suffix (``size_double``, ``a_array_string``,
``a.b_array_record``) and ``evolved_from`` naming the field. Each column's ``origin`` keeps
the path of (key, dimension, name) steps, so the families are rebuilt from the catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kyma.engine.catalog import TableInfo
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column, KymaType
from kyma.ingest.typed._kinds import (
    DECLARED,
    KYMA_TYPES,
    PEER_NAMES,
    Shape,
    converts,
    join,
    shape_of,
)

Step = tuple[str, int, str]
"""(JSON key, array dimension, name segment) of one step of a column's path."""


@dataclass
class Record:
    name: str
    dim: int
    path: tuple[Step, ...]
    children: dict[str, Family] = field(default_factory=dict)

    def columns(self) -> Iterator[str]:
        for family in self.children.values():
            yield from family.columns()


@dataclass
class Family:
    key: str
    base: str
    """The field's own column name (``a.b``): the name of its first variant."""
    parent: Record | None
    leaves: dict[tuple[str, int], str] = field(default_factory=dict)
    records: dict[int, Record] = field(default_factory=dict)

    def columns(self) -> Iterator[str]:
        yield from self.leaves.values()
        for record in self.records.values():
            yield from record.columns()

    def leaf_targets(self, value: Any, shape: Shape, *, routing: bool) -> list[tuple[str, int]]:
        """Leaf variants a value goes to: every one of its dimension or more that converts it."""
        return [
            (kind, dim)
            for kind, dim in self.leaves
            if dim >= shape.dim and (shape.kind is None or converts(value, kind, routing=routing))
        ]

    def record_targets(self, shape: Shape) -> list[Record]:
        """A record goes to the record variant of its own dimension and to the widest one."""
        if not self.records:
            return []
        widest = self.records[max(self.records)]
        exact = self.records.get(shape.dim)
        targets = [exact] if exact is not None else []
        if widest.dim >= shape.dim and widest is not exact:
            targets.append(widest)
        return targets


@dataclass
class NewColumn:
    column: Column
    origin: dict[str, Any]


@dataclass
class Schema:
    """The typed families of a table, plus every name in use (columns and record prefixes)."""

    families: dict[str, Family]
    names: set[str]
    new: list[NewColumn] = field(default_factory=list)

    @classmethod
    def of(cls, info: TableInfo) -> Schema:
        schema = cls({}, {c.name for c in info.columns})
        for column in info.columns:
            origin = info.origins.get(column.name) or _declared(column)
            if origin is not None:
                schema._place(column.name, origin)
        return schema

    def _place(self, name: str, origin: dict[str, Any]) -> None:
        families, parent = self.families, None
        *records, (key, dim, _) = [tuple(step) for step in origin["path"]]
        for rkey, rdim, segment in records:
            family = _family(families, rkey, parent)
            record = family.records.get(rdim)
            if record is None:
                path = (*(parent.path if parent else ()), (rkey, rdim, segment))
                record = Record(_join(parent, segment), rdim, path)
                family.records[rdim] = record
                self.names.add(record.name)
            families, parent = record.children, record
        _family(families, key, parent).leaves[(origin["kind"], dim)] = name

    def opaque(self, info: TableInfo) -> set[str]:
        """Columns typed evolution leaves to the plain converters (defaults, vectors…)."""
        placed = {name for family in self.families.values() for name in family.columns()}
        return {c.name for c in info.columns if c.name not in placed}

    def family(self, key: str) -> Family:
        return _family(self.families, key, None)

    # ------------------------------------------------------------ planning

    def plan(self, family: Family, values: list[tuple[Any, Shape]]) -> None:
        """Add the variants ``values`` need to ``family`` (and to its records' families)."""
        if not family.leaves and not family.records:
            self._first_sight(family, values)
        else:
            for value, shape in values:
                self._widen(family, value, shape)
        routed: dict[int, dict[str, list[tuple[Any, Shape]]]] = {}
        for value, shape in values:
            if shape.record:
                for record in family.record_targets(shape):
                    children = routed.setdefault(record.dim, {})
                    for row in records_in(value, shape.dim):
                        for key, child in row.items():
                            child_shape = shape_of(child)
                            if child_shape is not None:
                                children.setdefault(key, []).append((child, child_shape))
        for dim, children in routed.items():
            record = family.records[dim]
            for key, child_values in children.items():
                self.plan(_family(record.children, key, record), child_values)

    def _first_sight(self, family: Family, values: list[tuple[Any, Shape]]) -> None:
        """The widest type and largest dimension take the field's name (records first, then
        arrays, then primitives); every other type seen gets a suffixed variant."""
        record_dims = sorted({s.dim for _, s in values if s.record})
        leaves = [(v, s) for v, s in values if not s.record]
        if leaves:
            kinds = {(s.kind, s.dim) for _, s in leaves if s.kind is not None}
            widest = (join(k for k, _ in kinds), max(s.dim for _, s in leaves))
            for kind, dim in kinds:
                if kind == "long" and ("double", dim) in kinds:
                    longs = [v for v, s in leaves if s == Shape(False, "long", dim)]
                    if converts(longs, "double", routing=False):
                        continue  # long and double together: double only
                if (kind, dim) != widest:
                    self._add_leaf(family, kind, dim, own_name=False)
            self._add_leaf(family, *widest, own_name=not record_dims)
        for dim in record_dims:
            self._add_record(family, dim, own_name=dim == record_dims[-1])

    def _widen(self, family: Family, value: Any, shape: Shape) -> None:
        """A wider or non-convertible value adds its exact variant, and the widest variant of
        the family's leaves with it (``a_string`` and ``a_array_string`` beside ``a[]``)."""
        if shape.record:
            if not family.records or max(family.records) < shape.dim:
                self._add_record(family, shape.dim, own_name=False)
            return
        if family.leaf_targets(value, shape, routing=False):
            return
        exact = (shape.kind or "string", shape.dim)
        kinds = [k for k, _ in family.leaves] + [exact[0]]
        widest = (join(kinds), max([d for _, d in family.leaves] + [shape.dim]))
        for kind, dim in dict.fromkeys([exact, widest]):
            if (kind, dim) not in family.leaves:
                self._add_leaf(family, kind, dim, own_name=False)

    def _add_leaf(self, family: Family, kind: str, dim: int, *, own_name: bool) -> None:
        suffix = f"_{_dims(dim)}{PEER_NAMES[kind]}"
        name = self._name(family.base, suffix, own_name)
        segment = name.rsplit(".", 1)[-1]
        family.leaves[(kind, dim)] = name
        path = [*(family.parent.path if family.parent else ()), (family.key, dim, segment)]
        total = dim + sum(step[1] for step in path[:-1])
        evolved = _original(path) if name != _original(path) else None
        column = Column(name, KymaType.array(KYMA_TYPES[kind], total), evolved_from=evolved)
        self.new.append(NewColumn(column, {"path": [list(s) for s in path], "kind": kind}))

    def _add_record(self, family: Family, dim: int, *, own_name: bool) -> None:
        name = self._name(family.base, f"_{_dims(dim)}record", own_name)
        segment = name.rsplit(".", 1)[-1]
        path = (*(family.parent.path if family.parent else ()), (family.key, dim, segment))
        family.records[dim] = Record(name, dim, path)

    def _name(self, base: str, suffix: str, own_name: bool) -> str:
        name = base if own_name and base not in self.names else base + suffix
        candidate, n = name, 1
        while candidate in self.names:
            n += 1
            candidate = f"{name}_{n}"
        self.names.add(candidate)
        return candidate


def _dims(dim: int) -> str:
    return "" if dim == 0 else "array_" if dim == 1 else f"array{dim}_"


def _original(path: list[tuple[str, int, str]] | tuple[Step, ...]) -> str:
    """The name a column's path has without any type suffix: its ``evolved_from``."""
    return ".".join(key for key, _, _ in path)


def _join(parent: Record | None, segment: str) -> str:
    return segment if parent is None else f"{parent.name}.{segment}"


def _family(families: dict[str, Family], key: str, parent: Record | None) -> Family:
    family = families.get(key)
    if family is None:
        family = families[key] = Family(key, _join(parent, key), parent)
    return family


def _declared(column: Column) -> dict[str, Any] | None:
    """The origin of a column declared by DDL (or evolved as a string): its name, its
    kind and dimension; None for defaults and types typed evolution never infers."""
    if column.name in DEFAULT_COLUMN_NAMES or "." in column.name:
        return None
    kind = DECLARED.get(column.type.element.name)
    if kind is None:
        return None
    return {"path": [[column.name, column.type.array_depth, column.name]], "kind": kind}


def records_in(value: Any, dim: int) -> Iterator[dict[str, Any]]:
    """The records inside ``dim`` levels of arrays."""
    if value is None:
        return
    if dim == 0:
        yield value
        return
    for item in value:
        yield from records_in(item, dim - 1)
