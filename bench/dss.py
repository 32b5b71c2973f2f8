"""Benchmark: a TPC-H-style decision-support suite on kyma tables against DuckDB over Parquet.

    python bench/dss.py [--sf 0.1] [--repeat 3] [--cache-bytes N] [--compaction server|off|full]

The eight tables are generated locally by DuckDB SQL (TPC-H's shapes, sizes and value
domains at scale factor ``--sf``; not dbgen's exact text), loaded into a real ``kyma serve``
through ``POST /v1/ingest`` (NDJSON, 50 000 lines a request) and written as Parquet files
(one per table) that DuckDB reads. The 22 queries are TPC-H's, with the validation
parameters, written once in SQL both engines take (dates as timestamps at midnight UTC,
intervals precomputed, Q15's view as a CTE). kyma answers over HTTP as Arrow IPC streams.
The tables are queried as the server's compactor leaves them (``--compaction server``,
waited for), as ingested (``off``: one extent a request) or fully compacted (``full``).
Each query: one warm-up each, then the median of ``--repeat`` runs, alternating; the
answers must agree (numbers to 9 significant digits). Prints per-query wall and CPU times
(the server process's from /proc, against this process's for DuckDB; means of the runs),
kyma ÷ DuckDB and the geometric means of the ratios (goal ≤ 1.5), and each engine's first
run (kyma's plans the statement and decodes the columns it keeps,
``KYMA_QUERY_CACHE_BYTES``; set it with ``--cache-bytes``, 0 to read Parquet every time).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
from _dss_tables import LINES, TABLES, generate, kyma_ddl
from _harness import Server, wait_for
from _otel_logs import chunks


def _d(day: str) -> str:
    return f"'{day}T00:00:00Z'"


def queries(sf: float) -> dict[str, str]:
    """TPC-H's 22 queries with the validation parameters, in SQL both engines take."""
    revenue = "l_extendedprice * (1 - l_discount)"
    return {
        "q01": "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,"
        " sum(l_extendedprice) AS sum_base_price, sum(" + revenue + ") AS sum_disc_price,"
        " sum(" + revenue + " * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,"
        " avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,"
        " count(*) AS count_order FROM lineitem WHERE l_shipdate <= " + _d("1998-09-02") + ""
        " GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
        "q02": "SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone,"
        " s_comment FROM part, supplier, partsupp, nation, region WHERE p_partkey = ps_partkey"
        " AND s_suppkey = ps_suppkey AND p_size = 15 AND p_type LIKE '%BRASS'"
        " AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE'"
        " AND ps_supplycost = (SELECT min(ps_supplycost) FROM partsupp, supplier, nation,"
        " region WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey"
        " AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE')"
        " ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100",
        "q03": "SELECT l_orderkey, sum(" + revenue + ") AS revenue, o_orderdate, o_shippriority"
        " FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING'"
        " AND c_custkey = o_custkey AND l_orderkey = o_orderkey"
        " AND o_orderdate < " + _d("1995-03-15") + " AND l_shipdate > " + _d("1995-03-15") + ""
        " GROUP BY l_orderkey, o_orderdate, o_shippriority"
        " ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10",
        "q04": "SELECT o_orderpriority, count(*) AS order_count FROM orders"
        " WHERE o_orderdate >= " + _d("1993-07-01") + " AND o_orderdate < " + _d("1993-10-01") + ""
        " AND EXISTS (SELECT 1 FROM lineitem WHERE l_orderkey = o_orderkey"
        " AND l_commitdate < l_receiptdate) GROUP BY o_orderpriority ORDER BY o_orderpriority",
        "q05": "SELECT n_name, sum(" + revenue + ") AS revenue FROM customer, orders, lineitem,"
        " supplier, nation, region WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey"
        " AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey"
        " AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'ASIA'"
        " AND o_orderdate >= " + _d("1994-01-01") + " AND o_orderdate < " + _d("1995-01-01") + ""
        " GROUP BY n_name ORDER BY revenue DESC",
        "q06": "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem"
        " WHERE l_shipdate >= " + _d("1994-01-01") + " AND l_shipdate < " + _d("1995-01-01") + ""
        " AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        "q07": "SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue FROM ("
        "SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,"
        " extract(year FROM l_shipdate) AS l_year, " + revenue + " AS volume"
        " FROM supplier, lineitem, orders, customer, nation n1, nation n2"
        " WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey"
        " AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey"
        " AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY')"
        " OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))"
        " AND l_shipdate BETWEEN " + _d("1995-01-01") + " AND " + _d("1996-12-31") + ""
        ") AS shipping GROUP BY supp_nation, cust_nation, l_year"
        " ORDER BY supp_nation, cust_nation, l_year",
        "q08": "SELECT o_year, sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END)"
        " / sum(volume) AS mkt_share FROM (SELECT extract(year FROM o_orderdate) AS o_year,"
        " " + revenue + " AS volume, n2.n_name AS nation FROM part, supplier, lineitem,"
        " orders, customer, nation n1, nation n2, region WHERE p_partkey = l_partkey"
        " AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey AND o_custkey = c_custkey"
        " AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey"
        " AND r_name = 'AMERICA' AND s_nationkey = n2.n_nationkey"
        " AND o_orderdate BETWEEN " + _d("1995-01-01") + " AND " + _d("1996-12-31") + ""
        " AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations GROUP BY o_year ORDER BY o_year",
        "q09": "SELECT nation, o_year, sum(amount) AS sum_profit FROM (SELECT n_name AS nation,"
        " extract(year FROM o_orderdate) AS o_year,"
        " " + revenue + " - ps_supplycost * l_quantity AS amount"
        " FROM part, supplier, lineitem, partsupp, orders, nation WHERE s_suppkey = l_suppkey"
        " AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey AND p_partkey = l_partkey"
        " AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey"
        " AND p_name LIKE '%green%') AS profit GROUP BY nation, o_year"
        " ORDER BY nation, o_year DESC",
        "q10": "SELECT c_custkey, c_name, sum(" + revenue + ") AS revenue, c_acctbal, n_name,"
        " c_address, c_phone, c_comment FROM customer, orders, lineitem, nation"
        " WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey"
        " AND o_orderdate >= " + _d("1993-10-01") + " AND o_orderdate < " + _d("1994-01-01") + ""
        " AND l_returnflag = 'R' AND c_nationkey = n_nationkey"
        " GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment"
        " ORDER BY revenue DESC, c_custkey LIMIT 20",
        "q11": "SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value"
        " FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey"
        " AND s_nationkey = n_nationkey AND n_name = 'GERMANY' GROUP BY ps_partkey"
        " HAVING sum(ps_supplycost * ps_availqty) > (SELECT sum(ps_supplycost * ps_availqty)"
        f" * {0.0001 / sf:.6f} FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey"
        " AND s_nationkey = n_nationkey AND n_name = 'GERMANY')"
        " ORDER BY value DESC, ps_partkey",
        "q12": "SELECT l_shipmode, sum(CASE WHEN o_orderpriority = '1-URGENT'"
        " OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count,"
        " sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'"
        " THEN 1 ELSE 0 END) AS low_line_count FROM orders, lineitem"
        " WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP')"
        " AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate"
        " AND l_receiptdate >= " + _d("1994-01-01") + ""
        " AND l_receiptdate < " + _d("1995-01-01") + " GROUP BY l_shipmode ORDER BY l_shipmode",
        "q13": "SELECT c_count, count(*) AS custdist FROM (SELECT c_custkey,"
        " count(o_orderkey) AS c_count FROM customer LEFT OUTER JOIN orders"
        " ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'"
        " GROUP BY c_custkey) AS c_orders GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
        "q14": "SELECT 100 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN " + revenue + " ELSE 0 END)"
        " / sum(" + revenue + ") AS promo_revenue FROM lineitem, part"
        " WHERE l_partkey = p_partkey AND l_shipdate >= " + _d("1995-09-01") + ""
        " AND l_shipdate < " + _d("1995-10-01"),
        "q15": "WITH revenue0 AS (SELECT l_suppkey AS supplier_no, sum(" + revenue + ")"
        " AS total_revenue FROM lineitem WHERE l_shipdate >= " + _d("1996-01-01") + ""
        " AND l_shipdate < " + _d("1996-04-01") + " GROUP BY l_suppkey)"
        " SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue0"
        " WHERE s_suppkey = supplier_no"
        " AND total_revenue = (SELECT max(total_revenue) FROM revenue0) ORDER BY s_suppkey",
        "q16": "SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt"
        " FROM partsupp, part WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45'"
        " AND p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)"
        " AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier"
        " WHERE s_comment LIKE '%Customer%Complaints%') GROUP BY p_brand, p_type, p_size"
        " ORDER BY supplier_cnt DESC, p_brand, p_type, p_size",
        "q17": "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part"
        " WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX'"
        " AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem"
        " WHERE l_partkey = p_partkey)",
        "q18": "SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice,"
        " sum(l_quantity) AS total_qty FROM customer, orders, lineitem"
        " WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey"
        " HAVING sum(l_quantity) > 300) AND c_custkey = o_custkey AND o_orderkey = l_orderkey"
        " GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice"
        " ORDER BY o_totalprice DESC, o_orderdate, o_orderkey LIMIT 100",
        "q19": "SELECT sum(" + revenue + ") AS revenue FROM lineitem, part WHERE"
        " (p_partkey = l_partkey AND p_brand = 'Brand#12'"
        " AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')"
        " AND l_quantity >= 1 AND l_quantity <= 11 AND p_size BETWEEN 1 AND 5"
        " AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON')"
        " OR (p_partkey = l_partkey AND p_brand = 'Brand#23'"
        " AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')"
        " AND l_quantity >= 10 AND l_quantity <= 20 AND p_size BETWEEN 1 AND 10"
        " AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON')"
        " OR (p_partkey = l_partkey AND p_brand = 'Brand#34'"
        " AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')"
        " AND l_quantity >= 20 AND l_quantity <= 30 AND p_size BETWEEN 1 AND 15"
        " AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON')",
        "q20": "SELECT s_name, s_address FROM supplier, nation WHERE s_suppkey IN ("
        "SELECT ps_suppkey FROM partsupp WHERE ps_partkey IN (SELECT p_partkey FROM part"
        " WHERE p_name LIKE 'forest%') AND ps_availqty > (SELECT 0.5 * sum(l_quantity)"
        " FROM lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey"
        " AND l_shipdate >= " + _d("1994-01-01") + " AND l_shipdate < " + _d("1995-01-01") + "))"
        " AND s_nationkey = n_nationkey AND n_name = 'CANADA' ORDER BY s_name",
        "q21": "SELECT s_name, count(*) AS numwait FROM supplier, lineitem l1, orders, nation"
        " WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey"
        " AND o_orderstatus = 'F' AND l1.l_receiptdate > l1.l_commitdate"
        " AND EXISTS (SELECT 1 FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey"
        " AND l2.l_suppkey <> l1.l_suppkey) AND NOT EXISTS (SELECT 1 FROM lineitem l3"
        " WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey"
        " AND l3.l_receiptdate > l3.l_commitdate) AND s_nationkey = n_nationkey"
        " AND n_name = 'SAUDI ARABIA' GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100",
        "q22": "SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM ("
        "SELECT substring(c_phone, 1, 2) AS cntrycode, c_acctbal FROM customer"
        " WHERE substring(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')"
        " AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00"
        " AND substring(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17'))"
        " AND NOT EXISTS (SELECT 1 FROM orders WHERE o_custkey = c_custkey)) AS custsale"
        " GROUP BY cntrycode ORDER BY cntrycode",
    }


def _cell(v: object) -> object:
    """One cell comparable across both engines: numbers to 9 significant digits, times as
    UTC epoch seconds."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int | float | Decimal):
        f = float(v)
        return "nan" if math.isnan(f) else float(f"{f:.9g}")
    if isinstance(v, datetime.datetime):
        return v.timestamp()
    return v


def rows(table: pa.Table) -> list[list[object]]:
    return [[_cell(v) for v in row.values()] for row in table.to_pylist()]


def kyma_arrow(server: Server, conn, sql: str) -> pa.Table:  # type: ignore[no-untyped-def]
    conn.request(
        "POST",
        "/v1/query",
        json.dumps({"sql": sql}),
        {"Content-Type": "application/json", "Accept": "application/vnd.apache.arrow.stream"},
    )
    answer = conn.getresponse()
    body = answer.read()
    assert answer.status == 200, body[:500]
    return pa.ipc.open_stream(body).read_all()


def server_cpu(server: Server) -> float:
    """CPU seconds the ``kyma serve`` process has used (all its threads), from /proc."""
    fields = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def compact(server: Server) -> None:
    """``kyma compact`` on the server's home (the catalog it serves): every group merged, as
    the maintenance round does; prints what each table gained."""
    env = {**os.environ, "KYMA_HOME": str(server.home)}
    out = subprocess.run(
        [sys.executable, "-m", "kyma", "compact"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    print(out.stdout.strip())


def _get(server: Server, path: str) -> dict:
    conn = server.connection()
    conn.request("GET", path)
    return json.loads(conn.getresponse().read())


def compaction_pending(server: Server) -> float:
    """The server's ``kyma_compaction_pending_tables`` gauge."""
    conn = server.connection()
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    line = next(x for x in text.splitlines() if x.startswith("kyma_compaction_pending_tables "))
    return float(line.split()[1])


def run_queries(server: Server, conn, peer, sf: float, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Every query timed on both engines; the per-query CPU ratios (wall ratios printed)."""
    print(
        f"{'query':<6}{'kyma ms':>10}{'duckdb ms':>11}{'kyma/duckdb':>13}"
        f"{'cpu: kyma ms':>14}{'duckdb ms':>11}{'ratio':>8}  rows  agree"
        f"{'first: kyma ms':>16}{'duckdb ms':>11}"
    )
    ratios, cpu_ratios, disagree = [], [], []
    for name, sql in queries(sf).items():
        kyma_times, duck_times, kyma_cpu, duck_cpu = [], [], [], []
        t = time.perf_counter()
        got = kyma_arrow(server, conn, sql)
        kyma_first = time.perf_counter() - t
        t = time.perf_counter()
        expected = peer.sql(sql).to_arrow_table()
        duck_first = time.perf_counter() - t
        for _ in range(repeat):
            c, t = server_cpu(server), time.perf_counter()
            kyma_arrow(server, conn, sql)
            kyma_times.append(time.perf_counter() - t)
            kyma_cpu.append(server_cpu(server) - c)
            c, t = time.process_time(), time.perf_counter()
            peer.sql(sql).to_arrow_table()
            duck_times.append(time.perf_counter() - t)
            duck_cpu.append(time.process_time() - c)
        kyma_s, duck_s = statistics.median(kyma_times), statistics.median(duck_times)
        # means, not medians: the server's CPU is counted in 10 ms ticks
        kc, dc = (max(0.001, statistics.fmean(x)) for x in (kyma_cpu, duck_cpu))
        agree = rows(got) == rows(expected)
        if not agree:
            disagree.append(name)
        ratios.append(kyma_s / duck_s)
        cpu_ratios.append(kc / dc)
        print(
            f"{name:<6}{kyma_s * 1000:>10.1f}{duck_s * 1000:>11.1f}{kyma_s / duck_s:>12.2f}x"
            f"{kc * 1000:>14.0f}{dc * 1000:>11.0f}{kc / dc:>7.2f}x"
            f"{got.num_rows:>6}  {'yes' if agree else 'NO '}"
            f"{kyma_first * 1000:>16.1f}{duck_first * 1000:>11.1f}"
        )
    print(
        f"geometric mean kyma/duckdb: {_geomean(ratios):.2f}x wall, {_geomean(cpu_ratios):.2f}x"
        f" CPU (goal <= 1.5x); load {os.getloadavg()[0]:.1f}"
    )
    if disagree:
        print(f"answers differ: {', '.join(disagree)}")
    return cpu_ratios


def _geomean(ratios: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(r) for r in ratios))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache-bytes", type=int, default=None)
    parser.add_argument(
        "--compaction",
        choices=("server", "off", "full"),
        default="server",
        help="server: the tables as the server's compactor leaves them (waited for); off: as"
        " ingested, one extent a request; full: every small extent merged (kyma compact)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-dss-"))
    con = duckdb.connect()
    started = time.perf_counter()
    counts = generate(con, args.sf)
    print(
        f"sf={args.sf}: {counts['lineitem']:,} line items, generated in"
        f" {time.perf_counter() - started:.1f} s; {platform.node()} {platform.machine()},"
        f" {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    env = {} if args.cache_bytes is None else {"KYMA_QUERY_CACHE_BYTES": str(args.cache_bytes)}
    if args.compaction != "server":
        env["KYMA_COMPACTION_INTERVAL_SECONDS"] = "0"
    server = Server(**env)
    peer = duckdb.connect()
    peer.execute("SET TimeZone = 'UTC'")
    try:
        conn = server.connection()
        for table in TABLES:
            ddl, select = kyma_ddl(con, table)
            server.sql(ddl, conn)
            con.execute(f"COPY {table} TO '{work / table}.parquet' (FORMAT PARQUET)")
            path = work / f"{table}.ndjson"
            con.execute(f"COPY (SELECT {', '.join(select)} FROM {table}) TO '{path}' (FORMAT JSON)")
            assert server.ingest(table, chunks(path, LINES), clients=2) == counts[table]
            peer.execute(
                f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{work / table}.parquet')"
            )
        con.close()
        if args.compaction == "full":
            compact(server)
        elif args.compaction == "server":
            wait_for("the compactor", lambda: compaction_pending(server) == 0, timeout=600)
        extents = {t: _get(server, f"/v1/tables/{t}")["extents"] for t in TABLES}
        print(f"compaction {args.compaction}: extents {extents}")
        run_queries(server, conn, peer, args.sf, args.repeat)
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
