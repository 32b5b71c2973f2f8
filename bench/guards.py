"""Benchmark: what the runtime size guards cost, against the same SQL unguarded.

    python bench/guards.py [--rows 2000000] [--repeat 5]

One DataFusion session (kyma's UDFs and guards registered, a 2 GiB pool) over ``--rows``
rows of text and numbers; each query runs as written and as ``rewrite/size_guards`` rewrites
it (``||``/``concat`` and ``range`` with column bounds under ``CASE WHEN <guard>``). The
median of ``--repeat`` runs is reported, and the ratio guarded / unguarded. Last, the
cost of a cancellable statement: a 2 M-row answer collected by iterating DataFusion's stream
against awaiting each batch on an event loop (what a statement with a token does).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import pyarrow as pa
import sqlglot

from kyma.engine.query._estimate import register_guard
from kyma.engine.query._limits import QueryLimits, _current, _Token, collect, session_context
from kyma.engine.query.rewrite import size_guards

QUERIES = {
    "concat 3 columns": "SELECT count(*) FROM t WHERE s || '-' || u <> ''",
    "concat() in a GROUP BY": "SELECT concat(s, n % 10) AS k, count(*) FROM t GROUP BY 1",
    "range per row": "SELECT sum(cardinality(range(n % 5))) FROM t",
    "no guard (baseline)": "SELECT count(*) FROM t WHERE s <> u",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    limits = QueryLimits()
    ctx = session_context(limits)
    register_guard(ctx, limits.memory_bytes)
    n = pa.array(range(args.rows), pa.int64())
    text = pa.compute.cast(n, pa.string())
    batch = pa.record_batch({"n": n, "s": text, "u": pa.compute.utf8_reverse(text)})
    ctx.register_record_batches("t", [pa.Table.from_batches([batch]).to_batches(65536)])
    print(f"rows {args.rows}, repeat {args.repeat}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'query':28} {'unguarded ms':>13} {'guarded ms':>11} {'ratio':>6}")
    for name, sql in QUERIES.items():
        stmt = sqlglot.parse_one(sql, read="postgres")
        guarded = size_guards.rule(stmt).sql(dialect="postgres", normalize_functions="lower")
        times = [_median(ctx, text_, args.repeat) for text_ in (sql, guarded)]
        print(f"{name:28} {times[0]:13.1f} {times[1]:11.1f} {times[1] / times[0]:6.2f}")
    plain, awaited = (_collect_median(ctx, token, args.repeat) for token in (None, _Token(300)))
    print(f"{'2 M-row answer, cancellable':28} {plain:13.1f} {awaited:11.1f}", end="")
    print(f" {awaited / plain:6.2f}")


def _median(ctx, sql: str, repeat: int) -> float:  # type: ignore[no-untyped-def]
    spent = []
    for _ in range(repeat):
        started = time.perf_counter()
        ctx.sql(sql).to_arrow_table()
        spent.append((time.perf_counter() - started) * 1000)
    return statistics.median(spent)


def _collect_median(ctx, token: _Token | None, repeat: int) -> float:  # type: ignore[no-untyped-def]
    """``collect`` of a 2 M-row answer: iterated (no token) or awaited (a statement's token)."""
    spent = []
    for _ in range(repeat):
        entered = _current.set(token)
        try:
            started = time.perf_counter()
            frame = ctx.sql("SELECT n FROM t")
            collect(frame.execute_stream(), frame.schema(), None)
            spent.append((time.perf_counter() - started) * 1000)
        finally:
            _current.reset(entered)
    return statistics.median(spent)


if __name__ == "__main__":
    main()
