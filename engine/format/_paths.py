"""Paths of dynamic (CBOR) values, per block, for block stats and the catalog's present paths.

An extent's dynamic column is dictionary-encoded once (Arrow's hash kernel): each distinct
value is decoded once, and a block's paths are the union of the path sets of its values'
dictionary entries -- log data repeats a few key sets, so that is a handful of sets.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._shred import DistinctValues
from kyma.engine.format.predicate import MAX_PATH_DEPTH, dynamic_path

PATH_SET_CAP = 1_000

Path = tuple[str, ...]


def block_paths(
    column: str, distinct: DistinctValues, parsed: list[set[Path]] | None = None
) -> list[frozenset[str] | None]:
    """Per block of ``column``, every path its values hold (None past PATH_SET_CAP); with
    ``parsed``, per block also the paths of the rows left out of ``distinct`` (``_parsed``)."""
    encoded = distinct.encoded
    sets: list[frozenset[Path]] = []
    index: dict[frozenset[Path], int] = {}
    ids: list[int] = []
    for value in distinct.values:
        paths = _paths_of(value)
        ids.append(index.setdefault(paths, len(index)))
        if ids[-1] == len(sets):
            sets.append(paths)
    set_ids = pa.array(ids, pa.int32())
    out: list[frozenset[str] | None] = []
    for b, chunk in enumerate(encoded.chunks):
        present = pc.unique(pc.take(set_ids, pc.unique(chunk.indices.drop_null())))
        found = [sets[i] for i in present.to_pylist()]
        if parsed is not None:
            found.append(frozenset(parsed[b]))
        out.append(_named(column, found))
    return out


def _named(column: str, sets: list[frozenset[Path]]) -> frozenset[str] | None:
    found: set[Path] = set()
    for paths in sets:
        found |= paths
        if len(found) > PATH_SET_CAP:
            return None
    if any("\x00" in key for path in found for key in path):
        return None  # Postgres' text[] cannot hold NUL: the paths become "unknown"
    return frozenset(dynamic_path(column, path) for path in found)


def _paths_of(value: object) -> frozenset[Path]:
    if type(value) is not dict:
        return frozenset()
    if not any(type(child) is dict for child in value.values()):  # flat: the common case
        return frozenset((str(key),) for key in value)
    out: set[Path] = set()
    _walk(value, (), out)
    return frozenset(out)


def _walk(value: dict, prefix: Path, out: set[Path]) -> None:
    for key, child in value.items():
        path = (*prefix, str(key))
        out.add(path)
        if type(child) is dict and len(path) < MAX_PATH_DEPTH:
            _walk(child, path, out)
