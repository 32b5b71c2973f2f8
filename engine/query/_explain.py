"""EXPLAIN's answer: kyma's stages (pushdown per federated scan, the pruning cascade per
table) before DataFusion's plans, and for EXPLAIN ANALYZE the statement's elapsed time last."""

from __future__ import annotations

import json

import pyarrow as pa

from kyma.engine.query._scan import ScanStats


def with_elapsed(explained: pa.Table, elapsed_ms: float) -> pa.Table:
    """EXPLAIN ANALYZE's last row: the statement's time in all, planning and stage 1 included."""
    last = pa.table({"plan_type": ["kyma elapsed"], "plan": [f"{elapsed_ms} ms"]})
    return pa.concat_tables([explained, last.cast(explained.schema)])


def explained(
    stats: dict[str, ScanStats], pushdown_summary: list[dict], plan: pa.Table
) -> pa.Table:
    """EXPLAIN: each federated scan, the cascade per table, then DataFusion's plans."""
    kinds, plans = [], []
    for entry in pushdown_summary:
        kinds.append(f"kyma pushdown {entry['scan']}")
        plans.append(json.dumps({k: v for k, v in entry.items() if k != "scan"}))
    for name, s in stats.items():
        kinds.append(f"kyma pruning {name}")
        plans.append(
            f"stage 1 catalog: {s.extents_after_catalog}/{s.extents_total} extents;"
            f" stage 2 block stats: {s.blocks_after_stats}/{s.blocks_total} blocks;"
            f" stage 3 token filters: {s.blocks_after_tokens}/{s.blocks_after_stats} blocks;"
            f" trigram filters: {s.pages_after_grams}/{s.pages_searched} pages;"
            f" scan: {s.rows_scanned} rows, {s.bytes_read} bytes"
        )
    kinds += plan.column("plan_type").to_pylist()
    plans += plan.column("plan").to_pylist()
    return pa.table(
        {"plan_type": pa.array(kinds, pa.string()), "plan": pa.array(plans, pa.string())}
    )
