"""Stage-1 pruning latency with 10 k, 100 k and 1 M extents in one table.

The catalog is kyma's own (an embedded Postgres in a temporary folder, migrated by
``Catalog``); the manifest is filled with synthetic rows by one ``INSERT … SELECT
generate_series``: extent i covers minute i, its ``service`` column holds one of 1 000
services, its ``message`` tokens one of 1 000 words, and one extent in 50 has a
``attributes.user`` path. Each query shape runs ``--repeat`` times through
``Catalog.prune_extents`` (what every query's stage 1 calls); p50 and p95 are printed.

    python bench/catalog.py [--sizes 10000,100000,1000000] [--repeat 40]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from kyma.engine.catalog import Catalog
from kyma.engine.catalog.postgres import PostgresCatalog
from kyma.engine.format.predicate import (
    And,
    DynamicPathExists,
    Equals,
    StringHas,
    TimeRange,
)
from kyma.engine.types import Column, KymaType
from kyma.runtime.postgres import EmbeddedPostgres

MINUTE_NS = 60 * 10**9
T0 = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z

FILL = """
INSERT INTO kyma.manifest (extent_id, table_id, object_path, byte_size, row_count,
    block_count, min_ts, max_ts, column_stats, present_paths, added_snapshot_id, format,
    set_keys)
SELECT gen_random_uuid(), %(table)s, 'extents/' || %(table)s || '/' || i || '.parquet',
    1000000, 10000, 2, %(t0)s + i * %(minute)s, %(t0)s + (i + 1) * %(minute)s - 1, stats,
    CASE WHEN i %% 50 = 0 THEN ARRAY['attributes/user'] ELSE ARRAY['attributes/http'] END,
    %(snapshot)s, 'parquet',
    kyma.stat_keys(stats, ARRAY(SELECT name FROM kyma.columns WHERE table_id = %(table)s))
FROM generate_series(0, %(n)s - 1) AS i, LATERAL (SELECT jsonb_build_object(
        'service', jsonb_build_object('distinct', jsonb_build_array('svc-' || (i %% 1000)),
                                      'tokens', jsonb_build_array('svc', (i %% 1000)::text)),
        'message', jsonb_build_object('distinct', NULL,
                                      'tokens', jsonb_build_array('word' || (i %% 1000), 'ok'))
    ) AS stats) AS s
"""


def fill(catalog: PostgresCatalog, name: str, n: int) -> None:
    columns = [Column("service", KymaType("string")), Column("message", KymaType("string"))]
    columns += [Column("attributes", KymaType("dynamic"))]
    info = catalog.create_table(name, columns)
    with catalog.db.connection() as conn, conn.transaction():  # a bench reaches behind the API
        (snapshot,) = conn.execute(
            "INSERT INTO kyma.snapshots (table_id, extent_count) VALUES (%s, %s)"
            " RETURNING snapshot_id",
            (info.table_id, n),
        ).fetchone()
        params = {"table": info.table_id, "t0": T0, "minute": MINUTE_NS, "n": n}
        # Filling a million rows is faster with the GIN indexes built once, afterwards.
        gin = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'kyma'"
            " AND tablename = 'manifest' AND indexdef LIKE '%%USING gin%%'"
        ).fetchall()
        for index, _ in gin:
            conn.execute(f"DROP INDEX kyma.{index}")
        conn.execute(FILL, {**params, "snapshot": snapshot})
        for _, definition in gin:
            conn.execute(definition)
        conn.execute(
            "UPDATE kyma.tables SET current_snapshot_id = %s WHERE table_id = %s",
            (snapshot, info.table_id),
        )
        conn.execute("ANALYZE kyma.manifest")


def shapes(n: int) -> dict[str, object]:
    last_hour = T0 + (n - 60) * MINUTE_NS
    return {
        "time window (last hour)": TimeRange("_timestamp", last_hour, T0 + n * MINUTE_NS),
        "equality (service = svc-7)": Equals("service", "svc-7"),
        "token (message has word7)": StringHas("message", "word7"),
        "path exists (attributes.user)": DynamicPathExists("attributes", ("user",)),
        "window AND equality": And(
            (TimeRange("_timestamp", last_hour, T0 + n * MINUTE_NS), Equals("service", "svc-7"))
        ),
    }


def measure(
    catalog: Catalog, name: str, predicate: object, repeat: int
) -> tuple[float, float, int]:
    times = []
    kept = 0
    for _ in range(repeat):
        started = time.perf_counter()
        _, survivors = catalog.prune_extents(name, None, predicate)  # type: ignore[arg-type]
        times.append((time.perf_counter() - started) * 1000)
        kept = len(survivors)
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return statistics.median(times), p95, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    home = Path(tempfile.mkdtemp(prefix="kyma-bench-catalog-", dir="/tmp"))
    with EmbeddedPostgres(home / "catalog") as pg:
        catalog = PostgresCatalog.connect(pg.url)
        try:
            print(f"{'extents':>9} | {'query':<30} | {'p50 ms':>8} | {'p95 ms':>8} | kept")
            for n in sizes:
                name = f"t{n}"
                started = time.perf_counter()
                fill(catalog, name, n)
                print(f"# filled {n} manifest rows in {time.perf_counter() - started:.1f} s")
                for label, predicate in shapes(n).items():
                    p50, p95, kept = measure(catalog, name, predicate, args.repeat)
                    print(f"{n:>9} | {label:<30} | {p50:8.1f} | {p95:8.1f} | {kept}")
        finally:
            catalog.close()


if __name__ == "__main__":
    main()
