"""Benchmark: multi-table analytical queries through a Postgres connector, against Postgres.

    python bench/federation_dss.py [--scale 10] [--repeat 5] [--repeat-off 2]

A source Postgres (the system's binaries, started by kyma's EmbeddedPostgres; TLS off,
loopback only) gets database ``dss`` (ICU en-US collation, server time zone
America/New_York) holding the decision-support schema of ``tests/connectors/dss_seed.sql``
(``CHAR(n)``, ``VARCHAR(n)``, ``DECIMAL(15,2)``, ``NUMERIC(30,10)``, ``DATE``,
``TIMESTAMPTZ``, primary keys), its data made the same way but larger: ``--scale N`` gives
1 500·N customers, 100·N suppliers, 15 000·N orders and about 60 000·N line items (a
third of the customers have no orders, as in TPC-H). A real ``kyma serve`` reads it through
connector ``src``. Twelve TPC-H-style queries (joins of 2–6 tables, ``extract(year …)``,
``substring``, ``CASE`` inside aggregates, ``EXISTS``/``NOT EXISTS``, a correlated
subquery) each run three ways, as in ``bench/federation.py``: kyma (``POST /v1/query``,
pushdown on), direct (psycopg, every row fetched; alternating with kyma's runs) and kyma
with ``"pushdown": false``. One warm-up each, then medians.

Per query: the times, kyma ÷ direct, whether the query went down whole (one scan, no
residual), the rows fetched from the source (over every scan of ``pushdown_summary``),
and whether kyma's answer agrees with Postgres's. Goal (issue 17): every single-source
query within 1.2 × direct + 5 ms with pushdown on; queries over it are flagged.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import re
import statistics
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from _harness import Server, seconds
from federation import post_query, serving, source_postgres

GOAL_RATIO, GOAL_MS = 1.2, 5.0
DATABASE = (
    "CREATE DATABASE dss TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
)
MIDNIGHT = re.compile(r"^\d{4}-\d{2}-\d{2}T00:00:00(\.0+)?Z?$")
TABLES = ("region", "nation", "supplier", "customer", "orders", "lineitem")

# The schema of tests/connectors/dss_seed.sql (the statements before its first INSERT), read
# from there; its data made the same way, scaled ({c} customers, {s} suppliers, {o} orders)
# and with bigint arithmetic where the products outgrow int.
SEED = Path(__file__).resolve().parents[1] / "tests" / "connectors" / "dss_seed.sql"
SCHEMA = SEED.read_text().split("INSERT INTO", 1)[0]
DATA = """
INSERT INTO region VALUES
    (0, 'AFRICA', 'lar deposits'), (1, 'AMERICA', 'hs use ironic'), (2, 'ASIA', 'ges. thinly'),
    (3, 'EUROPE', 'ly final courts'), (4, 'MIDDLE EAST', 'uickly special');

INSERT INTO nation
SELECT i, (ARRAY['ALGERIA', 'ARGENTINA', 'BRAZIL', 'CANADA', 'EGYPT', 'ETHIOPIA', 'FRANCE',
                 'GERMANY', 'INDIA', 'INDONESIA', 'IRAN', 'IRAQ', 'JAPAN', 'JORDAN', 'KENYA',
                 'MOROCCO', 'MOZAMBIQUE', 'PERU', 'CHINA', 'ROMANIA', 'SAUDI ARABIA', 'VIETNAM',
                 'RUSSIA', 'UNITED KINGDOM', 'UNITED STATES'])[i + 1],
       (ARRAY[0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1])[i + 1],
       CASE WHEN i % 4 = 0 THEN NULL ELSE 'nation comment ' || i END
FROM generate_series(0, 24) AS i;

INSERT INTO supplier
SELECT i, 'Supplier#' || lpad(i::text, 9, '0'), (i * 7) % 25,
       ((i::bigint * 7919) % 1000000) / 100.0 - 999.99
FROM generate_series(1, {s}) AS i;

INSERT INTO customer
SELECT i,
       'Customer#' || lpad(i::text, 9, '0'),
       (i * 13) % 25,
       lpad(((i * 13) % 25 + 10)::text, 2, '0') || '-' || lpad(((i * 7) % 1000)::text, 3, '0')
           || '-' || lpad(((i * 11) % 1000)::text, 3, '0') || '-'
           || lpad((i % 10000)::text, 4, '0'),
       CASE WHEN i % 17 = 0 THEN NULL ELSE ((i::bigint * 104729) % 1100000) / 100.0 - 999.99 END,
       CASE WHEN i % 23 = 0 THEN NULL
            ELSE (ARRAY['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'])[1 + i % 5]
       END
FROM generate_series(1, {c}) AS i;

-- o_custkey never a multiple of 3: x in [0, 2c/3) maps onto 1, 2, 4, 5, 7, ...
INSERT INTO orders
SELECT i,
       3 * (x / 2) + 1 + x % 2,
       (ARRAY['F', 'O', 'P'])[1 + i % 3],
       ((i::bigint * 15485863) % 50000000) / 100.0 + 0.01,
       DATE '1992-01-01' + (i::bigint * 37 % 2400)::int,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + i % 5],
       CASE WHEN i % 19 = 0 THEN NULL
            ELSE TIMESTAMPTZ '1992-01-01 00:00:00+00'
                 + ((i::bigint * 7919) % 200000) * INTERVAL '17 minutes'
       END,
       CASE WHEN i % 9 = 0 THEN 'special requests ' || i ELSE 'regular ' || i END
FROM generate_series(1, {o}) AS i,
     LATERAL (SELECT ((i::bigint * 31) % ({c} * 2 / 3))::int AS x) AS k;

INSERT INTO lineitem
SELECT o, n,
       1 + (o::bigint * 7 + n * 3) % {s},
       1 + (o + n * 11) % 50,
       ((o::bigint * 104729 + n * 7919) % 9000000) / 100.0 + 900.00,
       ((o + n) % 11) / 100.0,
       ((o * 3 + n) % 9) / 100.0,
       (ARRAY['A', 'N', 'R'])[1 + (o + n) % 3],
       (ARRAY['F', 'O'])[1 + (o::bigint * n % 2)::int],
       DATE '1992-01-02' + (o::bigint * 37 % 2400)::int + n * 5,
       (ARRAY['AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK'])[1 + (o + 2 * n) % 7],
       CASE WHEN (o + n) % 13 = 0 THEN NULL
            ELSE ((o::bigint * 7919 + n) % 1000000007)::numeric / 3 + 1e15 END,
       CASE WHEN (o + n) % 29 = 0 THEN 'NaN'::float8
            WHEN (o + n) % 31 = 0 THEN 'Infinity'::float8
            ELSE ((o::bigint * 31 + n) % 97) / 7.0 END
FROM generate_series(1, {o}) AS o, generate_series(1, 1 + (o % 7)) AS n;
"""

# Bare table names, as in tests/connectors/dss_queries.sql; kyma reads src.public.<table>.
QUERIES = {
    "q1_pricing": (
        "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,"
        " sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,"
        " avg(l_quantity) AS avg_qty, count(*) AS count_order FROM lineitem"
        " WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY"
        " GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"
    ),
    "q3_shipping": (
        "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate,"
        " o_orderstatus FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING'"
        " AND c_custkey = o_custkey AND l_orderkey = o_orderkey"
        " AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'"
        " GROUP BY l_orderkey, o_orderdate, o_orderstatus"
        " ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10"
    ),
    "q4_exists": (
        "SELECT o_orderpriority, count(*) AS order_count FROM orders"
        " WHERE o_orderdate >= DATE '1993-07-01'"
        " AND o_orderdate < DATE '1993-07-01' + INTERVAL '3' MONTH"
        " AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey"
        " AND l_linenumber > 2) GROUP BY o_orderpriority ORDER BY o_orderpriority"
    ),
    "q5_6_tables": (
        "SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue"
        " FROM customer, orders, lineitem, supplier, nation, region"
        " WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey"
        " AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey"
        " AND n_regionkey = r_regionkey AND r_name = 'ASIA'"
        " AND o_orderdate >= DATE '1994-01-01'"
        " AND o_orderdate < DATE '1994-01-01' + INTERVAL '1' YEAR"
        " GROUP BY n_name ORDER BY revenue DESC, n_name"
    ),
    "q6_forecast": (
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem"
        " WHERE l_shipdate >= DATE '1994-01-01'"
        " AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR"
        " AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24"
    ),
    "q8_year_share": (
        "SELECT extract(year FROM o_orderdate) AS o_year,"
        " sum(CASE WHEN n_name = 'BRAZIL' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)"
        " / sum(l_extendedprice * (1 - l_discount)) AS mkt_share"
        " FROM lineitem, orders, customer, nation WHERE l_orderkey = o_orderkey"
        " AND o_custkey = c_custkey AND c_nationkey = n_nationkey"
        " GROUP BY o_year ORDER BY o_year"
    ),
    "q10_returned": (
        "SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue,"
        " c_acctbal, n_name FROM customer, orders, lineitem, nation"
        " WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey"
        " AND o_orderdate >= DATE '1993-10-01'"
        " AND o_orderdate < DATE '1993-10-01' + INTERVAL '3' MONTH"
        " AND l_returnflag = 'R' AND c_nationkey = n_nationkey"
        " GROUP BY c_custkey, c_name, c_acctbal, n_name ORDER BY revenue DESC, c_custkey"
        " LIMIT 20"
    ),
    "q12_case_agg": (
        "SELECT l_shipmode, sum(CASE WHEN o_orderpriority = '1-URGENT'"
        " OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count,"
        " sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'"
        " THEN 1 ELSE 0 END) AS low_line_count FROM orders, lineitem"
        " WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP')"
        " AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'"
        " GROUP BY l_shipmode ORDER BY l_shipmode"
    ),
    "q14_promo": (
        "SELECT 100.00 * sum(CASE WHEN l_shipmode LIKE 'R%' THEN"
        " l_extendedprice * (1 - l_discount) ELSE 0 END)"
        " / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue FROM lineitem"
        " WHERE l_shipdate >= DATE '1995-09-01'"
        " AND l_shipdate < DATE '1995-09-01' + INTERVAL '1' MONTH"
    ),
    "q17_correlated": (
        "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, orders"
        " WHERE o_orderkey = l_orderkey AND l_quantity < (SELECT 0.2 * avg(l_quantity)"
        " FROM lineitem l2 WHERE l2.l_orderkey = o_orderkey)"
    ),
    "q21_suppliers": (
        "SELECT s_name, count(*) AS numwait FROM supplier, lineitem, orders, nation"
        " WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND o_orderstatus = 'F'"
        " AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'"
        " GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 10"
    ),
    "q22_substr_notex": (
        "SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM"
        " (SELECT substring(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal FROM customer"
        " WHERE substring(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')"
        " AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00"
        " AND substring(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17'))"
        " AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale"
        " GROUP BY cntrycode ORDER BY cntrycode"
    ),
}


def qualified(sql: str) -> str:
    """The bare table names as the connector's: ``src.public.<table>``."""
    return re.sub(rf"\b({'|'.join(TABLES)})\b", r"src.public.\1", sql)


def _value(v: object) -> object:
    """One cell comparable across psycopg and kyma's JSON: numbers to 9 significant
    digits (kyma may answer a numeric as a float or a string), text without trailing
    blanks (``char(n)`` padding), dates and times as ISO text."""
    if isinstance(v, str):
        if MIDNIGHT.match(v):  # kyma's JSON gives a date as a timestamp at midnight UTC
            return v[:10]
        try:
            v = float(v)
        except ValueError:
            return v.rstrip()
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int | float | Decimal):
        f = float(v)
        return "nan" if math.isnan(f) else float(f"{f:.9g}")
    if isinstance(v, datetime.date | datetime.datetime):
        return v.isoformat()
    return v


def agrees(answer: dict, expected: list[tuple]) -> bool:
    """kyma's rows are Postgres's, in order (every query here orders or has one row)."""
    got = [[_value(v) for v in row] for row in answer["rows"]]
    return got == [[_value(v) for v in row] for row in expected]


def load_source(url: str, scale: int) -> None:
    """The scaled schema in ``dss``, vacuumed and analyzed."""
    started = time.perf_counter()
    sizes = {"c": 1_500 * scale, "s": 100 * scale, "o": 15_000 * scale}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SCHEMA + DATA.format(**sizes))
        conn.execute("VACUUM ANALYZE")
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
            for t in ("customer", "orders", "lineitem")
        }
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]  # type: ignore[index]
    print(
        f"loaded dss at scale {scale}: {counts['customer']:,} customers, {counts['orders']:,}"
        f" orders, {counts['lineitem']:,} line items ({size / 2**20:,.0f} MiB)"
        f" in {time.perf_counter() - started:.0f} s"
    )


def _rows(answer: dict) -> int:
    return sum(s["rows_fetched"] or 0 for s in answer["pushdown_summary"])


def _geomean(ratios: list[float]) -> float:
    return statistics.geometric_mean(ratios) if ratios else math.nan


def _whole(answer: dict) -> bool:
    scans = answer["pushdown_summary"]
    return len(scans) == 1 and not scans[0]["residual"]


def residuals(answer: dict) -> list[str]:
    """Why a query did not go down whole: each residual once, long expressions cut."""
    seen = dict.fromkeys(
        f"{r['reason']}: {r['expression'][:70]}{'…' if len(r['expression']) > 70 else ''}"
        for s in answer["pushdown_summary"]
        for r in s["residual"]
    )
    return list(seen) or [f"{len(answer['pushdown_summary'])} scans"]


def attempt(conn, sql: str, *, pushdown: bool) -> dict | str:
    """kyma's answer, or its error message (a refusal is a result here, not a crash)."""
    status, result = post_query(conn, sql, pushdown=pushdown)
    if status != 200:
        return f"{status} {result.get('error')}: {result.get('message')}"
    return result


def kyma_side(answer: dict | str, expected: list[tuple]) -> tuple[str, str, str, str]:
    """whole, scans, rows fetched and agreement, or the error in their place."""
    if isinstance(answer, str):
        return "-", "-", "-", "ERR"
    return (
        "yes" if _whole(answer) else "no",
        str(len(answer["pushdown_summary"])),
        f"{_rows(answer):,}",
        "y" if agrees(answer, expected) else "NO",
    )


def compare(server: Server, direct: psycopg.Connection, repeat: int, repeat_off: int) -> None:
    """Every query three ways, one line each; then the geometric means and the residuals."""
    conn = server.connection()
    print(
        f"median of {repeat} runs, kyma and direct alternating (pushdown off: {repeat_off}),"
        " after one warm-up; kyma's time includes HTTP and JSON"
    )
    print(
        f"{'query':<18}{'direct ms':>10}{'rows':>6}{'kyma ms':>9}{'k/d':>7}{'whole':>6}"
        f"{'scans':>6}{'fetched':>9}{'ok':>4}{'no-pd ms':>10}{'nopd/d':>8}{'fetched':>10}"
        f"{'ok':>4}  goal"
    )
    ratios, ratios_off, over, notes = [], [], [], {}
    for name, bare in QUERIES.items():
        kyma_sql = qualified(bare)
        on = attempt(conn, kyma_sql, pushdown=True)
        off = attempt(conn, kyma_sql, pushdown=False)
        expected = direct.execute(bare).fetchall()

        def run_direct(q=bare) -> None:
            direct.execute(q).fetchall()

        def run_kyma(pushdown: bool, q=kyma_sql) -> None:
            attempt(conn, q, pushdown=pushdown)

        if isinstance(on, str):  # no kyma times: direct alone
            pairs = [(math.nan, seconds(run_direct)) for _ in range(repeat)]
        else:
            pairs = [(seconds(lambda: run_kyma(True)), seconds(run_direct)) for _ in range(repeat)]
        kyma_s, direct_s = (statistics.median(side) for side in zip(*pairs, strict=True))
        off_s = math.nan
        if not isinstance(off, str):
            off_s = statistics.median(seconds(lambda: run_kyma(False)) for _ in range(repeat_off))
            ratios_off.append(off_s / direct_s)
        kyma_ms, direct_ms = kyma_s * 1000, direct_s * 1000
        goal = "ok" if kyma_ms <= GOAL_RATIO * direct_ms + GOAL_MS else "OVER"
        if goal == "OVER":
            over.append(name)
        if isinstance(on, str):
            notes[name] = [f"error: {on}"]
        else:
            ratios.append(kyma_s / direct_s)
            if not _whole(on):
                notes[name] = residuals(on)
        if isinstance(off, str):
            notes.setdefault(name, []).append(f"error without pushdown: {off}")
        whole, scans, fetched, ok = kyma_side(on, expected)
        _, _, fetched_off, ok_off = kyma_side(off, expected)
        print(
            f"{name:<18}{direct_ms:>10.1f}{len(expected):>6,}{kyma_ms:>9.1f}"
            f"{kyma_s / direct_s:>6.2f}x{whole:>6}{scans:>6}{fetched:>9}{ok:>4}"
            f"{off_s * 1000:>10.0f}{off_s / direct_s:>7.1f}x{fetched_off:>10}{ok_off:>4}"
            f"  {goal}"
        )
    print(
        f"geometric mean kyma/direct {_geomean(ratios):.2f}x,"
        f" no pushdown/direct {_geomean(ratios_off):.1f}x;"
        f" goal: kyma <= {GOAL_RATIO} x direct + {GOAL_MS:.0f} ms;"
        f" over it: {', '.join(over) or 'none'}"
    )
    print(
        "whole = one pushed statement, no residual; fetched = rows_fetched over every scan"
        " of pushdown_summary; ok = the same rows as Postgres, in order (ERR: kyma refused)"
    )
    if notes:
        print("not pushed whole (residuals, each once) or refused:")
    for name, reasons in notes.items():
        print(f"{name}:")
        for reason in reasons:
            print(f"    {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repeat-off", type=int, default=2)
    args = parser.parse_args()
    print(
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores;"
        " source Postgres on loopback, TLS off, database dss (ICU en-US, America/New_York)"
    )
    with source_postgres("kyma-bench-federation-dss-") as (admin_url, _):
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(DATABASE)
            admin.execute("ALTER DATABASE dss SET timezone TO 'America/New_York'")
        url = urlunsplit(urlsplit(admin_url)._replace(path="/dss"))
        load_source(url, args.scale)
        with serving(url) as server, psycopg.connect(url, autocommit=True) as direct:
            compare(server, direct, args.repeat, args.repeat_off)


if __name__ == "__main__":
    main()
