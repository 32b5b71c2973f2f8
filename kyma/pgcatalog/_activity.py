"""``pg_stat_activity``: a row a Postgres protocol session, and a row a statement running
over another interface (HTTP, Flight SQL, the embedded REPL), built for one caller.

Postgres 15's columns, in its order. kyma has no ``oid``, ``name``, ``inet`` or ``xid``
types: those columns are ``bigint`` (oid), ``text`` (name, inet, xid). A session shows
``active`` with the statement it runs, or its state (``idle``, ``idle in transaction``)
with its last statement, as Postgres does. A statement of another interface has no backend:
its ``pid`` is minus its number (``q12`` is ``-12``), its ``backend_type`` the interface.
``usename`` is the token (``token 7``; ``anyone`` without auth), which decides who sees and
stops what: as in Postgres for a role without ``pg_read_all_stats``, a caller sees its own
rows in full and only ``datid``, ``datname``, ``pid``, ``usesysid``, ``usename`` and
``application_name`` of the others, with ``query`` '<insufficient privilege>'; an admin
token sees every row in full.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.query import Caller
from kyma.engine.query._running import Statement
from kyma.pgcatalog._information_schema import DATABASE
from kyma.pgwire._backends import Backend, Backends

DATABASE_OID = 16384  # pg_database's one row
HIDDEN = "<insufficient privilege>"
_TIME = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema(
    [
        ("datid", pa.int64()),
        ("datname", pa.string()),
        ("pid", pa.int32()),
        ("leader_pid", pa.int32()),
        ("usesysid", pa.int64()),
        ("usename", pa.string()),
        ("application_name", pa.string()),
        ("client_addr", pa.string()),
        ("client_hostname", pa.string()),
        ("client_port", pa.int32()),
        ("backend_start", _TIME),
        ("xact_start", _TIME),
        ("query_start", _TIME),
        ("state_change", _TIME),
        ("wait_event_type", pa.string()),
        ("wait_event", pa.string()),
        ("state", pa.string()),
        ("backend_xid", pa.string()),
        ("backend_xmin", pa.string()),
        ("query_id", pa.int64()),
        ("query", pa.string()),
        ("backend_type", pa.string()),
    ]
)
# what every caller sees of every row (pgstatfuncs.c: "Values available to all callers")
_PUBLIC = frozenset(
    {"datid", "datname", "pid", "usesysid", "usename", "application_name"}
    | {"backend_xid", "backend_xmin"}
)


def _time(seconds: float | None) -> dt.datetime | None:
    return None if seconds is None else dt.datetime.fromtimestamp(seconds, dt.UTC)


def _session(backend: Backend, running: Statement | None) -> dict[str, object]:
    session = backend.session
    address, port = backend.client or (None, None)
    row: dict[str, object] = {
        "datname": session.database,
        "application_name": session.settings.get("application_name", ""),
        "client_addr": address,
        "client_port": port,
        "backend_start": _time(backend.started),
        "backend_type": "client backend",
    }
    if running is None:
        xact = backend.xact_start
        row.update(query=backend.query, query_start=backend.query_start, state=backend.state)
        row.update(state_change=backend.state_change, xact_start=xact)
    else:
        started = running.started
        row.update(query=running.sql, query_start=started, state="active")
        row.update(state_change=started, xact_start=backend.xact_start or started)
    for name in ("query_start", "state_change", "xact_start"):
        row[name] = _time(row[name])  # type: ignore[arg-type]
    return row


def _statement(statement: Statement) -> dict[str, object]:
    started = _time(statement.started)
    return {
        "datname": DATABASE,
        "application_name": "",
        "backend_start": started,
        "xact_start": started,
        "query_start": started,
        "state_change": started,
        "state": "active",
        "query": statement.sql,
        "backend_type": statement.caller.client,
    }


def pid_of(statement: Statement) -> int:
    """The pid a statement shows under: its session's, or minus its number."""
    return statement.caller.pid if statement.caller.pid is not None else -statement.number


def pg_stat_activity(backends: Backends, caller: Caller) -> pa.Table:
    """The rows ``caller`` sees: its own in full (an admin's: all), the others' redacted."""
    rows = []
    running = backends.running.all()
    by_pid = {s.caller.pid: s for s in running if s.caller.pid is not None}
    for backend in backends.all():
        row = _session(backend, by_pid.get(backend.pid))
        rows.append({**row, "pid": backend.pid, "usename": backend.caller.principal})
    for statement in running:
        if statement.caller.pid is None:
            row = _statement(statement)
            rows.append({**row, "pid": pid_of(statement), "usename": statement.caller.principal})
    table = pa.Table.from_pylist([{**row, "datid": DATABASE_OID} for row in rows], schema=SCHEMA)
    if caller.admin:
        return table
    mine = pc.equal(table.column("usename"), caller.principal)
    columns = []
    for column in SCHEMA:
        values = table.column(column.name)
        if column.name == "query":
            values = pc.if_else(mine, values, HIDDEN)
        elif column.name not in _PUBLIC:
            values = pc.if_else(mine, values, pa.scalar(None, column.type))
        columns.append(values)
    return pa.Table.from_arrays(columns, schema=SCHEMA)
