"""A dynamic column as Arrow parsed it: its paths and scalar leaves without decoding CBOR.

Ingest reads NDJSON with pyarrow, whose inferred struct says per row which keys are present
(validity, nested too) and holds their values typed. For the rows whose CBOR the coercion
built from that struct and vouched for (``exact``), the paths of a block and the shredded
sub-columns come from the struct by Arrow kernels; the other rows' CBOR is decoded as before.
A row is only ``exact`` when its keys are present exactly where the struct's children are
valid (an explicit ``null`` or a list makes it inexact), so validity is presence.
The batch's bytes of exact rows are never read: ingest leaves them empty, and the writer
encodes CBOR (``arrow_cbor``) only for the rows it stores whole (``_residual.written``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format.arrow_cbor import cbor
from kyma.engine.format.predicate import MAX_PATH_DEPTH

Path = tuple[str, ...]

_KINDS = {pa.int64(): "long", pa.float64(): "double", pa.bool_(): "bool", pa.string(): "string"}


@dataclass(frozen=True)
class ParsedDynamic:
    """One dynamic column of a batch as parsed by Arrow, row-aligned with the batch."""

    values: pa.Array
    """The parsed value of each row (a struct for objects), as pyarrow inferred it."""
    exact: pa.Array
    """Per row (bool, no nulls): the row's CBOR is exactly ``values``' row (a null row:
    null). Only these rows are read from ``values``, and only the others from the batch."""

    def slice(self, offset: int, length: int) -> ParsedDynamic:
        return ParsedDynamic(self.values.slice(offset, length), self.exact.slice(offset, length))

    @classmethod
    def none(cls, rows: int, kind: pa.DataType) -> ParsedDynamic:
        """``rows`` rows of ``kind`` whose CBOR the batch holds (none exact)."""
        return cls(pa.nulls(rows, kind), pa.array(np.zeros(rows, np.bool_)))

    def filled(self, column: pa.Array, rows: pa.Array | None = None) -> pa.Array:
        """``column`` (the batch's CBOR) with the CBOR of the exact rows among ``rows``
        (a mask; None: all) encoded from ``values``: only those rows are encoded."""
        wanted = self.exact if rows is None else pc.and_(self.exact, rows)
        wanted = pc.and_(wanted, pc.is_valid(self.values))
        count = wanted.true_count
        if not count:
            return column
        if count == len(column):
            return cbor(self.values).cast(column.type)
        encoded = cbor(self.values.filter(wanted)).cast(column.type)
        at = pc.subtract(pc.cumulative_sum(wanted.cast(pa.int64())), 1)
        at = pc.if_else(wanted, at, pa.scalar(None, pa.int64()))
        return pc.if_else(wanted, encoded.take(at), column)


@dataclass(frozen=True)
class Leaf:
    """A path of the parsed values: null where absent or the row is not exact."""

    path: Path
    kind: str | None
    """long, double, bool or string; None: an object (never shredded, as in ``_shred``)."""
    array: pa.Array


def leaves(parsed: ParsedDynamic) -> list[Leaf] | None:
    """Every path the exact rows hold, to MAX_PATH_DEPTH; None when an exact row holds a
    type this module does not know (the caller then decodes every row)."""
    values = parsed.values
    if not pa.types.is_struct(values.type):
        if pa.types.is_null(values.type) or not _holds(values, parsed.exact):
            return []  # scalars have no paths
        return [] if values.type in _KINDS else None
    keep = pc.and_(pc.is_valid(values), parsed.exact)
    top = pa.StructArray.from_arrays(
        values.flatten(), fields=list(values.type), mask=pc.invert(keep)
    )
    out: list[Leaf] = []
    return out if _walk(top, (), out) else None


def _holds(values: pa.Array, exact: pa.Array) -> bool:
    return bool(pc.any(pc.and_(pc.is_valid(values), exact)).as_py())


def _walk(array: pa.StructArray, prefix: Path, out: list[Leaf]) -> bool:
    for field, child in zip(array.type, array.flatten(), strict=True):
        path = (*prefix, field.name)
        kind = child.type
        if pa.types.is_null(kind) or child.null_count == len(child):
            continue
        if pa.types.is_struct(kind):
            out.append(Leaf(path, None, child))
            if len(path) < MAX_PATH_DEPTH and not _walk(child, path, out):
                return False
        elif kind in _KINDS:
            out.append(Leaf(path, _KINDS[kind], child))
        else:
            return False
    return True


def block_leaf_paths(found: list[Leaf], bounds: list[tuple[int, int]]) -> list[set[Path]]:
    """Per block (offset, rows), the paths some row of it holds."""
    return [
        {leaf.path for leaf in found if leaf.array.slice(start, rows).null_count < rows}
        for start, rows in bounds
    ]


def concat(pieces: list[ParsedDynamic], rows: int) -> ParsedDynamic | None:
    """The pieces of one extent's rows joined, or None if they do not cover them all or
    were inferred as different types."""
    if sum(len(p.values) for p in pieces) != rows or not pieces:
        return None
    if any(p.values.type != pieces[0].values.type for p in pieces):
        return None
    if len(pieces) == 1:
        return pieces[0]
    return ParsedDynamic(
        pa.concat_arrays([p.values for p in pieces]),
        pa.concat_arrays([p.exact for p in pieces]),
    )
