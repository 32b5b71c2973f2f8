"""Stage 3 in DataFusion: Parquet extents scan natively and stream; tlm extents still answer
through the block reader, in the same table; ``SELECT count(*)`` answers from the catalog."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

from kyma.engine.errors import FormatError
from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine

ROWS = 3_000_000


# Run in a fresh process, so that the peak resident size it reports is the query's.
_CHILD = """
import json, re, sys
from pathlib import Path
from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine
from kyma.engine.query import QueryEngine
from kyma.engine.query._limits import QueryLimits
from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores

def rss(key):
    status = Path("/proc/self/status").read_text()
    return int(re.search(key + r":\\s+(\\d+) kB", status).group(1)) * 1024

url, objects, pool, sql = sys.argv[1:]
stores = Stores.open(url, pool_size=1)
store = LocalStore(Path(objects), create=False)
limits = QueryLimits(memory_bytes=int(pool))
engine = QueryEngine(stores.catalog, store, segment_format(), limits=limits)
engine.execute("SELECT max(s) FROM big WHERE n < 100000")  # imports, footers, threads
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) restarts from here
before = rss("VmRSS")
answer = engine.execute(sql)
grown = rss("VmHWM") - before
rows = answer.table.to_pylist()
print(json.dumps({"grown": grown, "rows": rows, "stats": answer.stats}, default=int))
"""


def test_a_table_larger_than_the_memory_pool_scans_in_bounded_memory(services) -> None:
    services.query.execute("CREATE TABLE big (n long, s string)")
    services.write_path.format = segment_format("parquet", block_rows=8192)
    step = 250_000
    batches = (
        pa.record_batch(
            {
                "n": pa.array(range(lo, lo + step), pa.int64()),
                "s": pa.array([f"value-{i:012d}" for i in range(lo, lo + step)]),
            }
        )
        for lo in range(0, ROWS, step)
    )
    services.write_path.ingest_batches("big", batches, source="test")
    decoded = ROWS * (8 + 4 + 18)  # what the columns take as Arrow arrays
    pool = 8 << 20
    sql = "SELECT count(*), sum(n), max(s), min(s) FROM big WHERE n >= 0"
    args = [services.settings.catalog_url, str(services.store.root), str(pool), sql]
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr
    answer = json.loads(child.stdout)
    assert answer["rows"] == [
        {
            "count": ROWS,
            "sum": ROWS * (ROWS - 1) // 2,
            "max": f"value-{ROWS - 1:012d}",
            "min": "value-000000000000",
        }
    ]
    assert answer["stats"]["rows_scanned"] == ROWS
    assert decoded > 5 * pool
    assert answer["grown"] < decoded // 2, f"the scan grew the process by {answer['grown']} bytes"


def _load(services, table: str, formats: list[str]) -> None:
    services.query.execute(f"CREATE TABLE {table} (n long, tag string, attributes dynamic)")
    per = 600
    for i, name in enumerate(formats):
        services.write_path.format = segment_format(name, block_rows=100)
        lines = [
            {
                "_timestamp": f"2026-01-01T00:{(n // 60) % 60:02d}:{n % 60:02d}Z",
                "n": n,
                "tag": f"t{n % 7}",
                "attributes": {"user": f"u{n % 50}", "size": n % 13, "ratio": n / 8},
            }
            for n in range(i * per, (i + 1) * per)
        ]
        body = "\n".join(json.dumps(line) for line in lines).encode()
        services.write_path.ingest_ndjson(table, body)


QUERIES = [
    "SELECT count(*) AS c, sum(n) AS s FROM {t} WHERE tag = 't3'",
    "SELECT tag, count(*) AS c, avg(n) AS a FROM {t} GROUP BY tag ORDER BY tag",
    "SELECT n FROM {t} WHERE n BETWEEN 1234 AND 1250 ORDER BY n",
    "SELECT n FROM {t} WHERE _timestamp >= '2026-01-01T00:10:00Z'"
    " AND _timestamp < '2026-01-01T00:10:05Z' ORDER BY n",
    "SELECT attributes['user'] AS u, count(*) AS c FROM {t} GROUP BY attributes['user']"
    " ORDER BY u LIMIT 5",
    "SELECT n, attributes['ratio'] AS r, attributes['size'] AS z FROM {t}"
    " WHERE attributes['user'] = 'u7' ORDER BY n",
    "SELECT n FROM {t} ORDER BY n DESC LIMIT 3",
]


@pytest.mark.parametrize("query", QUERIES)
def test_native_and_block_reader_scans_agree_on_answers_and_stats(services, query) -> None:
    if "pq" not in services.catalog.list_tables().__repr__():
        _load(services, "pq", ["parquet"] * 3)
        _load(services, "tl", ["tlm"] * 3)
        _load(services, "mixed", ["tlm", "parquet", "tlm"])
    answers = {t: services.query.execute(query.format(t=t)) for t in ("pq", "tl", "mixed")}
    tables = {t: a.table.to_pylist() for t, a in answers.items()}
    assert tables["pq"] == tables["tl"] == tables["mixed"]
    assert tables["pq"]
    counted = ("extents_total", "blocks_total", "blocks_after_stats", "rows_scanned")
    if "attributes" not in query:  # tlm keeps no path stats: it prunes fewer blocks on paths
        stats = [tuple(a.stats[k] for k in counted) for a in answers.values()]
        assert stats[0] == stats[1] == stats[2]


def test_count_star_answers_from_the_catalog(services) -> None:
    _load(services, "counted", ["parquet", "tlm", "parquet"])
    answer = services.query.execute("SELECT count(*) FROM counted")
    assert answer.table.to_pylist() == [{"count": 1800}]
    assert answer.stats["extents_total"] == 3
    assert answer.stats["rows_scanned"] == 0 and answer.stats["blocks_after_stats"] == 0
    snapshot = services.catalog.get_table("counted").current_snapshot_id
    services.write_path.ingest_ndjson("counted", b'{"n": 1}\n{"n": 2}\n')
    again = services.query.execute('SELECT count(*) AS "rows" FROM counted')
    assert again.table.to_pylist() == [{"rows": 1802}]
    past = services.query.execute(f'SELECT count(*) FROM "counted@{snapshot}"')
    assert past.table.to_pylist() == [{"count": 1800}]
    scanned = services.query.execute("SELECT count(*) FROM counted WHERE n > 1")
    assert scanned.table.to_pylist() == [{"count": 1799}]
    assert scanned.stats["rows_scanned"] > 0


def test_a_damaged_extent_is_refused_on_its_first_read(services) -> None:
    """The footer's checksum is checked once per extent, when its footer is first parsed; a
    flipped byte in a page is a FormatError naming the extent, not a wrong answer."""
    _load(services, "damaged", ["parquet"])
    [extent] = services.catalog.prune_extents("damaged", None, None)[1]
    path = services.store.local_path(extent.object_path)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 4] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="do not match the checksum"):
        services.query.execute("SELECT sum(n) FROM damaged")


TEXT_QUERIES = [
    "SELECT tag, count(*) AS c FROM {t} WHERE tag <> 't0' GROUP BY tag ORDER BY c DESC, tag",
    "SELECT count(DISTINCT tag) AS d, min(tag) AS lo, max(tag) AS hi FROM {t}",
    "SELECT tag, upper(tag) AS u, length(tag) AS l FROM {t} WHERE tag LIKE '%3' ORDER BY n LIMIT 3",
    "SELECT tag || '-' || n AS k FROM {t} ORDER BY tag DESC, n LIMIT 4",
]


def test_cold_text_reads_as_string_views_and_answers_as_plain_strings(services) -> None:
    """With no decoded-column cache, a Parquet extent's text columns reach DataFusion as
    string views (faster to group, compare and sort); the answers are plain strings, equal
    to the cache's (plain strings in memory) and to a table mixing tlm and Parquet extents."""
    _load(services, "texts", ["parquet", "parquet"])
    _load(services, "both", ["tlm", "parquet"])
    cold = QueryEngine(services.catalog, services.store, segment_format())
    typed = cold.execute("SELECT arrow_typeof(tag) AS t FROM texts LIMIT 1")
    assert typed.table.to_pylist() == [{"t": "Utf8View"}]
    for query in TEXT_QUERIES:
        answers = [
            engine.execute(query.format(t=t)).table
            for engine in (cold, services.query)
            for t in ("texts", "both")
        ]
        assert answers[0].num_rows > 0, query
        for answer in answers:
            assert all(not pa.types.is_string_view(f.type) for f in answer.schema), query
            assert answer.to_pylist() == answers[0].to_pylist(), query
