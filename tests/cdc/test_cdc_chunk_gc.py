"""Orphan GC keeps the extents a CDC snapshot's chunks read until the table commits: the
CDC store tells the catalog database which objects it keeps alive."""

from __future__ import annotations

import dataclasses
import os
from datetime import timedelta
from pathlib import Path

import psycopg
import pyarrow as pa

from kyma.connectors.cdc_state import Chunk, record_chunk
from kyma.engine.format.choice import segment_format
from kyma.engine.gc import collect_orphans
from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores


def test_orphan_gc_keeps_extents_of_chunks_not_yet_committed(
    stores: Stores, tmp_path: Path
) -> None:
    store = LocalStore(tmp_path / "objects")
    info = stores.catalog.create_table("pg__public__big", [])
    writer = segment_format().start_extent(store, pa.schema([("n", pa.int64())]), info.path_prefix)
    writer.append(pa.record_batch({"n": [1, 2]}))
    extent = writer.finish()
    path = store.root / extent.object_path
    os.utime(path, (path.stat().st_atime - 10_000, path.stat().st_mtime - 10_000))
    connector = stores.connectors.create("pg", "postgres", {}).connector_id
    stores.cdc.prepare(connector, "slot", [("public.big", info.name, ["id"])])
    stores.cdc.plan_chunks(connector, "public.big", [Chunk(0, 0, None)])
    read = Chunk(0, 0, None, snapshot_lsn=16, rows_read=2, extents=(dataclasses.asdict(extent),))
    with psycopg.connect(stores.db.url, autocommit=True) as conn:
        assert record_chunk(conn, connector, "public.big", read)
    assert collect_orphans(stores.catalog, store, grace=timedelta(hours=1)) == []
    stores.cdc.reset(connector)  # the chunk records go: nothing keeps the object any more
    assert collect_orphans(stores.catalog, store, grace=timedelta(hours=1)) == [extent.object_path]
