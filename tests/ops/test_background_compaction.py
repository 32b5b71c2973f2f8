"""A real ``kyma serve`` compacts the tables that receive rows on its own (``kyma.compactor``):
fewer extents soon after ingest, no row lost or doubled, even with ingest running meanwhile."""

from __future__ import annotations

from pathlib import Path

from ops_helpers import ingest, metric, request, serve_on, wait_until

from kyma.engine.compaction import plan_groups

REQUESTS, ROWS = 12, 200


def test_serve_compacts_small_extents_while_ingest_goes_on(
    catalog_url: str, catalog, tmp_path: Path
) -> None:
    serve = serve_on(catalog_url, tmp_path / "home", KYMA_COMPACTION_INTERVAL_SECONDS="1")
    try:
        serve.sql("CREATE TABLE t (n long)")
        for i in range(REQUESTS):  # one extent each; the compactor's rounds run meanwhile
            ingest(serve, "t", [{"n": i * ROWS + j} for j in range(ROWS)])

        def settled() -> bool:
            _, _, text = request(f"{serve.url}/metrics")
            return metric(text.decode(), "kyma_compaction_pending_tables") == 0

        wait_until(settled, timeout=60, what="the compactor's check of t")
        answer = serve.sql("SELECT count(*), count(DISTINCT n), min(n), max(n) FROM t")
        assert answer["rows"] == [[REQUESTS * ROWS, REQUESTS * ROWS, 0, REQUESTS * ROWS - 1]]
        extents = catalog.live_extents("t")
        assert len(extents) < REQUESTS
        assert plan_groups(extents, 1_000_000, tiered=True) == []  # nothing left it would merge
        sources = {s.summary.get("source") for s in catalog.snapshots("t", last=50)}
        assert "compaction" in sources
    finally:
        serve.stop()
