"""A synthetic ClickBench ``hits`` as NDJSON: 30 of its columns (integers, strings, URLs, a
timestamp), generated columnar with numpy and written as NDJSON by DuckDB, for bench/ingest."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

START_NS = 1_372_636_800_000_000_000  # 2013-07-01, ClickBench's month
WORDS = ["news", "auto", "video", "maps", "mail", "sport", "weather", "music", "shop", "games"]
INTS = [  # (name, high): small integer columns of hits
    ("JavaEnable", 2),
    ("GoodEvent", 2),
    ("CounterID", 100_000),
    ("RegionID", 10_000),
    ("OS", 100),
    ("UserAgent", 100),
    ("IsRefresh", 2),
    ("RefererCategoryID", 1_000),
    ("URLCategoryID", 1_000),
    ("ResolutionWidth", 4_000),
    ("ResolutionHeight", 3_000),
    ("FlashMajor", 30),
    ("NetMajor", 10),
    ("UserAgentMajor", 100),
    ("IsMobile", 2),
    ("MobilePhone", 100),
    ("TraficSourceID", 10),
    ("SearchEngineID", 100),
    ("AdvEngineID", 50),
    ("WindowClientWidth", 4_000),
]
LONGS = [("WatchID", 2**62), ("UserID", 2**62), ("ClientIP", 2**31), ("FUniqID", 2**62)]
STRINGS = ["Title", "URL", "Referer", "SearchPhrase", "MobilePhoneModel"]
DDL = (
    'CREATE TABLE hits ("EventTime" timestamp, '
    + ", ".join(
        [f'"{n}" long' for n, _ in LONGS]
        + [f'"{n}" int' for n, _ in INTS]
        + [f'"{s}" string' for s in STRINGS]
    )
    + ")"
)


def generate(rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = pa.array(WORDS)

    def text(prefix: str, n: int) -> pa.Array:
        picks = rng.integers(0, len(WORDS), rows)
        ids = rng.integers(0, n, rows).astype(str)
        return pa.array(
            np.char.add(
                np.char.add(prefix, words.take(pa.array(picks)).to_numpy(False).astype(str)), ids
            )
        )

    columns: dict[str, pa.Array] = {
        "EventTime": pa.array(START_NS + np.sort(rng.integers(0, 31 * 86_400 * 10**9, rows)))
    }
    columns |= {n: pa.array(rng.integers(0, high, rows)) for n, high in LONGS}
    columns |= {n: pa.array(rng.integers(0, high, rows)) for n, high in INTS}
    columns["Title"] = text("Page about ", 100_000)
    columns["URL"] = text("https://example.com/", 1_000_000)
    columns["Referer"] = text("https://search.example/?q=", 1_000_000)
    columns["SearchPhrase"] = text("", 10_000)
    columns["MobilePhoneModel"] = text("model-", 500)
    return pa.table(columns)


def write_ndjson(table: pa.Table, path: Path) -> None:
    """kyma's NDJSON for the table (EventTime as epoch ns), written by DuckDB."""
    con = duckdb.connect()
    con.register("generated", table)
    con.execute(f"COPY (SELECT * FROM generated) TO '{path}' (FORMAT JSON)")
    con.close()
