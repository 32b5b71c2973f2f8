"""The connector registry: definitions in the catalog, live connectors in this process.

It is the engine's Federation: it resolves ``<connector>.<schema>.<table>``, plans with
the shared PushdownPlanner, and runs the connector statements. Failures a connector
reports land in the catalog (``last_error``; a TLS failure also sets ``disabled_reason``),
so every kyma process on the catalog sees them.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
from sqlglot import exp

from kyma.connectors import statements
from kyma.connectors.base import Connector
from kyma.connectors.cdc_state import CHANGES_SUFFIX, CdcStore
from kyma.connectors.pushdown import PushdownPlanner
from kyma.connectors.secrets import SecretPolicy
from kyma.connectors.spec import (
    ConnectorSpec,
    Mode,
    Tls,
    check_change,
    check_new,
    merge_patch,
    parse_spec,
)
from kyma.connectors.store import ConnectorRecord, ConnectorStore
from kyma.connectors.sync import SyncRunner, resolve_synced
from kyma.connectors.types import connector_type
from kyma.engine.catalog import Catalog
from kyma.engine.errors import (
    ConfigError,
    ConnectorDisabledError,
    KymaError,
    NotFoundError,
    TlsFailedError,
)
from kyma.engine.query import QueryResult
from kyma.engine.query.federation import FederatedPlan, Federation

log = logging.getLogger("kyma.connectors")

INSECURE_WARNING = (
    "WARNING: TLS is disabled for this connector: credentials and rows cross the network"
    " in clear text"
)


class ConnectorRegistry(Federation):
    def __init__(
        self, catalog: Catalog, records: ConnectorStore, cdc: CdcStore, secrets: SecretPolicy
    ) -> None:
        self.catalog = catalog
        self.records = records
        self.cdc = cdc
        self.secrets = secrets
        self.planner = PushdownPlanner(self.connector)
        self._live: dict[int, Connector] = {}
        self._healthy: dict[int, bool] = {}
        self._lock = threading.Lock()
        self.sync = SyncRunner(self)

    # ---------------------------------------------------------------- API

    def create(self, body: Any) -> dict[str, Any]:
        """Store a definition, then start it: connect and introspect once. The answer says
        whether the source was reachable (``reachable``, and ``last_error`` if not)."""
        spec = self._checked(body)
        record = self.records.create(spec.name, spec.type, spec.to_json())
        log.info("connector %r created (%s, %s)", spec.name, spec.type, spec.mode)
        return self._start(record)

    def update(self, key: str, patch: Any) -> dict[str, Any]:
        """Edit a definition with a JSON merge patch, checked as on create, then start it
        again on a fresh pool (a syncing connector's worker restarts too)."""
        record = self.records.get(key)
        spec = self._checked(merge_patch(record.definition, patch))
        check_change(parse_spec(record.definition), spec)
        if spec.mode != Mode.FEDERATION:
            self.sync.stop(record.connector_id)
        record = self.records.update(record.connector_id, spec.to_json())
        self._close_live(record.connector_id)
        log.info("connector %r updated", spec.name)
        return self._start(record)

    def describe(self, key: str) -> dict[str, Any]:
        return _public(self.records.get(key), self._state)

    def list(self) -> list[dict[str, Any]]:
        return [_public(r, self._state) for r in self.records.list_all()]

    def drop(self, key: str) -> None:
        """Drop the definition; a sync connector's slot and publication go first."""
        record = self.records.get(key)
        if record.definition.get("mode", Mode.FEDERATION) != Mode.FEDERATION:
            self.sync.forget(record)
        record = self.records.drop(key)
        self._close_live(record.connector_id)
        log.info("connector %r dropped", record.name)

    def status(self, key: str) -> dict[str, Any]:
        record = self.records.get(key)
        with self._lock:
            live = self._live.get(record.connector_id)
        return {
            "id": record.connector_id,
            "name": record.name,
            "state": self._state(record),
            "disabled_reason": record.disabled_reason,
            "last_error": record.last_error,
            **(live.status() if live is not None else {"pool": None, "tables_seen": None}),
            **self.sync.status(record),
        }

    def enable(self, key: str) -> dict[str, Any]:
        """Clear ``disabled_reason`` and start again (e.g. after fixing the source's TLS). A
        sync connector disabled for a lost slot or a changed key re-snapshots its tables."""
        record = self.records.get(key)
        try:
            check_new(parse_spec(record.definition))
        except ConfigError as e:  # a definition stored by an older kyma
            raise ConfigError(f"{e}; change it with PATCH /v1/connectors/{record.name}") from None
        self.records.set_state(record.connector_id, disabled_reason=None, last_error=None)
        if connector_type(record.definition["type"]).resnapshots_after(record.disabled_reason):
            self.sync.reset(record)
        return self._start(self.records.get(key))

    def tables(self, key: str) -> builtins.list[dict[str, Any]]:
        """The catalog a connector shows: its schemas' tables in scope, with kyma types."""
        connector = self.connector(self.records.get(key).name)
        return [
            {
                "schema": table.schema,
                "name": table.name,
                "columns": [
                    {"name": c.name, "type": str(c.column.type), "source_type": c.type_name}
                    for c in table.columns
                ],
            }
            for table in sorted(connector.tables(), key=lambda t: (t.schema, t.name))
        ]

    def refresh(self, key: str) -> dict[str, Any]:
        """Introspect the source again; returns the status."""
        self.connector(self.records.get(key).name).tables(refresh=True)
        return self.status(key)

    @contextmanager
    def opened(self, record: ConnectorRecord) -> Iterator[Connector]:
        """A connector of its own for ``record``'s source, even while disabled; closed after."""
        connector = self._open(record)
        try:
            yield connector
        finally:
            connector.close()

    # ---------------------------------------------------------------- Federation

    def connector(self, name: str) -> Connector:
        """The live connector for a catalog name; NotFoundError or ConnectorDisabledError."""
        try:
            record = self.records.get(name)
        except NotFoundError:
            raise NotFoundError(f"no connector named {name!r}") from None
        if record.disabled_reason:
            raise ConnectorDisabledError(
                f"connector {name!r} is disabled: {record.disabled_reason}"
            )
        with self._lock:
            live = self._live.get(record.connector_id)
            if live is not None and live.spec != parse_spec(record.definition):
                live.close()  # edited, perhaps by another kyma process on this catalog
                live = None
            if live is None:
                try:
                    live = self._open(record)
                except KymaError as e:  # e.g. a secret_ref that resolves to nothing
                    self._failed(record, parse_spec(record.definition), e)
                    raise
                self._live[record.connector_id] = live
        return live

    def plan(
        self, stmt: exp.Query, local_tables: dict[str, dict[str, str]], *, pushdown: bool
    ) -> FederatedPlan:
        return self.planner.plan(stmt, local_tables, pushdown=pushdown)

    def statement(self, stmt: exp.Expression) -> QueryResult | None:
        return statements.run(self, stmt)

    def describe_table(self, catalog: str, schema: str, name: str) -> QueryResult:
        table = self.connector(catalog).table(schema, name)
        columns = table.columns
        answer = pa.table(
            {
                "name": pa.array([c.name for c in columns], pa.string()),
                "type": pa.array([c.column.type.name for c in columns], pa.string()),
                "source_type": pa.array([c.type_name for c in columns], pa.string()),
            }
        )
        return QueryResult(answer, "DESCRIBE")

    def resolve_synced(self, stmt: exp.Expression) -> exp.Expression:
        return resolve_synced(self.records, stmt)

    def change_log_of(self, name: str) -> str | None:
        base = name.removesuffix(CHANGES_SUFFIX)
        return None if base == name else base

    def close(self) -> None:
        self.sync.close()
        with self._lock:
            live, self._live = list(self._live.values()), {}
        for connector in live:
            connector.close()

    # ---------------------------------------------------------------- internals

    def _checked(self, body: Any) -> ConnectorSpec:
        """A new or edited definition: parsed, and meeting the rules older ones need not."""
        spec = parse_spec(body)
        check_new(spec)
        self.secrets.check(spec.connection.secret_ref)
        return spec

    def _start(self, record: ConnectorRecord) -> dict[str, Any]:
        spec = parse_spec(record.definition)
        if spec.connection.tls == Tls.DISABLED:
            log.warning("connector %r: %s", spec.name, INSECURE_WARNING)
            self.records.set_state(
                record.connector_id, disabled_reason=None, last_error=INSECURE_WARNING
            )
        reachable = True
        try:
            self.connector(spec.name).tables(refresh=True)
            if spec.mode != Mode.FEDERATION:
                self.sync.prepare(record)
        except KymaError as e:  # recorded by _failed; the definition stays
            reachable = False
            log.warning("connector %r did not start: %s", spec.name, e)
        return {**self.describe(str(record.connector_id)), "reachable": reachable}

    def _close_live(self, connector_id: int) -> None:
        with self._lock:
            live = self._live.pop(connector_id, None)
        self._healthy.pop(connector_id, None)
        if live is not None:
            live.close()

    def _open(self, record: ConnectorRecord) -> Connector:
        spec = parse_spec(record.definition)
        return connector_type(spec.type)(
            spec,
            self.secrets.resolve(spec.connection.secret_ref),
            on_failure=lambda error: self._failed(record, spec, error),
            on_success=lambda: self._succeeded(record),
        )

    def _failed(self, record: ConnectorRecord, spec: ConnectorSpec, error: KymaError) -> None:
        disabled = str(error) if isinstance(error, TlsFailedError) else None
        last_error = str(error)
        if spec.connection.tls == Tls.DISABLED:
            last_error = f"{INSECURE_WARNING}; {last_error}"
        self._healthy[record.connector_id] = False
        self.records.set_state(record.connector_id, disabled_reason=disabled, last_error=last_error)
        if disabled:
            log.error("connector %r disabled: %s", record.name, disabled)
            with self._lock:
                live = self._live.pop(record.connector_id, None)
            if live is not None:
                live.close()

    def _succeeded(self, record: ConnectorRecord) -> None:
        self._healthy[record.connector_id] = True

    def _state(self, record: ConnectorRecord) -> str:
        if record.disabled_reason:
            return "disabled"
        healthy = self._healthy.get(record.connector_id)
        return {True: "ready", False: "error", None: "idle"}[healthy]


def _public(record: ConnectorRecord, state: Any) -> dict[str, Any]:
    """A connector as the API shows it: the definition (no secret in it), id and state."""
    return {
        "id": record.connector_id,
        **record.definition,
        "created_at": record.created_at.isoformat(),
        "state": state(record),
        "disabled_reason": record.disabled_reason,
        "last_error": record.last_error,
    }
