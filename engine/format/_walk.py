"""One walk over an extent's distinct dynamic (CBOR) values: their paths and scalar leaves.

An extent's dynamic column is dictionary-encoded once (Arrow's hash kernel) and each distinct
value decoded once. The walk gives ``_paths.py`` each value's path set and ``_shred.py`` the
leaves by path and type. Values are grouped by their keys: log data repeats a few key sets,
so a flat group's path set is made once and its leaves are gathered a key at a time (one
list per key, typed in one pass over it). Nested values, and values with keys that are not
strings, are walked one by one.
"""

from __future__ import annotations

from typing import Any

import cbor2
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format.predicate import MAX_PATH_DEPTH

Path = tuple[str, ...]
Slot = tuple[list[int], list[Any]]
"""The ids of the distinct values holding a leaf, and the leaves."""

_INT64 = (-(2**63), 2**63 - 1)
_KINDS = {str: "string", bool: "bool", float: "double"}


class DistinctValues:
    """An extent's dynamic column, dictionary-encoded once; each distinct value decoded and
    walked once.

    ``set_ids[i]`` is the index in ``sets`` of value i's paths (keys as text, every key);
    ``slots`` maps (path, scalar type) to the values holding such a leaf there (string keys
    only; type None: an object, an array or an out-of-range number; JSON nulls are left
    out). ``leaves=False`` skips the slots (a format that does not shred).
    """

    def __init__(self, blocks: list[pa.Array], leaves: bool = True) -> None:
        self.encoded = pc.dictionary_encode(pa.chunked_array(blocks, blocks[0].type))
        dictionary = self.encoded.chunk(0).dictionary if self.encoded.num_chunks else None
        raw = [] if dictionary is None else dictionary.to_pylist()
        self.values: list[Any] = [cbor2.loads(b) for b in raw]
        self.set_ids: list[int] = [0] * len(self.values)
        self.sets: list[frozenset[Path]] = []
        self.slots: dict[tuple[Path, str | None], Slot] = {}
        self.alike: list[list[int]] = []
        """Groups of values with the same string keys in the same order, each key's leaves
        of one scalar type (``_scalar_type``) across the group: one skeleton serves them all
        (``_residual.skeletons``)."""
        self._index: dict[frozenset[Path], int] = {}
        self._walk(leaves)

    def row_counts(self) -> np.ndarray:
        """Rows per distinct value."""
        counts = np.zeros(len(self.values), np.int64)
        for chunk in self.encoded.chunks:
            ids = chunk.indices.drop_null().to_numpy(zero_copy_only=False)
            counts += np.bincount(ids, minlength=len(self.values))
        return counts

    def _set_id(self, paths: frozenset[Path]) -> int:
        found = self._index.setdefault(paths, len(self._index))
        if found == len(self.sets):
            self.sets.append(paths)
        return found

    def _walk(self, leaves: bool) -> None:
        groups: dict[tuple[Any, ...], list[int]] = {}
        scalars = self._set_id(frozenset())  # a scalar or an array: no paths
        for i, value in enumerate(self.values):
            if type(value) is dict:
                groups.setdefault(tuple(value), []).append(i)
            else:
                self.set_ids[i] = scalars
        for keys, members in groups.items():
            if all(type(k) is str for k in keys):
                columns = [[self.values[i][k] for i in members] for k in keys]
                kinds = [set(map(type, column)) for column in columns]
                if not any(dict in k for k in kinds):  # flat: the common case
                    if all(_one_kind(c, t) for c, t in zip(columns, kinds, strict=True)):
                        self.alike.append(members)
                    found = self._set_id(frozenset((k,) for k in keys))
                    for i in members:
                        self.set_ids[i] = found
                    if leaves:
                        for k, column, types in zip(keys, columns, kinds, strict=True):
                            self._gather((k,), members, column, types)
                    continue
            for i in members:
                self._walk_one(i, leaves)

    def _gather(self, path: Path, ids: list[int], column: list[Any], types: set[type]) -> None:
        """The leaves at ``path`` of values ``ids``: all at once when they share a type."""
        if len(types) == 1:
            (kind_of,) = types
            if kind_of is type(None):
                return  # JSON nulls: the path's answer is NULL, as when absent
            kind = _KINDS.get(kind_of)
            if kind_of is int and _INT64[0] <= min(column) and max(column) <= _INT64[1]:
                kind = "long"
            if kind_of is not int or kind == "long":
                slot = self.slots.setdefault((path, kind), ([], []))
                slot[0].extend(ids)
                slot[1].extend(column)
                return
        for i, leaf in zip(ids, column, strict=True):
            self._add(path, i, leaf)

    def _add(self, path: Path, i: int, leaf: Any) -> None:
        if leaf is None:
            return
        slot = self.slots.setdefault((path, _scalar_type(leaf)), ([], []))
        slot[0].append(i)
        slot[1].append(leaf)

    def _walk_one(self, i: int, leaves: bool) -> None:
        value = self.values[i]
        paths: set[Path] = set()
        _paths(value, (), paths)
        self.set_ids[i] = self._set_id(frozenset(paths))
        if leaves:
            found: list[tuple[Path, Any]] = []
            _flatten(value, (), found)
            for path, leaf in found:
                self._add(path, i, leaf)


def _one_kind(column: list[Any], types: set[type]) -> bool:
    """Whether every leaf of ``column`` (of ``types``) has the same ``_scalar_type``."""
    if len(types) != 1:
        return False
    return int not in types or _INT64[0] <= min(column) and max(column) <= _INT64[1]


def _scalar_type(value: Any) -> str | None:
    kind = type(value)
    if kind is int:
        return "long" if _INT64[0] <= value <= _INT64[1] else None
    return _KINDS.get(kind)


def _paths(value: dict, prefix: Path, out: set[Path]) -> None:
    """Every path of ``value`` (keys as text), to MAX_PATH_DEPTH."""
    for key, child in value.items():
        path = (*prefix, str(key))
        out.add(path)
        if type(child) is dict and len(path) < MAX_PATH_DEPTH:
            _paths(child, path, out)


def _flatten(value: dict, prefix: Path, out: list[tuple[Path, Any]]) -> None:
    """(path, leaf) for every string-keyed entry; a dict leaf is listed and walked into."""
    for key, child in value.items():
        if type(key) is not str:
            continue
        path = (*prefix, key)
        out.append((path, child))
        if type(child) is dict and len(path) < MAX_PATH_DEPTH:
            _flatten(child, path, out)
