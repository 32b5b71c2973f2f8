"""One client connection: start-up and auth, then the simple and extended query protocols.

Statements run through ``services.query.execute`` with the caller's ``authorize``, the path
``POST /v1/query`` takes. An error becomes an ErrorResponse; the connection stays usable.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import select
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

import pyarrow as pa

from kyma.auth import Principal
from kyma.engine.errors import (
    KymaError,
    LimitExceededError,
    SqlError,
    UnauthenticatedError,
    UnsupportedStatementError,
)
from kyma.engine.query import QueryResult
from kyma.engine.query.durations import lowest
from kyma.pgwire import _asyncpg, _copy, _copy_in, _cursors, _errors
from kyma.pgwire import _messages as m
from kyma.pgwire._backends import TERMINATED, Backend
from kyma.pgwire._copy_out import send_copy
from kyma.pgwire._encoding import describe, encoded
from kyma.pgwire._param_types import column_types, infer, referenced_tables
from kyma.pgwire._params import literal
from kyma.pgwire._portals import Portal, Statement, binary_fetch, formats_of
from kyma.pgwire._rows import Rows
from kyma.pgwire._session import REPORTED, Session, translate
from kyma.pgwire._sql_text import bind, parameter_count, split_statements

if TYPE_CHECKING:
    from kyma.pgwire._listener import Listener

log = logging.getLogger("kyma.pgwire")
_ROW_QUERIES = ("select", "with", "values", "show", "table", "explain", "describe")
SLICE_ROWS = 16_384  # rows encoded and sent at a time
FLUSH_BYTES = 1 << 20
_HANGUP = select.POLLRDHUP | select.POLLHUP | select.POLLERR  # the client closed its end


class Connection:
    def __init__(self, sock: socket.socket, listener: Listener) -> None:
        self.sock = sock
        self.listener, self.limits = listener, listener.limits
        self.services, self.authenticator, self.tls = (
            listener.services,
            listener.authenticator,
            listener.tls,
        )
        self.cancels, self.slots = listener.cancels, listener.slots
        self.holds_slot = False
        self.cut_reason: tuple[str, str] | None = None  # SQLSTATE and message, when armed
        self.was_cut = False
        self._hangup: select.poll | None = None
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.key: tuple[int, int] | None = None
        self.cancel = threading.Event()
        self.rfile: BinaryIO = sock.makefile("rb")
        self.principal: Principal | None = None
        self.session: Session | None = None
        self.backend: Backend | None = None  # once authenticated: pg_stat_activity's row
        self.statements: dict[str, Statement] = {}
        self.portals: dict[str, Portal] = {}

    # -- output ------------------------------------------------------------------------

    def send(self, *messages: bytes) -> None:
        """Queue messages; they go out together at ReadyForQuery, a Flush message, a read
        during start-up, or past 1 MiB: a reply is one write, not a TCP segment a message."""
        self.pending.extend(messages)
        self.pending_bytes += sum(len(message) for message in messages)
        if self.pending_bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            data, self.pending, self.pending_bytes = b"".join(self.pending), [], 0
            self.sock.sendall(data)

    def read_message(self, limit: int = m.MAX_MESSAGE_BYTES) -> tuple[bytes, bytes]:
        self.flush()
        return m.read_message(self.rfile, limit)

    def read_startup(self) -> tuple[int, bytes]:
        self.flush()
        return m.read_startup(self.rfile)

    def send_error(self, error: Exception, severity: str = "ERROR") -> None:
        log.debug("Postgres protocol statement failed: %s", error, exc_info=error)
        self.send(m.error_response(_errors.sqlstate(error), _errors.message(error), severity))

    # -- start-up ------------------------------------------------------------------------

    def serve(self) -> None:
        unauthenticated = self.listener.unauthenticated
        if not unauthenticated.take():
            self.send(unauthenticated.refusal())
            self.flush()
            return
        authenticating = True
        try:
            self.arm(self.limits.auth_timeout, "57014", "canceling authentication due to timeout")
            authenticated = self.start()
            self.disarm()
            authenticating = False
            unauthenticated.give_back()
            if authenticated:
                self.loop()
        except (EOFError, OSError) as e:  # ConnectionError, ssl.SSLError…
            if self.terminated():
                self.send(m.error_response("57P01", TERMINATED, "FATAL"))
            elif self.cut():
                assert self.cut_reason is not None
                self.send(m.error_response(*self.cut_reason, "FATAL"))
            log.debug("Postgres connection ended: %s", e)
        except m.ProtocolViolation as e:
            self.send(m.error_response("08P01", str(e), "FATAL"))
            log.debug("Postgres connection ended: %s", e)
        finally:
            self.listener.deadlines.disarm(self)
            if authenticating:
                unauthenticated.give_back()
            with contextlib.suppress(OSError):
                self.flush()  # a FATAL error, say
            if self.key is not None:
                self.cancels.remove(self.key)
            if self.backend is not None:
                self.listener.backends.close(self.backend)
            if self.holds_slot:
                self.slots.give_back()
            self.close_portals()

    def arm(self, seconds: float, sqlstate: str, message: str) -> None:
        """Cut the connection in ``seconds`` (0: never) unless ``disarm`` comes first; the
        client hears ``message`` (FATAL) if it does."""
        if seconds:
            self.cut_reason = (sqlstate, message)
            self.listener.deadlines.arm(self, self.sock.fileno(), seconds)

    def disarm(self) -> None:
        """The awaited read came in time: no deadline now. EOFError if it came too late."""
        if self.cut():
            raise EOFError("cut off at its deadline")
        self.cut_reason = None

    def terminated(self) -> bool:
        """True once pg_terminate_backend ended this session."""
        return self.backend is not None and self.backend.terminated.is_set()

    def cut(self) -> bool:
        """True once a deadline cut the connection off."""
        if self.cut_reason is not None and not self.listener.deadlines.disarm(self):
            self.was_cut = True
        return self.was_cut

    def start(self) -> bool:
        code, body = self.read_startup()
        while code in (m.SSL_REQUEST, m.GSSENC_REQUEST):
            if code == m.SSL_REQUEST and self.tls is not None:
                self.send(b"S")
                self.flush()
                self.sock = self.tls.wrap_socket(self.sock, server_side=True)
                self.rfile = self.sock.makefile("rb")
            else:
                self.send(b"N")
            code, body = self.read_startup()
        if code == m.CANCEL_REQUEST:
            reader = m.Reader(body)
            self.cancels.cancel((reader.int32(), reader.int32()))
            return False  # Postgres answers a CancelRequest by closing the connection
        if code != m.PROTOCOL_V3:
            self.send(
                m.error_response(
                    "0A000", f"unsupported protocol {code >> 16}.{code & 0xFFFF}", "FATAL"
                )
            )
            return False
        if self.tls is not None and not isinstance(self.sock, ssl.SSLSocket):
            self.send(
                m.error_response(
                    "28000", "this server needs TLS: connect with sslmode=require", "FATAL"
                )
            )
            return False
        params = m.startup_parameters(body)
        try:
            self.principal = self.authenticate()
        except UnauthenticatedError as e:
            self.send_error(e, "FATAL")
            return False
        self.holds_slot = self.slots.take()  # counted once authenticated
        if not self.holds_slot:
            self.send(self.slots.refusal())
            return False
        user = params.get("user", "kyma")
        pid, secret = self.listener.backends.new_pid(), secrets.randbelow(1 << 31)
        self.session = Session(user, params.get("database", user), pid, params, self.statements)
        self.backend = self.listener.backend(self, self.principal, self.session)
        self.key = (pid, secret)
        self.cancels.add(self.key, self)
        out = [m.authentication(0)]
        out += [m.parameter_status(n, self.session.settings[n]) for n in REPORTED]
        out += [m.backend_key_data(pid, secret), m.ready_for_query()]
        self.send(*out)
        self.flush()
        return True

    def authenticate(self) -> Principal:
        """The token is the password (cleartext, as a Bearer header is; use TLS off loopback)."""
        if not self.authenticator.required:
            return self.authenticator.principal(None)
        self.send(m.authentication(3))
        kind, body = self.read_message(m.MAX_STARTUP_BYTES)  # a token is short
        if kind != b"p":
            raise UnauthenticatedError("expected a password message: the password is a kyma token")
        token = body.rstrip(b"\x00").decode(errors="replace").strip()
        if not token:
            raise UnauthenticatedError("missing token: send a kyma token as the password")
        return self.authenticator.principal(f"Bearer {token}")

    # -- messages ------------------------------------------------------------------------

    def loop(self) -> None:
        skipping = False  # after an error in the extended protocol, until Sync
        while True:
            kind, body = self.next_message()
            if kind == b"X":
                return
            if kind == b"Q":
                self.simple_query(m.Reader(body).cstring())
                self.flush()
                skipping = False
                continue
            if kind == b"S":
                skipping = False
                self.send(*self.reported(), self.ready())
                self.flush()
                continue
            if kind == b"H":
                self.flush()
                continue
            if skipping:
                continue
            handler = self.EXTENDED.get(kind)
            try:
                if handler is None:
                    raise UnsupportedStatementError(f"protocol message {kind!r} is not supported")
                handler(self, m.Reader(body))
            except Exception as e:  # noqa: BLE001 - every error goes to the client
                self.fail(e)
                skipping = True

    def next_message(self) -> tuple[bytes, bytes]:
        """The next message, within the idle timeout that applies (the lower of the
        server's and the session's, for a transaction block or outside one)."""
        session = self.session_()
        if session.in_transaction:
            seconds = lowest(
                self.limits.idle_in_transaction_timeout,
                session.seconds("idle_in_transaction_session_timeout"),
            )
            reason = ("25P03", "terminating connection due to idle-in-transaction timeout")
        else:
            seconds = lowest(
                self.limits.idle_session_timeout, session.seconds("idle_session_timeout")
            )
            reason = ("57P05", "terminating connection due to idle-session timeout")
        if not seconds:
            return m.read_message(self.rfile)
        self.arm(seconds, *reason)
        message = m.read_message(self.rfile)
        self.disarm()
        return message

    def ready(self) -> bytes:
        """ReadyForQuery; outside a transaction block the portals close, as Postgres's
        implicit transaction ends."""
        status = self.session_().status
        if status == b"I":
            self.close_portals(held=False)
        return m.ready_for_query(status)

    def session_(self) -> Session:
        assert self.session is not None
        return self.session

    def reported(self) -> list[bytes]:
        session = self.session_()
        changed, session.changed = session.changed, []
        return [m.parameter_status(n, session.settings[n]) for n in dict.fromkeys(changed)]

    def fail(self, error: Exception) -> None:
        if self.terminated():
            raise EOFError("terminated by pg_terminate_backend")
        session = self.session_()
        if session.in_transaction:
            session.failed = True
        self.send_error(error)

    def simple_query(self, sql: str) -> None:
        statements = split_statements(sql)
        if not statements:
            self.send(m.EMPTY_QUERY)
        for statement in statements:
            try:
                copy_in = _copy_in.statement(statement)
                if copy_in is not None:
                    self.send(m.command_complete(_copy_in.run(self, copy_in)))
                    continue
                copy = _copy.parse(statement)
                result = self.run(copy.query if copy else statement, stream=True)
                self.send(*self.reported())
                if copy:
                    send_copy(self.send, copy, result, self.statement_limits())
                else:
                    self.send_result(result, binary_fetch(result))
            except Exception as e:  # noqa: BLE001 - every error goes to the client
                self.fail(e)
                break
        self.send(self.ready())

    def run(self, sql: str, probe: bool = False, stream: bool = False) -> QueryResult:
        """``probe``: only the result's columns are wanted (a query the engine runs reads
        no rows). ``stream``: a query's rows after its first batch come as they are sent
        (``QueryResult.live``). pg_stat_activity shows the session's last statement (not a
        probe)."""
        started, backend = time.time(), self.backend
        assert backend is not None
        try:
            result = self._run(sql, probe, stream)
        finally:
            if not probe:
                backend.ran(sql, started)
        self.send(*(m.error_response("01000", w, "WARNING", b"N") for w in result.warnings))
        return result

    def _run(self, sql: str, probe: bool, stream: bool) -> QueryResult:
        session = self.session_()
        sql = translate(session.expand(sql))
        answer = session.answer(sql)
        if answer is not None:
            return answer
        cursor = _cursors.parse(sql)
        if cursor is not None:
            return _cursors.run(self, cursor)
        principal = self.principal
        assert principal is not None
        cancelled, timeout = self.statement_limits()
        answer = _asyncpg.answer(sql)
        if answer is not None:
            return answer
        words = sql.split(None, 1)
        if probe and words and words[0].lower() in ("select", "with", "values", "table"):
            sql = f"SELECT * FROM ({sql.strip().rstrip(';')}\n) AS kyma_probe LIMIT 0"
        result = self.services.query.execute(
            sql,
            authorize=None if principal.unrestricted else principal.authorize,
            cancel=cancelled,
            timeout=timeout,
            caller=principal.caller("pgwire", session.pid),
            search_path=self.session_().settings.get("search_path"),
            stream=stream,
        )
        session.ran(result)
        return result

    def statement_limits(self) -> tuple[Callable[[], bool], float]:
        """A new statement's cancel (a CancelRequest cancels this statement only; a client
        that hung up cancels it too) and its statement_timeout in seconds."""
        self.cancel = event = threading.Event()

        def cancelled() -> bool:  # polled while the statement runs
            return event.is_set() or self.client_gone()

        return cancelled, self.session_().seconds("statement_timeout")

    def client_gone(self) -> bool:
        """True once the client closed its end of the socket: no one will read the answer."""
        if self._hangup is None:
            self._hangup = select.poll()
            self._hangup.register(self.sock.fileno(), _HANGUP)
        return any(events & _HANGUP for _, events in self._hangup.poll(0))

    def send_result(self, result: QueryResult, formats: list[int] | None = None) -> None:
        """RowDescription, every row as DataRows and CommandComplete (a simple query's)."""
        self.send(describe(result, formats))
        if result.table.num_columns == 0:
            self.send(m.command_complete(result.status if result.status.isupper() else "OK"))
            return
        self.send_rows(Rows(result), 0, formats)

    def send_rows(self, rows: Rows, limit: int, formats: list[int] | None) -> bool:
        """DataRows of the next ``limit`` rows (0: all), as the engine computes them, then
        CommandComplete, or PortalSuspended (False) when ``limit`` rows went and more may
        remain. ``formats``: a format code a column (1: binary), None for text."""

        def sink(table: pa.Table) -> None:
            for start in range(0, table.num_rows, SLICE_ROWS):
                part = table.slice(start, SLICE_ROWS)
                self.send(m.data_rows(encoded(part, formats)))

        if not rows.send(limit, sink, *self.statement_limits()):
            self.send(m.message(b"s"))
            return False
        verb = "FETCH" if rows.status == "FETCH" else "SELECT"
        self.send(m.command_complete(f"{verb} {rows.sent}"))
        return True

    # -- the extended protocol -------------------------------------------------------------

    def parse(self, r: m.Reader) -> None:
        name, sql = r.cstring(), r.cstring()
        oids = [r.int32() for _ in range(r.int16())]
        count = max(parameter_count(sql), len(oids))
        oids += [0] * (count - len(oids))
        if len(split_statements(sql)) > 1:
            raise SqlError("cannot insert multiple commands into a prepared statement")
        self.statements[name] = Statement(sql, oids)
        self.send(m.PARSE_COMPLETE)

    def bind_(self, r: m.Reader) -> None:
        portal, name = r.cstring(), r.cstring()
        statement = self._statement(name)
        formats = [r.int16() for _ in range(r.int16())]
        values: list[bytes | None] = []
        for _ in range(r.int16()):
            length = r.int32()
            values.append(None if length < 0 else r.bytes(length))
        results = [r.int16() for _ in range(r.int16())]
        if any(code not in (0, 1) for code in results):
            raise UnsupportedStatementError(
                f"result format codes {results}: expected 0 (text) or 1 (binary)"
            )
        if len(values) != len(statement.param_oids):
            raise SqlError(
                f"statement needs {len(statement.param_oids)} parameters, got {len(values)}"
            )
        literals = []
        for i, value in enumerate(values):
            binary = bool(formats[i] if len(formats) > 1 else (formats[0] if formats else 0))
            literals.append(literal(value, statement.param_oids[i], binary, i + 1))
        if portal not in self.portals:
            self.room_for_portal()
        self.close_portal(portal)
        self.portals[portal] = Portal(bind(statement.sql, literals), results)
        self.send(m.BIND_COMPLETE)

    def room_for_portal(self) -> None:
        """LimitExceededError when a new portal (or cursor) would pass KYMA_PG_MAX_PORTALS."""
        limit = self.limits.max_portals
        if limit and len(self.portals) >= limit:
            raise LimitExceededError(
                f"{len(self.portals)} portals are open, as many as KYMA_PG_MAX_PORTALS allows;"
                " close one or end the transaction",
                "pg_max_portals",
            )

    def open_cursor(
        self, name: str, sql: str, formats: list[int], result: QueryResult, hold: bool
    ) -> None:
        self.portals[name] = Portal(sql, formats, result, Rows(result), cursor=True, hold=hold)

    def started(self, portal: Portal) -> Rows:
        """The portal's rows to send, running its statement the first time."""
        if portal.result is None:
            portal.result = self.run(portal.sql, stream=True)
            self.send(*self.reported())
        if portal.rows is None:
            portal.rows = Rows(portal.result)
        return portal.rows

    def close_portal(self, name: str) -> None:
        portal = self.portals.pop(name, None)
        if portal is not None and portal.rows is not None:
            portal.rows.close()

    def close_portals(self, held: bool = True, cursors_only: bool = False) -> None:
        """Every portal (``held``: WITH HOLD cursors too; ``cursors_only``: DECLAREd ones)."""
        for name, portal in list(self.portals.items()):
            if (held or not portal.hold) and (portal.cursor or not cursors_only):
                self.close_portal(name)

    def _statement(self, name: str) -> Statement:
        if name not in self.statements:
            raise SqlError(f"prepared statement {name!r} does not exist")
        return self.statements[name]

    def _portal(self, name: str) -> Portal:
        if name not in self.portals:
            raise SqlError(f"portal {name!r} does not exist")
        return self.portals[name]

    def describe_(self, r: m.Reader) -> None:
        kind, name = r.byte(), r.cstring()
        if kind == b"S":
            statement = self._statement(name)
            statement.param_oids = self._parameter_types(statement)
            self.send(m.parameter_description(statement.param_oids), self._probe(statement))
            return
        portal = self._portal(name)
        self.started(portal)
        assert portal.result is not None
        self.send(describe(portal.result, formats_of(portal)))

    def _parameter_types(self, statement: Statement) -> list[int]:
        if all(statement.param_oids):
            return statement.param_oids
        names = referenced_tables(statement.sql)
        principal = self.principal
        assert principal is not None
        schemas = [
            info.schema
            for info in self.services.catalog.list_tables()
            if info.name.lower() in names and principal.may_touch(info.name)
        ]
        return infer(statement.sql, statement.param_oids, column_types(schemas))

    def _probe(self, statement: Statement) -> bytes:
        """The RowDescription of a query, from planning it with NULL parameters."""
        probe = bind(statement.sql, ["NULL"] * len(statement.param_oids))
        words = self.session_().expand(probe).split(None, 1)  # EXECUTE: what it runs
        if not words or words[0].lower() not in _ROW_QUERIES:
            return m.NO_DATA
        return describe(self.run(probe, probe=True))

    def execute(self, r: m.Reader) -> None:
        name, limit = r.cstring(), r.int32()
        portal = self._portal(name)
        if _copy.parse(portal.sql):
            raise UnsupportedStatementError("COPY runs as a simple query (no parameters)")
        rows = self.started(portal)
        assert portal.result is not None
        if portal.result.table.num_columns == 0:
            status = portal.result.status
            self.send(m.command_complete(status if status.isupper() else "OK"))
            return
        if not self.send_rows(rows, max(limit, 0), formats_of(portal)):
            self._hold(portal)

    def _hold(self, portal: Portal) -> None:
        """``portal`` was suspended holding the rest of a batch: refused (and closed) past
        KYMA_PG_MAX_PORTAL_BYTES held by the connection's portals together."""
        limit = self.limits.max_portal_bytes
        held = sum(p.rows.held_bytes for p in self.portals.values() if p.rows is not None)
        if limit and held > limit:
            assert portal.rows is not None
            portal.rows.close()
            raise LimitExceededError(
                f"the open portals would hold {held} bytes of results, more than"
                f" KYMA_PG_MAX_PORTAL_BYTES ({limit}) allows;"
                " close other portals or narrow the query",
                "pg_max_portal_bytes",
            )

    def close(self, r: m.Reader) -> None:
        kind, name = r.byte(), r.cstring()
        if kind == b"S":
            self.statements.pop(name, None)
        else:
            self.close_portal(name)
        self.send(m.CLOSE_COMPLETE)

    EXTENDED = {b"P": parse, b"B": bind_, b"D": describe_, b"E": execute, b"C": close}


class Handler(socketserver.BaseRequestHandler):
    """socketserver's per-connection entry point; the server carries the shared parts."""

    def handle(self) -> None:
        connection = Connection(self.request, self.server.listener)  # type: ignore[attr-defined]
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            connection.serve()
        except KymaError as e:
            connection.send_error(e, "FATAL")
            connection.flush()
        except Exception:
            log.exception("unexpected error on a Postgres protocol connection")
        finally:
            connection.rfile.close()  # it holds the socket: the descriptor is freed now
