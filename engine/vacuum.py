"""VACUUM: deleted rows erased from the object store.

Three steps, each safe to interrupt: (1) every live extent with a deletion vector is
rewritten without its deleted rows (an extent all deleted is dropped) and the new extents
replace the old ones in one commit; (2) snapshots older than ``keep_seconds`` are expired;
(3) the objects of the table that no manifest row references any more are deleted: those
retired by earlier commits at once, any other after the orphan grace period (it may be an
ingest's extent not yet committed). New objects are written before the commit and old ones
deleted after it, so a crash leaves the old state or the new one, plus garbage that the
next VACUUM or orphan GC removes. Once it returns with ``keep_seconds`` 0, no object holds
a row deleted before it started.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pyarrow as pa

from kyma.engine.catalog import Catalog, ManifestEntry, TableInfo
from kyma.engine.compaction import append_live_rows
from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import StaleCommitError
from kyma.engine.format import ExtentWriteResult, SegmentFormat
from kyma.engine.gc import collect_orphans
from kyma.engine.query._result import QueryResult
from kyma.engine.query.dialect import KymaStatement
from kyma.engine.storage import ObjectStore

log = logging.getLogger("kyma.vacuum")
ATTEMPTS = 5
"""Rewrites tried when another commit changed an extent being rewritten meanwhile."""


@dataclass
class VacuumResult:
    table: str
    extents_rewritten: int = 0
    rows_erased: int = 0
    snapshots_expired: int = 0
    objects_deleted: int = 0
    snapshots: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def rewrite_extent(
    store: ObjectStore, fmt: SegmentFormat, info: TableInfo, extent: ManifestEntry
) -> ExtentWriteResult | None:
    """The extent's rows that are not deleted, as one new extent (None: none are left)."""
    if extent.deleted_rows >= extent.row_count:
        return None
    writer = fmt.start_extent(store, info.schema, info.path_prefix)
    with writer:
        append_live_rows(store, fmt, info, extent, writer)
        return writer.finish()


def vacuum_table(
    catalog: Catalog,
    store: ObjectStore,
    fmt: SegmentFormat,
    table: str,
    *,
    keep_seconds: int,
    grace: timedelta,
) -> VacuumResult:
    """Rewrite ``table``'s extents that hold deleted rows, expire snapshots older than
    ``keep_seconds`` and delete the objects nothing references any more."""
    result = VacuumResult(table)
    retired = catalog.retired_objects(table)  # before expiry forgets them
    for _ in range(ATTEMPTS):
        rewritten = _rewrite(catalog, store, fmt, table, result)
        if rewritten is not None:
            retired |= rewritten
            break
    cutoff = datetime.now(UTC) - timedelta(seconds=keep_seconds)
    result.snapshots_expired, _ = catalog.expire_snapshots(table, cutoff)
    referenced = catalog.referenced_objects()
    gone = sorted(retired - referenced)
    for path in gone:
        store.delete(path)
    prefix = catalog.get_table(table).path_prefix + "/"
    result.objects_deleted = len(gone) + len(collect_orphans(catalog, store, grace, prefix))
    return result


def _rewrite(
    catalog: Catalog, store: ObjectStore, fmt: SegmentFormat, table: str, result: VacuumResult
) -> set[str] | None:
    """One rewrite of the extents with deleted rows, committed: the objects it retired;
    None when another commit changed one of them first (its objects are deleted: try
    again on the new head)."""
    extents = [e for e in catalog.live_extents(table) if e.deletes is not None]
    if not extents:
        return set()
    info = catalog.get_table(table)  # after the listing: every extent's columns are in it
    written = [w for w in (rewrite_extent(store, fmt, info, e) for e in extents) if w]
    crash_point("vacuum.extents_written")
    try:
        commit = catalog.commit(
            table,
            written,
            removed=[e.extent_id for e in extents],
            summary={"source": "vacuum", "erased_rows": sum(e.deleted_rows for e in extents)},
        )
    except StaleCommitError as e:
        for w in written:
            store.delete(w.object_path)
        log.info("table %r: an extent changed during VACUUM: %s", table, e)
        return None
    crash_point("vacuum.committed")
    result.extents_rewritten += len(extents)
    result.rows_erased += sum(e.deleted_rows for e in extents)
    result.snapshots.append(commit.snapshot_id)
    return {e.object_path for e in extents}


def statement(
    catalog: Catalog,
    store: ObjectStore,
    fmt: SegmentFormat,
    *,
    keep_seconds: int,
    grace: timedelta,
) -> Callable[[KymaStatement], QueryResult | None]:
    """Runs ``VACUUM [table]`` (every table without one) for the query engine; the stats
    of its answer say what each table's VACUUM did."""

    def run(stmt: KymaStatement) -> QueryResult | None:
        if stmt.verb != "VACUUM":
            return None
        named = stmt.args.get("this")
        tables = [named.name] if named is not None else [t.name for t in catalog.list_tables()]
        done = [
            vacuum_table(catalog, store, fmt, t, keep_seconds=keep_seconds, grace=grace)
            for t in tables
        ]
        return QueryResult(pa.table({}), "VACUUM", {"vacuum": [r.to_json() for r in done]})

    return run
