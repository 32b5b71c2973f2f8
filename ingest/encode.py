"""The CPU-heavy half of an NDJSON ingest: coerce the body, write its extents.

It runs in the server process, or in an ingest worker process (``encode_workers``) that
gets an :class:`EncodeJob` and opens the object store itself. Nothing here touches the
catalog: a body whose unknown keys would widen the table is handed back (``encode_ndjson``
returns None) and the write path evolves the table in the server, as without workers.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.catalog import ColumnWrite, TableInfo, schema_evolution
from kyma.engine.errors import IngestError, KymaError, SchemaError, StoreWriteError
from kyma.engine.float4 import narrowed
from kyma.engine.format import ExtentWriteResult, ParsedDynamic, SegmentFormat
from kyma.engine.format.choice import segment_format
from kyma.engine.storage import ObjectStore
from kyma.engine.storage.config import StoreConfig
from kyma.ingest.coerce import Coerced, check_shape, coerce_ndjson
from kyma.ingest.evolution import EvolutionPlan, plan_evolution
from kyma.ingest.typed import coerce_typed

log = logging.getLogger("kyma.ingest")
EXTENT_ROWS = 1_000_000


@dataclass(frozen=True)
class EncodeJob:
    """One NDJSON body bound for ``info``'s table, as a worker process gets it."""

    body: bytes
    info: TableInfo
    evolve: bool
    ingest_time_ns: int
    columns: Mapping[str, pa.Array] | None = None
    max_keys_per_row: int = 0
    max_nesting_depth: int = 0


@dataclass(frozen=True)
class Encoded:
    """Extents written (not committed) and what they hold, for the commit and the ack."""

    rows: int
    written: list[ExtentWriteResult]
    writes: list[ColumnWrite]
    plan: EvolutionPlan = field(default_factory=EvolutionPlan)


@dataclass(frozen=True)
class FormatSpec:
    """A segment format by name, built once per process (picklable, unlike the format)."""

    name: str
    block_rows: int

    def build(self) -> SegmentFormat:
        return _format(self)


@functools.cache
def _format(spec: FormatSpec) -> SegmentFormat:
    return segment_format(spec.name, spec.block_rows)


def encode_ndjson(job: EncodeJob, store: StoreConfig, fmt: FormatSpec) -> Encoded | None:
    """Coerce ``job.body`` to its table's columns and write its extents (in a worker).

    None when the body would change the table (new columns, props fields, typed columns):
    the caller evolves it in the server. Errors are the ones the in-process path raises.
    """
    lines = check_shape(job.body, job.max_keys_per_row, job.max_nesting_depth)
    info = job.info
    if schema_evolution(info.options) == "typed":
        typed = coerce_typed(job.body, info, evolve=job.evolve, ingest_time_ns=job.ingest_time_ns)
        if typed.new:
            return None
        coerced, plan = typed.coerced, typed.plan
    else:
        coerced = coerce_ndjson(
            job.body,
            info.columns,
            ingest_time_ns=job.ingest_time_ns,
            lines=lines,
            deferred=True,
        )
        plan = plan_evolution(coerced.unknown_keys, info.columns, evolve=job.evolve)
        if plan.new_columns or plan.props_fields:
            return None
    return encode_coerced(store.open(), fmt.build(), info, coerced, job.columns, plan)


def encode_batch(
    batch: pa.RecordBatch,
    info: TableInfo,
    ingest_time_ns: int,
    store: StoreConfig,
    fmt: FormatSpec,
) -> Encoded:
    """``write_batch`` in a worker, which opens the store and builds the format."""
    return write_batch(store.open(), fmt.build(), batch, info, ingest_time_ns)


def write_batch(
    store: ObjectStore,
    fmt: SegmentFormat,
    batch: pa.RecordBatch,
    info: TableInfo,
    ingest_time_ns: int,
) -> Encoded:
    """An Arrow batch conformed to ``info``'s columns and written as extents."""
    conformed = conform(batch, info, ingest_time_ns)
    writes = column_writes(info, conformed, None)
    written = write_extents(store, fmt, info, conformed)
    return Encoded(conformed.num_rows, written, writes)


def conform(batch: pa.RecordBatch, info: TableInfo, ingest_time_ns: int) -> pa.RecordBatch:
    """``batch`` as the table's columns: matched by name, cast, missing ones null.

    SchemaError names a column the table lacks or a value that does not cast.
    """
    names = set(batch.schema.names)
    for name in names:
        if info.column(name) is None:
            raise SchemaError(f"column {name!r} is not in table {info.name!r}")
    arrays = []
    for target in info.schema:
        if target.name not in names:
            values = pa.nulls(batch.num_rows, target.type)
        else:
            values = batch.column(target.name)
            try:
                values = _cast(values, target.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaError(
                    f"column {target.name!r}: cannot store {values.type} as {target.type}: {e}"
                ) from e
        if target.name == "_timestamp" and values.null_count:
            now = pa.scalar(ingest_time_ns, pa.int64()).cast(target.type)
            values = pc.coalesce(values, now)
        arrays.append(values)
    return pa.RecordBatch.from_arrays(arrays, schema=info.schema)


def _cast(values: pa.Array, dtype: pa.DataType) -> pa.Array:
    """``values`` as ``dtype``: into a real (float4) column refused beyond its range (22003)."""
    return narrowed(values) if pa.types.is_float32(dtype) else values.cast(dtype)


def encode_coerced(
    store: ObjectStore,
    fmt: SegmentFormat,
    info: TableInfo,
    coerced: Coerced,
    columns: Mapping[str, pa.Array] | None,
    plan: EvolutionPlan,
) -> Encoded:
    """Write ``coerced`` (with whole ``columns`` replaced) as extents of ``info``'s table."""
    batch = with_columns(coerced.batch, columns or {})
    parsed = {k: v for k, v in coerced.parsed.items() if k not in (columns or {})}
    writes = column_writes(info, batch, coerced.types_seen)
    written = write_extents(store, fmt, info, batch, parsed)
    return Encoded(coerced.rows, written, writes, plan)


def write_extents(
    store: ObjectStore,
    fmt: SegmentFormat,
    info: TableInfo,
    batch: pa.RecordBatch,
    parsed: Mapping[str, ParsedDynamic] | None = None,
) -> list[ExtentWriteResult]:
    """``batch`` as extents of at most EXTENT_ROWS rows; on failure none is left behind.
    They are stored unsynced: the write path syncs them once before its commit."""
    written: list[ExtentWriteResult] = []
    try:
        for start in range(0, batch.num_rows, EXTENT_ROWS):
            writer = fmt.start_extent(store, info.schema, info.path_prefix)
            with writer:
                part = {k: v.slice(start, EXTENT_ROWS) for k, v in (parsed or {}).items()}
                writer.append(batch.slice(start, EXTENT_ROWS), part)
                written.append(writer.finish(synced=False))
    except OSError as e:
        discard(store, written)
        if isinstance(e, KymaError):
            raise
        log.error("writing an extent of %r failed", info.name, exc_info=e)
        raise StoreWriteError(
            f"the object store {store.url} refused a write of table"
            f" {info.name!r}: {e.strerror or e}; nothing was committed, try again"
        ) from e
    except BaseException:
        discard(store, written)
        raise
    return written


def discard(store: ObjectStore, written: list[ExtentWriteResult]) -> None:
    """Delete extents no commit references (GC would, later; this is sooner)."""
    for extent in written:
        try:
            store.delete(extent.object_path)
        except Exception as e:  # the orphan GC removes it later
            log.warning("could not delete uncommitted extent %s: %s", extent.object_path, e)


def column_writes(
    info: TableInfo, batch: pa.RecordBatch, types_seen: Mapping[str, list[str]] | None
) -> list[ColumnWrite]:
    """What ``batch`` writes into each column, for the written-data statistics; without
    ``types_seen`` (the plain path) a column's own type stands for what it received."""
    writes = []
    for column, values in zip(info.columns, batch.columns, strict=True):
        if types_seen is not None:
            types = tuple(types_seen.get(column.name, ()))
        else:
            types = (column.type.name,) if values.null_count < len(values) else ()
        writes.append(ColumnWrite(column.name, len(values), values.null_count, types))
    return writes


def with_columns(batch: pa.RecordBatch, columns: Mapping[str, pa.Array]) -> pa.RecordBatch:
    """``batch`` with whole columns replaced; SchemaError if one is not in the table."""
    for name, values in columns.items():
        index = batch.schema.get_field_index(name)
        if index < 0:
            raise SchemaError(f"column {name!r} is not in the table")
        if len(values) != batch.num_rows:
            raise IngestError(f"column {name!r}: {len(values)} values for {batch.num_rows} rows")
        target = batch.schema.field(index)
        batch = batch.set_column(index, target, values.cast(target.type))
    return batch
