"""Compaction: small extents of a table merged, by time range, into target-sized ones, and
extents of an older format (tlm) rewritten into the one new writes use (Parquet).

Extents smaller than half the target, and extents of another format whatever their size,
are taken in order of their time range and packed into groups of at most ``target_rows``
rows; each group of two or more, or holding an extent of another format, is rewritten as one
extent and published by one commit that adds it and removes the group (the catalog's CAS:
ingest committing meanwhile only moves the head, and the commit retries on it). If another
compaction removed one of the group's extents first, the commit is refused and the new
extent deleted. Old objects stay for time travel until retention or orphan GC removes them.
Queries see the same rows before and after: only the extents they are stored in change;
rows a deletion vector marks are not copied (they are gone for good once the old extents'
snapshots expire and GC deletes their objects).

Where groups are rewritten is a ``Rewriter``: here, in this process (the default), or in
Spark tasks (``kyma.engine.spark.compaction``, when a Spark master is set). Commits stay
here either way, one per group: a Spark task that is retried writes a second object, never
a second commit, and the object its lost attempt wrote is an orphan for GC.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kyma.engine import deletes
from kyma.engine.catalog import Catalog, ManifestEntry, TableInfo
from kyma.engine.errors import StaleCommitError
from kyma.engine.format import ExtentWriter, ExtentWriteResult, SegmentFormat
from kyma.engine.query._scan import conform
from kyma.engine.storage import ObjectStore

log = logging.getLogger("kyma.compaction")
TARGET_ROWS = 1_000_000

Rewriter = Callable[[TableInfo, list[list[ManifestEntry]]], Iterable[ExtentWriteResult]]
"""Rewrites each group as one extent; the results in the groups' order."""


@dataclass
class CompactionResult:
    table: str
    groups: int = 0
    extents_in: int = 0
    extents_out: int = 0
    rows: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    snapshots: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def plan_groups(
    extents: list[ManifestEntry],
    target_rows: int,
    format_name: str | None = None,
    *,
    tiered: bool = False,
) -> list[list[ManifestEntry]]:
    """Runs of small extents, in time order, each at most ``target_rows`` rows; 2+ each.

    With ``format_name``, extents of any other format join the runs whatever their size,
    and a run holding one is kept even alone: it is rewritten into ``format_name``.
    ``tiered``: only the runs that grow their largest extent enough (``grows``).
    """

    def foreign(e: ManifestEntry) -> bool:
        return format_name is not None and e.format != format_name

    small = [e for e in extents if e.live_rows < target_rows // 2 or foreign(e)]
    small.sort(key=lambda e: (e.min_ts if e.min_ts is not None else -1, e.max_ts or -1))
    groups: list[list[ManifestEntry]] = []
    current: list[ManifestEntry] = []
    for extent in small:
        if current and sum(e.live_rows for e in current) + extent.live_rows > target_rows:
            groups.append(current)
            current = []
        current.append(extent)
    groups.append(current)
    kept = [g for g in groups if len(g) >= 2 or any(foreign(e) for e in g)]
    return [g for g in kept if grows(g)] if tiered else kept


def grows(group: list[ManifestEntry]) -> bool:
    """Whether the extents of ``group`` other than its largest hold at least half the largest's
    rows: merged, the largest grows by half or more. Compacting only such groups rewrites a
    row at most log1.5(target / rows of a commit) times however small the commits (about 15
    for 1 000-row commits into a 1 M-row target), where merging whatever is there would
    rewrite a table's growing newest extent at every commit.

    >>> from types import SimpleNamespace as E
    >>> grows([E(live_rows=50_000), E(live_rows=30_000)])
    True
    >>> grows([E(live_rows=400_000), E(live_rows=1_000), E(live_rows=1_000)])
    False
    """
    rows = sorted(e.live_rows for e in group)
    return 2 * sum(rows[:-1]) >= rows[-1]


def rewrite_group(
    store: ObjectStore, fmt: SegmentFormat, info: TableInfo, group: list[ManifestEntry]
) -> ExtentWriteResult:
    """The group's rows, in its order, as one new extent (not yet committed)."""
    writer = fmt.start_extent(store, info.schema, info.path_prefix)
    with writer:
        for extent in group:
            append_live_rows(store, fmt, info, extent, writer)
        return writer.finish()


def append_live_rows(
    store: ObjectStore,
    fmt: SegmentFormat,
    info: TableInfo,
    extent: ManifestEntry,
    writer: ExtentWriter,
) -> None:
    """``extent``'s rows to ``writer``, block by block, without those its deletion vector
    marks (they are dropped for good)."""
    reader = fmt.open_extent(store, extent.object_path)
    deleted = deletes.positions(extent.deletes)
    try:
        starts = deletes.block_starts(reader.block_rows())
        blocks = list(range(extent.block_count))
        for block, batch in zip(blocks, reader.read_blocks(blocks), strict=True):
            kept = deletes.keep(batch, deleted, starts[block])
            if kept.num_rows:
                writer.append(conform(kept, info.schema))
    finally:
        reader.close()


def in_process(store: ObjectStore, fmt: SegmentFormat) -> Rewriter:
    """Groups rewritten here, one at a time, each committed before the next is read."""

    def rewrite(info: TableInfo, groups: list[list[ManifestEntry]]) -> Iterator[ExtentWriteResult]:
        return (rewrite_group(store, fmt, info, group) for group in groups)

    return rewrite


def compact_table(
    catalog: Catalog,
    store: ObjectStore,
    fmt: SegmentFormat,
    table: str,
    *,
    target_rows: int = TARGET_ROWS,
    rewriter: Rewriter | None = None,
    tiered: bool = False,
) -> CompactionResult:
    """Merge ``table``'s small extents; what was done. ``rewriter``: where (default here).
    ``tiered``: only groups that grow their largest extent by half (``grows``)."""
    result = CompactionResult(table)
    extents = catalog.live_extents(table)
    info = catalog.get_table(table)  # after the listing: every listed extent's columns are in it
    groups = plan_groups(extents, target_rows, fmt.name, tiered=tiered)
    rewrite = rewriter or in_process(store, fmt)
    for group, merged in zip(groups, rewrite(info, groups), strict=True):
        empty = merged.row_count == 0  # every row of the group was deleted
        if empty:
            store.delete(merged.object_path)
        try:
            commit = catalog.commit(
                table,
                [] if empty else [merged],
                removed=[e.extent_id for e in group],
                summary={
                    "source": "compaction",
                    "merged_extents": len(group),
                    "rewritten_formats": sorted({e.format for e in group} - {fmt.name}),
                },
            )
        except StaleCommitError as e:  # another compaction or a DELETE got there first
            if not empty:
                store.delete(merged.object_path)
            log.info("table %r: a group was compacted meanwhile: %s", table, e)
            continue
        result.groups += 1
        result.extents_in += len(group)
        result.extents_out += 0 if empty else 1
        result.rows += merged.row_count
        result.bytes_in += sum(e.byte_size for e in group)
        result.bytes_out += merged.byte_size
        result.snapshots.append(commit.snapshot_id)
    return result
