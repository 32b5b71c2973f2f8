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


# the columns a row gives (the others are NULL for every row), timestamps as time.time()
_GIVEN = (
    "pid",
    "datname",
    "usename",
    "application_name",
    "client_addr",
    "client_port",
    "backend_start",
    "xact_start",
    "query_start",
    "state_change",
    "state",
    "query",
    "backend_type",
)


def _session(backend: Backend, running: Statement | None) -> tuple[object, ...]:
    session, (address, port) = backend.session, backend.client or (None, None)
    if running is None:
        query, started, state = backend.query, backend.query_start, backend.state
        xact, changed = backend.xact_start, backend.state_change
    else:
        query, started, state = running.sql, running.started, "active"
        xact, changed = backend.xact_start or running.started, running.started
    return (
        backend.pid,
        session.database,
        backend.caller.principal,
        session.settings.get("application_name", ""),
        address,
        port,
        backend.started,
        xact,
        started,
        changed,
        state,
        query,
        "client backend",
    )


def _statement(statement: Statement) -> tuple[object, ...]:
    started, caller = statement.started, statement.caller
    head = (pid_of(statement), DATABASE, caller.principal, "", None, None)  # no client address
    return (*head, started, started, started, started, "active", statement.sql, caller.client)


def pid_of(statement: Statement) -> int:
    """The pid a statement shows under: its session's, or minus its number."""
    return statement.caller.pid if statement.caller.pid is not None else -statement.number


def _column(field: pa.Field, values: list[object]) -> pa.Array:
    if field.type != _TIME:
        return pa.array(values, field.type)
    micros = pc.multiply(pa.array(values, pa.float64()), 1e6)
    return pc.cast(pc.round(micros), pa.int64()).cast(_TIME)


def pg_stat_activity(backends: Backends, caller: Caller) -> pa.Table:
    """The rows ``caller`` sees: its own in full (an admin's: all), the others' redacted."""
    running = backends.running.all()
    by_pid = {s.caller.pid: s for s in running if s.caller.pid is not None}
    rows = [_session(b, by_pid.get(b.pid)) for b in backends.all()]
    rows += [_statement(s) for s in running if s.caller.pid is None]
    given = dict(zip(_GIVEN, zip(*rows, strict=True) if rows else [()] * len(_GIVEN), strict=True))
    count = len(rows)
    columns = []
    for field in SCHEMA:
        if field.name == "datid":
            columns.append(pa.array([DATABASE_OID] * count, field.type))
        elif field.name in given:
            columns.append(_column(field, list(given[field.name])))
        else:
            columns.append(pa.nulls(count, field.type))
    if not caller.admin:
        columns = _redacted(
            columns, pc.equal(columns[SCHEMA.get_field_index("usename")], caller.principal)
        )
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def _redacted(columns: list[pa.Array], mine: pa.Array) -> list[pa.Array]:
    """Other tokens' rows as a role without pg_read_all_stats sees them."""
    shown = []
    for field, values in zip(SCHEMA, columns, strict=True):
        if field.name == "query":
            values = pc.if_else(mine, values, HIDDEN)
        elif field.name not in _PUBLIC:
            values = pc.if_else(mine, values, pa.scalar(None, field.type))
        shown.append(values)
    return shown
