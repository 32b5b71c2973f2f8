-- A small decision-support schema for the federation semantics tests (run in database ``dss``).
-- The types are the ones that broke answers when evaluation moved into kyma: CHAR(n) (blank
-- padded), VARCHAR(n), DECIMAL(15,2) and a wide NUMERIC(30,10), DATE and TIMESTAMPTZ, under
-- an ICU collation and a non-UTC server time zone. Deterministic; the sizes stay small so
-- every query runs in milliseconds.

CREATE TABLE region (
    r_regionkey int PRIMARY KEY,
    r_name char(25) NOT NULL,
    r_comment varchar(152)
);
CREATE TABLE nation (
    n_nationkey int PRIMARY KEY,
    n_name char(25) NOT NULL,
    n_regionkey int NOT NULL,
    n_comment varchar(152)
);
CREATE TABLE supplier (
    s_suppkey int PRIMARY KEY,
    s_name char(25) NOT NULL,
    s_nationkey int NOT NULL,
    s_acctbal decimal(15, 2) NOT NULL
);
CREATE TABLE customer (
    c_custkey int PRIMARY KEY,
    c_name varchar(25) NOT NULL,
    c_nationkey int NOT NULL,
    c_phone char(15) NOT NULL,
    c_acctbal decimal(15, 2),
    c_mktsegment char(10)
);
CREATE TABLE orders (
    o_orderkey int PRIMARY KEY,
    o_custkey int NOT NULL,
    o_orderstatus char(1) NOT NULL,
    o_totalprice decimal(15, 2) NOT NULL,
    o_orderdate date NOT NULL,
    o_orderpriority char(15) NOT NULL,
    o_placed_at timestamptz,
    o_comment varchar(79)
);
CREATE TABLE lineitem (
    l_orderkey int NOT NULL,
    l_linenumber int NOT NULL,
    l_suppkey int NOT NULL,
    l_quantity decimal(15, 2) NOT NULL,
    l_extendedprice decimal(15, 2) NOT NULL,
    l_discount decimal(15, 2) NOT NULL,
    l_tax decimal(15, 2) NOT NULL,
    l_returnflag char(1) NOT NULL,
    l_linestatus char(1) NOT NULL,
    l_shipdate date NOT NULL,
    l_shipmode char(10) NOT NULL,
    l_ratio numeric(30, 10),
    l_score double precision,
    PRIMARY KEY (l_orderkey, l_linenumber)
);

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
SELECT i, 'Supplier#' || lpad(i::text, 9, '0'), (i * 7) % 25, ((i * 7919) % 1000000) / 100.0 - 999.99
FROM generate_series(1, 40) AS i;

INSERT INTO customer
SELECT i,
       'Customer#' || lpad(i::text, 9, '0'),
       (i * 13) % 25,
       lpad(((i * 13) % 25 + 10)::text, 2, '0') || '-' || lpad(((i * 7) % 1000)::text, 3, '0')
           || '-' || lpad(((i * 11) % 1000)::text, 3, '0') || '-' || lpad(i::text, 4, '0'),
       CASE WHEN i % 17 = 0 THEN NULL ELSE ((i * 104729) % 1100000) / 100.0 - 999.99 END,
       CASE WHEN i % 23 = 0 THEN NULL
            ELSE (ARRAY['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'])[1 + i % 5]
       END
FROM generate_series(1, 150) AS i;

INSERT INTO orders
SELECT i,
       1 + (i * 31) % 150,
       (ARRAY['F', 'O', 'P'])[1 + i % 3],
       ((i::bigint * 15485863) % 50000000) / 100.0 + 0.01,
       DATE '1992-01-01' + (i * 37) % 2400,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + i % 5],
       CASE WHEN i % 19 = 0 THEN NULL
            ELSE TIMESTAMPTZ '1992-01-01 00:00:00+00' + ((i * 7919) % 200000) * INTERVAL '17 minutes'
       END,
       CASE WHEN i % 9 = 0 THEN 'special requests ' || i ELSE 'regular ' || i END
FROM generate_series(1, 600) AS i;

INSERT INTO lineitem
SELECT o, n,
       1 + (o * 7 + n * 3) % 40,
       1 + (o + n * 11) % 50,
       ((o * 104729 + n * 7919) % 9000000) / 100.0 + 900.00,
       ((o + n) % 11) / 100.0,
       ((o * 3 + n) % 9) / 100.0,
       (ARRAY['A', 'N', 'R'])[1 + (o + n) % 3],
       (ARRAY['F', 'O'])[1 + (o * n) % 2],
       DATE '1992-01-02' + (o * 37) % 2400 + n * 5,
       (ARRAY['AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK'])[1 + (o + 2 * n) % 7],
       CASE WHEN (o + n) % 13 = 0 THEN NULL
            ELSE ((o * 7919 + n) % 1000000007)::numeric / 3 + 1e15 END,
       CASE WHEN (o + n) % 29 = 0 THEN 'NaN'::float8
            WHEN (o + n) % 31 = 0 THEN 'Infinity'::float8
            ELSE ((o * 31 + n) % 97) / 7.0 END
FROM generate_series(1, 600) AS o, generate_series(1, 1 + (o % 7)) AS n;

ANALYZE;
