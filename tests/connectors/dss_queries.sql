-- Realistic analytical queries over tests/connectors/dss_seed.sql, one per statement.
-- Table names are bare; the tests read them as src.public.<table> through kyma.

SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_orderstatus FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15' GROUP BY l_orderkey, o_orderdate, o_orderstatus ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10;

SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue FROM customer, orders, lineitem, supplier, nation, region WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1994-01-01' + INTERVAL '1' YEAR GROUP BY n_name ORDER BY revenue DESC, n_name;

SELECT extract(year FROM o_orderdate) AS o_year, sum(CASE WHEN n_name = 'BRAZIL' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) / sum(l_extendedprice * (1 - l_discount)) AS mkt_share FROM lineitem, orders, customer, nation WHERE l_orderkey = o_orderkey AND o_custkey = c_custkey AND c_nationkey = n_nationkey GROUP BY o_year ORDER BY o_year;

SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name FROM customer, orders, lineitem, nation WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1993-10-01' + INTERVAL '3' MONTH AND l_returnflag = 'R' AND c_nationkey = n_nationkey GROUP BY c_custkey, c_name, c_acctbal, n_name ORDER BY revenue DESC, c_custkey LIMIT 20;

SELECT l_shipmode, sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count, sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END) AS low_line_count FROM orders, lineitem WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP') AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01' GROUP BY l_shipmode ORDER BY l_shipmode;

SELECT 100.00 * sum(CASE WHEN l_shipmode LIKE 'R%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue FROM lineitem WHERE l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-09-01' + INTERVAL '1' MONTH;

SELECT o_orderpriority, count(*) AS order_count FROM orders WHERE o_orderdate >= DATE '1993-07-01' AND o_orderdate < DATE '1993-07-01' + INTERVAL '3' MONTH AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_linenumber > 2) GROUP BY o_orderpriority ORDER BY o_orderpriority;

SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM (SELECT substring(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal FROM customer WHERE substring(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17') AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00 AND substring(c_phone FROM 1 FOR 2) IN ('13', '31', '23', '29', '30', '18', '17')) AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale GROUP BY cntrycode ORDER BY cntrycode;

SELECT s_name, count(*) AS numwait FROM supplier, lineitem, orders, nation WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND o_orderstatus = 'F' AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA' GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 10;

SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, orders WHERE o_orderkey = l_orderkey AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem l2 WHERE l2.l_orderkey = o_orderkey);

SELECT c_mktsegment, count(*), avg(c_acctbal), min(c_name), max(c_phone) FROM customer GROUP BY c_mktsegment ORDER BY c_mktsegment NULLS FIRST;

SELECT n_name, r_name, length(n_name), n_name || '/' || r_name AS both_names, upper(n_comment) FROM nation JOIN region ON n_regionkey = r_regionkey WHERE n_name LIKE '%A' ORDER BY n_name;

SELECT o_orderstatus, date_trunc('month', o_orderdate) AS m, count(*) FROM orders WHERE o_orderdate BETWEEN DATE '1994-01-01' AND DATE '1994-06-30' GROUP BY o_orderstatus, m ORDER BY o_orderstatus, m;

SELECT count(*) FROM orders WHERE o_placed_at >= TIMESTAMPTZ '1993-01-01 00:00:00-05:00' AND o_placed_at < TIMESTAMPTZ '1994-01-01 00:00:00+00';

SELECT l_returnflag, count(*), sum(l_ratio), avg(l_ratio), max(l_score), count(l_score) FROM lineitem GROUP BY l_returnflag ORDER BY l_returnflag;

SELECT c_name FROM customer WHERE c_name < 'Customer#000000020' ORDER BY c_name;

SELECT r_name FROM region ORDER BY r_name DESC;

SELECT o_orderkey, o_totalprice / o_custkey AS per FROM orders WHERE o_orderkey < 5 ORDER BY o_orderkey;

SELECT coalesce(c_mktsegment, 'NONE') AS seg, count(*) FROM customer GROUP BY seg ORDER BY seg;

SELECT n_name, length(n_name), n_name = 'FRANCE' FROM nation WHERE n_nationkey = 6;

SELECT sum(l_extendedprice), avg(l_discount), min(l_ratio), sum(l_ratio) FROM lineitem;

SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice * (1 - l_discount)) AS s, avg(l_quantity) AS avg_qty, count(*) AS c FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;

SELECT c_mktsegment, count(*) FROM customer GROUP BY c_mktsegment ORDER BY c_mktsegment;

SELECT c_name FROM customer ORDER BY c_name LIMIT 5;

SELECT o_orderdate, o_placed_at FROM orders WHERE o_orderkey < 4 ORDER BY o_orderkey;

SELECT sum(l_score) FROM lineitem WHERE l_score > 10;

SELECT max(l_score), min(l_score) FROM lineitem;

SELECT extract(year FROM o_orderdate) AS y, count(*) FROM orders GROUP BY y ORDER BY y;

SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24;

SELECT o_orderkey, o_orderdate + 30 AS due, o_orderdate - 1 AS eve FROM orders WHERE o_orderdate + 30 < DATE '1995-06-01' ORDER BY o_orderkey;

SELECT l_orderkey, l_extendedprice * 0.95 AS net, l_discount * 2.5 + 0.01 AS d FROM lineitem WHERE l_tax IN (0.02, 0.04, 0.06) ORDER BY l_orderkey, l_linenumber;
