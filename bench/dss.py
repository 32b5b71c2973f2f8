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
from _harness import Server, wait_for
from _otel_logs import chunks

LINES = 50_000
NATIONS = [
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4),
    ("ETHIOPIA", 0), ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2),
    ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2), ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0),
    ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2), ("ROMANIA", 3), ("SAUDI ARABIA", 4),
    ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3), ("UNITED STATES", 1),
]  # fmt: skip
COLORS = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
]


def _list(words: list[str]) -> str:
    return "[" + ", ".join(f"'{w}'" for w in words) + "]"


def _pick(words: list[str], key: str, salt: int) -> str:
    """One of ``words``, chosen by a hash of ``key`` (DuckDB lists are 1-based)."""
    return f"{_list(words)}[(hash({key}, {salt}) % {len(words)})::INT + 1]"


def _int(key: str, salt: int, lo: int, hi: int) -> str:
    return f"({lo} + (hash({key}, {salt}) % {hi - lo + 1})::BIGINT)"


SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
TYPES1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"]
TYPES2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"]
TYPES3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"]
CONTAINERS1 = ["SM", "LG", "MED", "JUMBO", "WRAP"]
CONTAINERS2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"]
INSTRUCTIONS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
WORDS = [
    "carefully",
    "final",
    "ironic",
    "pending",
    "regular",
    "express",
    "bold",
    "quick",
    "special",
    "requests",
    "deposits",
]
START = "TIMESTAMPTZ '1992-01-01 00:00:00+00'"


def _comment(key: str, salt: int) -> str:
    return " || ' ' || ".join(_pick(WORDS, key, salt + k) for k in range(4))


def generate(con: duckdb.DuckDBPyConnection, sf: float) -> dict[str, int]:
    """The eight tables in DuckDB at scale ``sf``; their row counts."""
    suppliers, customers, parts = int(10_000 * sf), int(150_000 * sf), int(200_000 * sf)
    orders = int(1_500_000 * sf)
    nation_rows = ", ".join(f"({i}, '{n}', {r})" for i, (n, r) in enumerate(NATIONS))
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"""
        CREATE TABLE region AS SELECT i::BIGINT AS r_regionkey,
            {_list(["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"])}[i + 1] AS r_name,
            {_comment("i", 1)} AS r_comment FROM range(5) t(i);
        CREATE TABLE nation AS SELECT k::BIGINT AS n_nationkey, n AS n_name,
            r::BIGINT AS n_regionkey, {_comment("k", 2)} AS n_comment
            FROM (VALUES {nation_rows}) v(k, n, r);
        CREATE TABLE supplier AS SELECT i AS s_suppkey, 'Supplier#' || lpad(i::TEXT, 9, '0')
            AS s_name, 'addr ' || hash(i, 3) % 100000 AS s_address,
            {_int("i", 4, 0, 24)} AS s_nationkey,
            ({_int("i", 4, 0, 24)} + 10)::TEXT || '-' || lpad((hash(i, 5) % 1000)::TEXT, 3, '0')
            || '-' || lpad((hash(i, 6) % 10000)::TEXT, 4, '0') AS s_phone,
            {_int("i", 7, -99999, 999999)} / 100.0 AS s_acctbal,
            CASE WHEN hash(i, 8) % 200 = 0 THEN 'slyly Customer pending Complaints'
                 ELSE {_comment("i", 9)} END AS s_comment
            FROM range(1, {suppliers + 1}) t(i);
        CREATE TABLE customer AS SELECT i AS c_custkey, 'Customer#' || lpad(i::TEXT, 9, '0')
            AS c_name, 'addr ' || hash(i, 13) % 100000 AS c_address,
            {_int("i", 14, 0, 24)} AS c_nationkey,
            ({_int("i", 14, 0, 24)} + 10)::TEXT || '-' || lpad((hash(i, 15) % 1000)::TEXT, 3, '0')
            || '-' || lpad((hash(i, 16) % 10000)::TEXT, 4, '0') AS c_phone,
            {_int("i", 17, -99999, 999999)} / 100.0 AS c_acctbal,
            {_pick(SEGMENTS, "i", 18)} AS c_mktsegment, {_comment("i", 19)} AS c_comment
            FROM range(1, {customers + 1}) t(i);
        CREATE TABLE part AS SELECT i AS p_partkey,
            {" || ' ' || ".join(_pick(COLORS, "i", 20 + k) for k in range(5))} AS p_name,
            'Manufacturer#' || (1 + hash(i, 26) % 5) AS p_mfgr,
            'Brand#' || (1 + hash(i, 26) % 5) || (1 + hash(i, 27) % 5) AS p_brand,
            {_pick(TYPES1, "i", 28)} || ' ' || {_pick(TYPES2, "i", 29)} || ' '
            || {_pick(TYPES3, "i", 30)} AS p_type, {_int("i", 31, 1, 50)} AS p_size,
            {_pick(CONTAINERS1, "i", 32)} || ' ' || {_pick(CONTAINERS2, "i", 33)} AS p_container,
            (90000 + (i / 10) % 20001 + 100 * (i % 1000)) / 100.0 AS p_retailprice,
            {_comment("i", 34)} AS p_comment
            FROM range(1, {parts + 1}) t(i);
        CREATE TABLE partsupp AS SELECT p AS ps_partkey,
            (p + j * ({suppliers} // 4 + (p - 1) // {suppliers})) % {suppliers} + 1 AS ps_suppkey,
            {_int("p * 4 + j", 40, 1, 9999)} AS ps_availqty,
            {_int("p * 4 + j", 41, 100, 100000)} / 100.0 AS ps_supplycost,
            {_comment("p * 4 + j", 42)} AS ps_comment
            FROM range(1, {parts + 1}) t(p), range(4) u(j);
        CREATE TABLE orders AS SELECT
            (i // 8) * 32 + i % 8 + 1 AS o_orderkey,
            {_int("i", 50, 1, customers)} AS o_custkey0,
            {_pick(["F", "O", "P"], "i", 51)} AS o_orderstatus,
            {_int("i", 52, 90000, 50000000)} / 100.0 AS o_totalprice,
            {START} + to_days({_int("i", 53, 0, 2405)}::INT) AS o_orderdate,
            {_pick(PRIORITIES, "i", 54)} AS o_orderpriority,
            'Clerk#' || lpad({_int("i", 55, 1, max(1, int(1000 * sf)))}::TEXT, 9, '0') AS o_clerk,
            0::BIGINT AS o_shippriority,
            CASE WHEN hash(i, 56) % 100 < 2 THEN 'pending special deposits requests'
                 ELSE {_comment("i", 57)} END AS o_comment
            FROM range({orders}) t(i);
        UPDATE orders SET o_custkey0 = o_custkey0 + 1 WHERE o_custkey0 % 3 = 0
            AND o_custkey0 < {customers};
        ALTER TABLE orders RENAME o_custkey0 TO o_custkey;
        CREATE TABLE lineitem AS SELECT o_orderkey AS l_orderkey,
            {_int("o_orderkey * 8 + n", 60, 1, parts)} AS l_partkey,
            ({_int("o_orderkey * 8 + n", 60, 1, parts)} + n * {suppliers // 4}) % {suppliers}
                + 1 AS l_suppkey,
            n::BIGINT AS l_linenumber,
            {_int("o_orderkey * 8 + n", 61, 1, 50)}::DOUBLE AS l_quantity,
            {_int("o_orderkey * 8 + n", 61, 1, 50)}
                * (900 + {_int("o_orderkey * 8 + n", 60, 1, parts)} % 1000) / 1.0
                AS l_extendedprice,
            {_int("o_orderkey * 8 + n", 62, 0, 10)} / 100.0 AS l_discount,
            {_int("o_orderkey * 8 + n", 63, 0, 8)} / 100.0 AS l_tax,
            o_orderdate + to_days({_int("o_orderkey * 8 + n", 64, 1, 121)}::INT) AS l_shipdate,
            o_orderdate + to_days({_int("o_orderkey * 8 + n", 65, 30, 90)}::INT) AS l_commitdate,
            {_pick(INSTRUCTIONS, "o_orderkey * 8 + n", 66)} AS l_shipinstruct,
            {_pick(MODES, "o_orderkey * 8 + n", 67)} AS l_shipmode,
            {_comment("o_orderkey * 8 + n", 68)} AS l_comment
            FROM orders, range(1, 8) t(n) WHERE n <= 1 + hash(o_orderkey, 69) % 7;
        ALTER TABLE lineitem ADD COLUMN l_receiptdate TIMESTAMPTZ;
        UPDATE lineitem SET l_receiptdate = l_shipdate
            + to_days((1 + hash(l_orderkey * 8 + l_linenumber, 70) % 30)::INT);
        ALTER TABLE lineitem ADD COLUMN l_returnflag TEXT;
        ALTER TABLE lineitem ADD COLUMN l_linestatus TEXT;
        UPDATE lineitem SET
            l_returnflag = CASE WHEN l_receiptdate <= TIMESTAMPTZ '1995-06-17 00:00:00+00'
                THEN {_pick(["R", "A"], "l_orderkey * 8 + l_linenumber", 71)} ELSE 'N' END,
            l_linestatus = CASE WHEN l_shipdate > TIMESTAMPTZ '1995-06-17 00:00:00+00'
                THEN 'O' ELSE 'F' END;
    """)  # noqa: S608 - generated from constants
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}  # type: ignore[index]


TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
_KYMA_TYPES = {"BIGINT": "long", "DOUBLE": "real", "DECIMAL": "real", "VARCHAR": "string"}


def kyma_ddl(con: duckdb.DuckDBPyConnection, table: str) -> tuple[str, list[str]]:
    """CREATE TABLE for kyma, and the SELECT list that exports the rows as NDJSON."""
    columns, select = [], []
    for name, dtype, *_ in con.execute(f"DESCRIBE {table}").fetchall():
        if dtype.startswith("TIMESTAMP"):
            columns.append(f"{name} timestamp")
            select.append(f"strftime({name}, '%Y-%m-%dT%H:%M:%SZ') AS {name}")
            continue
        kind = _KYMA_TYPES.get(dtype.split("(")[0])
        assert kind is not None, (table, name, dtype)
        columns.append(f"{name} {kind}")
        select.append(f"{name}::DOUBLE AS {name}" if kind == "real" else name)
    return f"CREATE TABLE {table} ({', '.join(columns)})", select


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
