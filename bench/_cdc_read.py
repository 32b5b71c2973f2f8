"""Ways to read a slot's pending pgoutput messages, timed on the same backlog (none consumes
it): the server alone (``count(*)`` of a peek), a peek fetched row by row (a ``bytea`` per
message), the aggregated peek kyma reads (two values: lengths and messages back to back),
and a START_REPLICATION stream over a replication connection (psycopg 3's libpq calls: one
CopyData message per change, no feedback sent, so the slot does not move)."""

from __future__ import annotations

import select
import time
from typing import Any

import psycopg
from _cdc_source import Source
from _harness import seconds

_OPTIONS = "'proto_version', '1', 'publication_names', '{publication}'"
_PEEK = "pg_logical_slot_peek_binary_changes('{slot}', NULL, NULL, " + _OPTIONS + ")"
WAYS = {
    "server count(*)": "SELECT count(*) FROM " + _PEEK,
    "peek, a row per message": "SELECT data FROM " + _PEEK,
    "peek aggregated (kyma)": (
        "SELECT string_agg(int4send(octet_length(data)), ''::bytea),"
        " string_agg(data, ''::bytea) FROM " + _PEEK
    ),
}


def _fetch(source: Source, text: str) -> None:
    with source.connect() as conn:
        conn.cursor(binary=True).execute(text.encode()).fetchall()  # type: ignore[arg-type]


def stream(source: Source, slot: str, publication: str, messages: int, timeout: float) -> int:
    """Read ``messages`` XLogData payloads from START_REPLICATION; how many arrived."""
    conn = psycopg.connect(source.url, password=source.password, replication="database")
    try:
        pgconn = conn.pgconn
        pgconn.send_query(
            f"START_REPLICATION SLOT {slot} LOGICAL 0/0 (proto_version '1',"
            f" publication_names '{publication}')".encode()
        )
        result = pgconn.get_result()
        assert result is not None and result.status == psycopg.pq.ExecStatus.COPY_BOTH
        payloads: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(payloads) < messages and time.monotonic() < deadline:
            size, data = pgconn.get_copy_data(1)
            if size > 0:
                if data[0] == ord("w"):  # XLogData: 24 header bytes, then the message
                    payloads.append(data[25:])
                continue
            if size < 0:
                break
            select.select([pgconn.socket], [], [], 0.5)
            pgconn.consume_input()
        return len(payloads)
    finally:
        conn.close()


def bench_reads(source: Source, slot: str, publication: str, timeout: float) -> dict[str, float]:
    """Seconds of each way to read the slot's backlog, same run (each after one warm-up of
    the server's count)."""
    fill = {"slot": slot, "publication": publication}
    ((messages,),) = source.execute(WAYS["server count(*)"].format(**fill))
    out = {name: seconds(lambda q=q: _fetch(source, q.format(**fill))) for name, q in WAYS.items()}
    got = 0

    def streamed() -> None:
        nonlocal got
        got = stream(source, slot, publication, messages, timeout)

    out["START_REPLICATION stream"] = seconds(streamed)
    assert got == messages, f"the stream brought {got} messages of {messages}"
    for name, s in out.items():
        print(f"  read {name:<26} {s:6.2f} s  {messages / s:>12,.0f} messages/s")
    return out
