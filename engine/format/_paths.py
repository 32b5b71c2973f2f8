"""Paths of dynamic (CBOR) values, per block, for block stats and the catalog's present paths.

Each distinct value of an extent's dynamic column is decoded and walked once (``_walk.py``);
a block's paths are the union of the path sets of its values' dictionary entries -- log data
repeats a few key sets, so that is a handful of sets.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._walk import DistinctValues
from kyma.engine.format.predicate import dynamic_path

PATH_SET_CAP = 1_000

Path = tuple[str, ...]


def block_paths(
    column: str, distinct: DistinctValues, parsed: list[set[Path]] | None = None
) -> list[frozenset[str] | None]:
    """Per block of ``column``, every path its values hold (None past PATH_SET_CAP); with
    ``parsed``, per block also the paths of the rows left out of ``distinct`` (``_parsed``)."""
    set_ids = pa.array(distinct.set_ids, pa.int32())
    out: list[frozenset[str] | None] = []
    for b, chunk in enumerate(distinct.encoded.chunks):
        present = pc.unique(pc.take(set_ids, pc.unique(chunk.indices.drop_null())))
        found = [distinct.sets[i] for i in present.to_pylist()]
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
