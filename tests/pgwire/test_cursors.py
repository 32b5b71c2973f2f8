"""Cursors and streamed results over the Postgres protocol: DECLARE / FETCH / MOVE / CLOSE
answer as Postgres does (the same script on both, rows or SQLSTATEs compared), psycopg's
named cursors read a many-batch result whole, and rows leave the server as DataFusion
computes them: a portal or cursor over a result far past every result limit (one that would
never finish) sends its first rows."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import psycopg
import pytest
from pgwire_serve import PgServe, run_script
from raw_client import connect, cstring, error_fields, message, read_message, until

SERIES = "SELECT x * 2 AS d, 'r' || x AS s FROM generate_series(1, 25) AS g(x) ORDER BY x"
ROWS = 50_000  # six DataFusion batches of 8 192
BIG = f"SELECT x AS n, x % 7 AS m FROM generate_series(1, {ROWS}) AS g(x)"
ENDLESS = (  # 10^12 rows
    "SELECT a.x * 1000000 + b.y AS n"
    " FROM generate_series(1, 1000000) AS a(x) CROSS JOIN generate_series(1, 1000000) AS b(y)"
)

CURSORS = [
    "BEGIN",
    f"DECLARE c CURSOR FOR {SERIES}",
    "FETCH 3 FROM c",
    "FETCH NEXT FROM c",
    "FETCH FORWARD 2 IN c",
    "MOVE 2 FROM c",
    "FETCH c",
    "FETCH FORWARD ALL FROM c",
    "FETCH 5 FROM c",
    "MOVE ALL IN c",
    "CLOSE c",
    "FETCH 1 FROM c",
    "ROLLBACK",
    "BEGIN",
    f'DECLARE "Big" NO SCROLL CURSOR WITHOUT HOLD FOR {SERIES}',
    'FETCH 20 FROM "Big"',
    'FETCH ALL FROM "Big"',
    f"DECLARE bin BINARY CURSOR FOR {SERIES}",  # binary rows, even over the simple protocol
    "FETCH 2 FROM bin",
    f"DECLARE e CURSOR FOR {SERIES}",
    f"DECLARE e CURSOR FOR {SERIES}",
    "ROLLBACK",
    "BEGIN",
    f"DECLARE inner_cursor CURSOR FOR {SERIES}",
    "COMMIT",
    "FETCH 1 FROM inner_cursor",
]
OUTSIDE = [
    f"DECLARE d CURSOR FOR {SERIES}",
    "FETCH 1 FROM nowhere",
    "CLOSE nowhere",
    f"DECLARE h CURSOR WITH HOLD FOR {SERIES}",
    "FETCH 4 FROM h",
    "FETCH 4 FROM h",
    "CLOSE ALL",
    "FETCH 1 FROM h",
]


@pytest.mark.parametrize("binary", [False, True], ids=["simple", "extended_binary"])
@pytest.mark.parametrize("script", [CURSORS, OUTSIDE], ids=["in_blocks", "outside"])
def test_cursor_statements_answer_as_postgres(
    pg: PgServe, postgres: psycopg.Connection, script: list[str], binary: bool
) -> None:
    with pg.connect(autocommit=True) as conn:
        got = run_script(conn, script, binary)
    expected = run_script(postgres, script, binary)
    assert got == expected
    states = {answer for _, answer in expected if isinstance(answer, str) and len(answer) == 5}
    assert "34000" in states and ("25P01" in states or "42P03" in states), states


def test_psycopg_named_cursor_reads_a_many_batch_result(
    pg: PgServe, postgres: psycopg.Connection
) -> None:
    (count, total, sevens), *_ = postgres.execute(
        f"SELECT count(*), sum(n), sum(m) FROM ({BIG}) AS q"
    ).fetchall()
    with pg.connect() as conn:
        with conn.cursor(name="many", binary=True) as cur:
            cur.itersize = 3_000
            cur.execute(BIG)
            rows = list(cur)
        with conn.cursor(name="few") as cur:  # text, fetchmany
            cur.execute(BIG)
            head = cur.fetchmany(10_000)
            rest = cur.fetchall()
    assert (len(rows), sum(r[0] for r in rows), sum(r[1] for r in rows)) == (count, total, sevens)
    assert len(head) == 10_000 and sorted(head + rest) == sorted(rows)  # no order asked
    assert sorted(r[0] for r in rows) == list(range(1, ROWS + 1))


def test_a_cursor_over_an_endless_query_sends_its_first_rows(pg: PgServe) -> None:
    """Materialised first, 10^12 rows would pass KYMA_MAX_RESULT_ROWS (54000) long before
    the plan ended; streamed, FETCH reads what it asks for and CLOSE stops the rest."""
    with pg.connect() as conn:
        conn.execute(f"DECLARE endless CURSOR FOR {ENDLESS}")
        first = conn.execute("FETCH 5 FROM endless").fetchall()
        conn.execute("MOVE 20000 FROM endless")
        after = conn.execute("FETCH FORWARD 2 FROM endless").fetchall()
        conn.execute("CLOSE endless")
        conn.rollback()
    assert len(first) == 5 and len(after) == 2
    assert len({n for (n,) in first + after}) == 7


def _raw(pg: PgServe) -> socket.socket:
    return connect(pg.port, pg.tokens["admin"])


def test_a_portal_with_a_row_limit_streams_from_the_live_plan(pg: PgServe) -> None:
    """Execute with max_rows over an endless query: 10 DataRows and PortalSuspended, twice,
    then Close; nothing waits for (or holds) the whole result."""
    sock = _raw(pg)
    try:
        sock.sendall(message(b"Q", cstring("BEGIN")))
        until(sock, b"Z")
        parse = message(b"P", cstring("") + cstring(ENDLESS) + struct.pack("!h", 0))
        bind = message(b"B", cstring("p") + cstring("") + struct.pack("!hhh", 0, 0, 0))
        execute = message(b"E", cstring("p") + struct.pack("!i", 10))
        sock.sendall(parse + bind + execute + execute + message(b"S"))
        kinds = [kind for kind, _ in until(sock, b"Z")]
        assert kinds == [b"1", b"2"] + [b"D"] * 10 + [b"s"] + [b"D"] * 10 + [b"s", b"Z"], kinds
        close = message(b"C", b"P" + cstring("p"))
        sock.sendall(close + message(b"S"))
        assert [kind for kind, _ in until(sock, b"Z")] == [b"3", b"Z"]
    finally:
        sock.close()


def test_a_simple_query_sends_rows_before_its_plan_ends(pg: PgServe) -> None:
    """The first DataRows of an endless query arrive: the server streams them (built whole
    first, the answer would have been 54000, past KYMA_MAX_RESULT_ROWS, and no row). The
    client hangs up; the statement stops and the server serves the next connection."""
    sock = _raw(pg)
    try:
        sock.sendall(message(b"Q", cstring(ENDLESS)))
        kinds = []
        for _ in range(3):
            kind, body = read_message(sock)
            assert kind != b"E", error_fields(body)
            kinds.append(kind)
        assert kinds == [b"T", b"D", b"D"], kinds
    finally:
        sock.close()
    with pg.connect(autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchall() == [(1,)]


WIDE_ROWS = 700_000  # under KYMA_MAX_RESULT_ROWS, which a stream counts against too
MEMORY_BOUND = 48 << 20


def _wide(rows: int) -> str:
    """Over 250 bytes a row in text: at WIDE_ROWS, 175 MB, past three times the bound."""
    return f"SELECT x AS n, repeat('x', 250) || x AS s FROM generate_series(1, {rows}) AS g(x)"


def _server_memory(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def test_a_large_result_streams_in_bounded_memory(pg: PgServe) -> None:
    """The server's peak resident memory while it sends a result over three times the bound
    (COPY TO STDOUT, then a plain SELECT) grows less than the bound: rows leave batch by
    batch, never built whole. One connection (one server thread) reads them; a first,
    smaller run warms the allocators and DataFusion, whose retained memory is not the
    result's."""
    pid = pg.serve.proc.pid
    assert WIDE_ROWS * 250 > 3 * MEMORY_BOUND
    with pg.connect(autocommit=True) as conn:
        for rows in (WIDE_ROWS // 8, WIDE_ROWS):
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak (VmHWM) restarts here
            before = _server_memory(pid, "VmRSS")
            copied = 0
            with conn.cursor().copy(f"COPY ({_wide(rows)}) TO STDOUT") as copy:
                for data in copy:
                    copied += len(data)
            assert copied > rows * 250
            selected = conn.execute(_wide(rows))  # libpq holds the rows; none become Python's
            assert selected.rowcount == rows
            selected.close()
            grown = _server_memory(pid, "VmHWM") - before
    assert grown < MEMORY_BOUND, f"the server's peak grew {grown >> 20} MB"
