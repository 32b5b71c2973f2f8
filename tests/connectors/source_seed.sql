-- The seed of the connector tests' source database ``fed`` (run by the superuser, in ``fed``).
-- Deterministic and small. Every value below is written so that the answer does not depend on
-- the session time zone; the values were picked to catch wrong pushdown, not for realism:
--   * name/tag: case and accent pairs that sort differently under C and ICU en-US, LIKE
--     metacharacters (% _ \ !), an empty string, leading/trailing spaces, 'Straße' (upper → SS);
--   * created_at: 2024-03-09 .. 2024-03-11 UTC, across the America/New_York DST change at
--     2024-03-10 07:00 UTC, with rows exactly on it, a microsecond before, on NY and UTC midnights;
--   * day: the created_at date in New York (not in UTC), plus 1969-12-31 and 2000-02-29;
--   * score: 1e16, 1.0, -1e16 ... so a float sum depends on the order it adds in;
--   * price: 47.50, 47.51, 19.99 ... so an average by float differs from one by numeric;
--   * qty: negative values (integer division truncates toward zero) and 2^53 + 1 (id 150);
--   * about 10% NULL in each column but id, each on its own residue so they rarely coincide.

CREATE EXTENSION pg_stat_statements;
CREATE SCHEMA billing;

CREATE TABLE public.items (
    id int PRIMARY KEY,
    grp int,
    qty bigint,
    price numeric(10, 2),
    score double precision,
    name text,
    tag varchar(20),
    created_at timestamptz,
    day date,
    flag boolean,
    code char(6),
    big numeric(30, 10)
);

INSERT INTO public.items
SELECT
    i,
    CASE WHEN i % 10 = 3 THEN NULL ELSE i % 7 END,
    CASE
        WHEN i % 11 = 4 THEN NULL
        WHEN i = 150 THEN 9007199254740993
        ELSE (i * 37) % 101 - 50
    END,
    CASE WHEN i % 9 = 5 THEN NULL ELSE (ARRAY[
        47.50, 19.99, 0.10, 0.20, 0.30, 1234.56, 47.50, 99.99, -5.25, 0.01, 47.51
    ])[1 + i % 11] END,
    CASE WHEN i % 12 = 7 THEN NULL ELSE (ARRAY[
        1e16, 1.0, -1e16, 0.1, 0.2, 0.3, -0.1, 1e-3, 3.14159, 2.5e-8, 1e16, -1e16, 7.0
    ]::double precision[])[1 + i % 13] END,
    CASE WHEN i % 10 = 7 THEN NULL ELSE (ARRAY[
        'apple', 'Apple', 'banana', 'Banana', '_under', 'zeta', 'Zeta', 'Éclair', 'eclair',
        'éclair', '50% off', '100%', 'a_b', 'a%b', 'ab', 'back\slash', 'C:\temp\new', '',
        '  padded ', 'apple pie', 'x!y', '!bang', 'Straße', 'ZEBRA', 'a\%b'
    ])[1 + i % 25] END,
    CASE WHEN i % 10 = 1 THEN NULL ELSE (ARRAY[
        'red', 'Red', 'green', 'Green', 'blue', 'BLUE', '', 'ünïcode', 'a_tag', 'z%'
    ])[1 + (i / 10) % 10] END,
    CASE WHEN i % 10 = 9 THEN NULL ELSE t.ts END,
    CASE
        WHEN i % 11 = 8 THEN NULL
        WHEN i = 7 THEN DATE '1969-12-31'
        WHEN i = 18 THEN DATE '2000-02-29'
        ELSE (t.ts AT TIME ZONE 'America/New_York')::date
    END,
    CASE WHEN i % 10 = 5 THEN NULL ELSE i % 3 = 0 END,
    CASE WHEN i % 13 = 6 THEN NULL ELSE (ARRAY[
        'AB', 'ab', 'A', 'Zz', 'é', '', ' x', 'AB c'
    ])[1 + i % 8] END,
    CASE WHEN i % 14 = 9 THEN NULL ELSE (ARRAY[
        1234567890123456.0123456789, 0.001, 98765432109876.5432109876, 1.5, 42
    ])[1 + i % 5] END
FROM generate_series(1, 300) AS g(i)
CROSS JOIN LATERAL (
    SELECT CASE i
        WHEN 100 THEN TIMESTAMPTZ '2024-03-10 07:00:00+00'         -- 02:00 EST becomes 03:00 EDT
        WHEN 101 THEN TIMESTAMPTZ '2024-03-10 06:59:59.999999+00'
        WHEN 102 THEN TIMESTAMPTZ '2024-03-10 05:00:00+00'         -- midnight in New York (EST)
        WHEN 103 THEN TIMESTAMPTZ '2024-03-11 04:00:00+00'         -- midnight in New York (EDT)
        WHEN 104 THEN TIMESTAMPTZ '2024-03-10 00:00:00+00'         -- midnight UTC, 19:00 in NY
        ELSE TIMESTAMPTZ '2024-03-09 05:00:00+00'
            + i * INTERVAL '787 seconds' + (i % 7) * INTERVAL '123 microseconds'
    END AS ts
) AS t;

-- Same-source joins: orders whose user_id matches no user (51..60) or is NULL.
CREATE TABLE public.users (id int PRIMARY KEY, name text, country text);
INSERT INTO public.users
SELECT
    i,
    CASE WHEN i % 5 = 0 THEN 'User ' ELSE 'user ' END || i,
    (ARRAY['US', 'DE', 'de', 'FR', 'Ísland', NULL])[1 + i % 6]
FROM generate_series(1, 50) AS g(i);

CREATE TABLE public.orders (id int PRIMARY KEY, user_id int, amount numeric(10, 2), placed_at timestamp);
INSERT INTO public.orders
SELECT
    i,
    CASE WHEN i % 25 = 0 THEN NULL ELSE 1 + (i * 7) % 60 END,
    CASE WHEN i % 30 = 0 THEN NULL ELSE ((i * 37) % 10000) / 100.0 END,
    TIMESTAMP '2024-03-09 00:00:00' + i * INTERVAL '17 minutes 3 seconds'
FROM generate_series(1, 200) AS g(i);

CREATE TABLE billing.invoices (id int PRIMARY KEY, total numeric(12, 2));
INSERT INTO billing.invoices SELECT i, i * 100.25 FROM generate_series(1, 20) AS g(i);

-- For scope tests (a table a connector excludes) and for a table without a primary key.
CREATE TABLE public.audit_log (id int);
INSERT INTO public.audit_log SELECT i FROM generate_series(1, 10) AS g(i);
CREATE TABLE public.nopk (x int);
INSERT INTO public.nopk VALUES (1), (1), (2), (NULL), (3);

-- time '24:00' is valid in Postgres but not in Python (psycopg raises DataError on it);
-- ts holds a New York local time that does not exist (the DST gap) and one that occurs twice.
CREATE TABLE public.times (id int PRIMARY KEY, t time, ts timestamp);
INSERT INTO public.times VALUES
    (1, '00:00', '2024-03-10 02:30:00'),
    (2, '12:00', '2024-11-03 01:30:00'),
    (3, '24:00', '1999-12-31 23:59:59.999999'),
    (4, NULL, NULL);

GRANT USAGE ON SCHEMA public, billing TO app;
GRANT SELECT ON ALL TABLES IN SCHEMA public, billing TO app;
ANALYZE;
