"""COPY … FROM STDIN over the Postgres protocol (psycopg's ``cursor.copy``, as psql's
``\\copy`` sends it), compared with a real Postgres given the same bytes: the rows loaded
(text format's escapes and NULLs, CSV's quoting, a header, a column list), the status, and
for bad input the SQLSTATE, the line and column named, and nothing committed.

And ``read_parquet``, ``read_csv`` and ``read_ndjson`` over the folder an admin allowed
(``KYMA_IMPORT_DIRS``), in SELECT, INSERT … SELECT and CREATE TABLE AS, over the Postgres
protocol and HTTP; any other path — outside it, through ``..`` or a symbolic link out of
it — is 42501 (HTTP 403) and nothing is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

COLUMNS = "(n long, s string, r double, ok bool, at timestamp)"
PG_COLUMNS = "(n bigint, s text, r double precision, ok boolean, at timestamptz)"
READ = "SELECT n, s, r, ok, at FROM {t} ORDER BY n"

TEXT = (
    b"1\tplain\t1.5\tt\t2026-11-27 10:00:00+00\n"
    b"2\ttab\\there, newline\\nand \\\\ backslash\t\\N\tfalse\t2026-11-27 10:00:01.25+00\n"
    b"3\t\\N\t-0.5\tyes\t\\N\n"
    b"4\t\t1e3\toff\t2026-11-27T11:00:00Z\n"
)
CSV = (
    b"n,s,r,ok,at\n"
    b'5,"quoted, with comma",2,true,2026-11-27 10:00:00+00\n'
    b'6,"two\nlines and ""quotes""",,f,\n'
    b'7,"",3.25,1,2026-11-27 12:30:00+01\n'
    b"8,,,,\n"
)


def _write(conn: Any, sql: str, data: bytes, give_up: bool = False) -> tuple[Any, ...]:
    """``data`` sent by COPY: the status and row count; ``give_up``: raise after sending it
    (psycopg sends CopyFail)."""
    with conn.cursor() as cur:
        with cur.copy(sql) as copy:
            copy.write(data)
            if give_up:
                raise RuntimeError("changed my mind")
        return (cur.statusmessage, cur.rowcount)


def _copy(conn: Any, sql: str, data: bytes) -> tuple[Any, ...]:
    try:
        return _write(conn, sql, data)
    except psycopg.Error as e:
        return ("error", e.sqlstate)


@pytest.fixture(scope="module")
def tables(kyma, oracle) -> str:
    oracle.execute("SET TIME ZONE 'UTC'")
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE copied {COLUMNS}")
    oracle.execute(f"CREATE TABLE copied {PG_COLUMNS}")
    return "copied"


@pytest.mark.parametrize(
    ("sql", "data"),
    [
        ("COPY copied FROM STDIN", TEXT),
        ("COPY copied FROM STDIN WITH (FORMAT csv, HEADER)", CSV),
        (
            "COPY copied (s, n) FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'none')",
            b"a;9\nnone;10\n",
        ),
        ("COPY copied (n, ok) FROM STDIN CSV HEADER", b"x,y\n11,on\n"),
    ],
)
def test_rows_load_as_postgres_loads_them(kyma, oracle, tables, sql: str, data: bytes) -> None:
    with kyma.connect() as conn:
        assert _copy(conn, sql, data) == _copy(oracle, sql, data)
        assert (
            conn.execute(READ.format(t=tables)).fetchall()
            == oracle.execute(READ.format(t=tables)).fetchall()
        )


@pytest.mark.parametrize(
    ("sql", "data", "line", "column"),
    [
        ("COPY copied FROM STDIN", b"20\ta\t1\tt\t\\N\n21\tb\tnope\tt\t\\N\n", 2, "r"),
        (
            "COPY copied FROM STDIN WITH (FORMAT csv, HEADER)",
            b"h\n22,a,1,t,\n23,b,2,maybe,\n",
            3,
            "ok",
        ),
        ("COPY copied (n) FROM STDIN", b"24\n25\n2x6\n", 3, "n"),
        ("COPY copied (n, s) FROM STDIN", b"27\ta\n28\n", 2, None),
        ("COPY copied (n) FROM STDIN", b"29\n30\textra\n", 2, None),
    ],
)
def test_bad_input_names_its_line_and_commits_nothing(
    kyma, oracle, tables, sql: str, data: bytes, line: int, column: str | None
) -> None:
    count = f"SELECT count(*) FROM {tables}"
    with kyma.connect() as conn:
        before = conn.execute(count).fetchone()
        with pytest.raises(psycopg.Error) as refused:
            _write(conn, sql, data)
        with pytest.raises(psycopg.Error) as expected:
            _write(oracle, sql, data)
        assert refused.value.sqlstate == expected.value.sqlstate
        assert f"line {line}" in str(refused.value)
        assert column is None or f"column {column}" in str(refused.value)
        assert conn.execute(count).fetchone() == before == oracle.execute(count).fetchone()


def test_a_client_that_gives_up_commits_nothing(kyma, oracle, tables) -> None:
    count = f"SELECT count(*) FROM {tables}"
    with kyma.connect() as own:
        for conn in (own, oracle):
            before = conn.execute(count).fetchone()
            with pytest.raises(RuntimeError):
                _write(conn, "COPY copied (n) FROM STDIN", b"40\n41\n", give_up=True)
            assert conn.execute(count).fetchone() == before  # and the session goes on


def test_many_rows_load_as_one_snapshot_and_a_read_token_may_not(kyma, oracle) -> None:
    rows = 50_000
    data = b"".join(b"%d\tname %d\n" % (i, i % 97) for i in range(rows))
    with kyma.connect() as conn:
        conn.execute("CREATE TABLE bulk (n long, s string)")
        before = len(kyma.services.catalog.snapshots("bulk"))
        assert _copy(conn, "COPY bulk FROM STDIN", data) == (f"COPY {rows}", rows)
        assert len(kyma.services.catalog.snapshots("bulk")) == before + 1
        answer = conn.execute("SELECT count(*), sum(n), count(DISTINCT s) FROM bulk").fetchone()
        assert answer == (rows, rows * (rows - 1) // 2, 97)
    with kyma.connect("read") as conn:
        assert _copy(conn, "COPY bulk FROM STDIN", b"1\tx\n") == ("error", "42501")


ROWS = [(i, f"s{i % 4}", i * 0.5) for i in range(1, 301)]


@pytest.fixture(scope="module")
def folder(kyma) -> Path:
    root = Path(kyma.services.settings.allowed_import_dirs[0])
    n, s, r = (list(c) for c in zip(*ROWS, strict=True))
    pq.write_table(pa.table({"n": n, "s": s, "r": r}), root / "rows.parquet")
    (root / "parts").mkdir()
    for i in range(3):  # a folder of three files, 100 rows each
        part = slice(i * 100, (i + 1) * 100)
        pq.write_table(pa.table({"n": n[part], "s": s[part]}), root / "parts" / f"{i}.parquet")
    lines = ["n,s,r", *(f"{a},{b},{c}" for a, b, c in ROWS)]
    (root / "rows.csv").write_text("\n".join(lines) + "\n")
    (root / "rows.ndjson").write_text(
        "".join(json.dumps({"n": a, "s": b, "r": c}) + "\n" for a, b, c in ROWS)
    )
    (root / "out").symlink_to("/etc")
    return root


def test_files_read_as_tables(kyma, folder: Path) -> None:
    total = sum(r for _, _, r in ROWS)
    per = sorted({s for _, s, _ in ROWS})
    with kyma.connect() as conn:
        for function, name in [
            ("read_parquet", "rows.parquet"),
            ("read_csv", "rows.csv"),
            ("read_ndjson", "rows.ndjson"),
        ]:
            sql = f"SELECT count(*), sum(n), sum(r) FROM {function}('{folder / name}')"
            assert conn.execute(sql).fetchone() == (300, 45150, total), sql
            grouped = f"SELECT f.s, count(*) FROM {function}('{folder / name}') AS f GROUP BY 1"
            assert sorted(conn.execute(grouped).fetchall()) == [(s, 75) for s in per]
        parts = f"SELECT count(*), max(n) FROM read_parquet('{folder / 'parts'}')"
        assert conn.execute(parts).fetchone() == (300, 300)


def test_insert_select_and_create_table_as_load_them(kyma, folder: Path) -> None:
    with kyma.connect() as conn:
        conn.execute("CREATE TABLE imported (n long, s string)")
        sql = f"INSERT INTO imported (n, s) SELECT n, s FROM read_parquet('{folder}/rows.parquet')"
        assert conn.execute(sql).statusmessage == "INSERT 0 300"
        made = conn.execute(
            f"CREATE TABLE from_csv AS SELECT n, r FROM read_csv('{folder}/rows.csv') WHERE n > 100"
        )
        assert made.statusmessage == "SELECT 200"
        answer = conn.execute(
            "SELECT (SELECT count(*) FROM imported), (SELECT sum(n) FROM imported"
            " JOIN read_ndjson('" + str(folder / "rows.ndjson") + "') AS j USING (n)),"
            " (SELECT min(n) FROM from_csv)"
        ).fetchone()
        assert answer == (300, 45150, 101)


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "{folder}/../../etc/passwd", "{folder}/out/passwd", "{folder}/../dml"],
)
def test_paths_outside_the_allowed_folder_are_refused(kyma, folder: Path, path: str) -> None:
    sql = f"SELECT count(*) FROM read_csv('{path.format(folder=folder)}')"
    with kyma.connect() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
        conn.execute(sql)
    assert "KYMA_IMPORT_DIRS" in str(refused.value)
    status, body = kyma.http(sql)
    assert status == 403, body
