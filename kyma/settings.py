"""Settings: one typed object, read from the environment and an optional TOML file.

Precedence: environment variable > TOML file > default. The TOML file is ``KYMA_CONFIG`` if
set, else ``<home>/kyma.toml`` when it exists; its keys are the field names below. Nothing
else in kyma reads ``os.environ``: the settings object is passed down explicitly.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kyma.engine.errors import ConfigError


def _setting(default: Any, env: str, help: str) -> Any:
    return field(default=default, metadata={"env": env, "help": help})


@dataclass(frozen=True)
class Settings:
    home: Path = _setting(Path(".kyma"), "KYMA_HOME", "home folder of the embedded runtime")
    catalog_url: str | None = _setting(
        None, "KYMA_CATALOG_URL", "Postgres URL of an external catalog (default: embedded)"
    )
    object_store: str | None = _setting(
        None, "KYMA_OBJECT_STORE", "s3://bucket/prefix or file:///path (default: <home>/objects)"
    )
    s3_endpoint_url: str | None = _setting(
        None, "KYMA_S3_ENDPOINT_URL", "endpoint of an S3-compatible store"
    )
    s3_region: str = _setting("us-east-1", "KYMA_S3_REGION", "S3 region")
    s3_access_key_id: str | None = _setting(
        None, "KYMA_S3_ACCESS_KEY_ID", "S3 access key (default: the AWS credential chain)"
    )
    s3_secret_access_key: str | None = _setting(
        None, "KYMA_S3_SECRET_ACCESS_KEY", "S3 secret key (default: the AWS credential chain)"
    )
    cache_dir: Path | None = _setting(
        None, "KYMA_CACHE_DIR", "local cache of remote extents (default: <home>/cache)"
    )
    secrets_dir: Path | None = _setting(
        None, "KYMA_SECRETS_DIR", "folder connector secret_ref files come from (<home>/secrets)"
    )
    import_dirs: str | None = _setting(
        None,
        "KYMA_IMPORT_DIRS",
        "folders read_parquet/read_csv/read_ndjson may read, separated by ':' (none: refused)",
    )
    http_host: str = _setting("127.0.0.1", "KYMA_HTTP_HOST", "address the HTTP API listens on")
    http_port: int = _setting(8080, "KYMA_HTTP_PORT", "port of the HTTP API (0: any free port)")
    http_threads: int = _setting(8, "KYMA_HTTP_THREADS", "worker threads of the HTTP server")
    flight_port: int = _setting(
        8815, "KYMA_FLIGHT_PORT", "port of the Arrow Flight SQL server (0: any free port)"
    )
    pg_port: int = _setting(
        5433, "KYMA_PG_PORT", "port of the Postgres wire protocol listener (0: off)"
    )
    pg_max_connections: int = _setting(
        64,
        "KYMA_PG_MAX_CONNECTIONS",
        "authenticated Postgres protocol connections at most (0: no limit)",
    )
    pg_auth_timeout_seconds: int = _setting(
        5,
        "KYMA_PG_AUTH_TIMEOUT_SECONDS",
        "a Postgres protocol connection not authenticated by then is closed (0: never)",
    )
    pg_max_unauthenticated: int = _setting(
        256,
        "KYMA_PG_MAX_UNAUTHENTICATED",
        "Postgres protocol sockets still starting up or authenticating, at most (0: no limit)",
    )
    pg_idle_session_timeout_seconds: int = _setting(
        0,
        "KYMA_PG_IDLE_SESSION_TIMEOUT_SECONDS",
        "a connection idle outside a transaction longer is closed (0: never)",
    )
    pg_idle_in_transaction_timeout_seconds: int = _setting(
        0,
        "KYMA_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS",
        "a connection idle inside a transaction block longer is closed (0: never)",
    )
    pg_max_portals: int = _setting(
        64, "KYMA_PG_MAX_PORTALS", "open portals of one Postgres connection, at most (0: any)"
    )
    pg_max_portal_bytes: int = _setting(
        256 << 20,
        "KYMA_PG_MAX_PORTAL_BYTES",
        "result bytes one Postgres connection's open portals hold, at most (0: no limit)",
    )
    otlp_grpc_port: int = _setting(
        4317, "KYMA_OTLP_GRPC_PORT", "port of the OTLP/gRPC receiver (0: any free port)"
    )
    otlp_http_port: int = _setting(
        4318, "KYMA_OTLP_HTTP_PORT", "port of the OTLP/HTTP receiver (0: any free port)"
    )
    otlp_logs_table: str = _setting("otel_logs", "KYMA_OTLP_LOGS_TABLE", "table of OTLP logs")
    otlp_traces_table: str = _setting(
        "otel_traces", "KYMA_OTLP_TRACES_TABLE", "table of OTLP spans"
    )
    otlp_metrics_table: str = _setting(
        "otel_metrics", "KYMA_OTLP_METRICS_TABLE", "table of OTLP metric data points"
    )
    otlp_batch_rows: int = _setting(
        50_000, "KYMA_OTLP_BATCH_ROWS", "an OTLP group commit holds at most this many rows"
    )
    otlp_batch_bytes: int = _setting(
        64 << 20, "KYMA_OTLP_BATCH_BYTES", "and this many bytes of export bodies"
    )
    otlp_batch_latency_ms: int = _setting(
        20, "KYMA_OTLP_BATCH_LATENCY_MS", "longest wait for a commit in progress, in ms"
    )
    max_body_bytes: int = _setting(
        64 << 20, "KYMA_MAX_BODY_BYTES", "largest ingest body, after decompression"
    )
    max_line_bytes: int = _setting(1 << 20, "KYMA_MAX_LINE_BYTES", "longest NDJSON line")
    max_rows_per_request: int = _setting(
        1_000_000, "KYMA_MAX_ROWS_PER_REQUEST", "most NDJSON lines in one ingest request"
    )
    max_keys_per_row: int = _setting(
        10_000, "KYMA_MAX_KEYS_PER_ROW", "most top-level keys of one ingested row (0: any)"
    )
    max_nesting_depth: int = _setting(
        100, "KYMA_MAX_NESTING_DEPTH", "deepest nesting of arrays and objects in a row (0: any)"
    )
    ingest_create_tables: bool = _setting(
        False,
        "KYMA_INGEST_CREATE_TABLES",
        "POST /v1/ingest/<table> creates a missing table (per request: ?create=true)",
    )
    ingest_workers: int = _setting(
        0,
        "KYMA_INGEST_WORKERS",
        "processes that coerce and write a body while the server encodes another (0: none)",
    )
    idempotency_wait_seconds: int = _setting(
        30, "KYMA_IDEMPOTENCY_WAIT_SECONDS", "how long a request waits for one with its key"
    )
    query_timeout_seconds: int = _setting(
        300, "KYMA_QUERY_TIMEOUT_SECONDS", "a statement running longer is cancelled (0: never)"
    )
    query_memory_bytes: int = _setting(
        2 << 30, "KYMA_QUERY_MEMORY_BYTES", "memory pool of one statement's operators (0: none)"
    )
    query_cache_bytes: int = _setting(
        512 << 20,
        "KYMA_QUERY_CACHE_BYTES",
        "decoded columns of extents kept in memory for later queries (0: none)",
    )
    max_concurrent_queries: int = _setting(
        16, "KYMA_MAX_CONCURRENT_QUERIES", "statements running at once; more get 429 (0: any)"
    )
    max_result_rows: int = _setting(
        1_000_000, "KYMA_MAX_RESULT_ROWS", "most rows of one answer (0: no limit)"
    )
    max_result_bytes: int = _setting(
        256 << 20, "KYMA_MAX_RESULT_BYTES", "largest answer, as Arrow bytes (0: no limit)"
    )
    catalog_statement_timeout_seconds: int = _setting(
        300,
        "KYMA_CATALOG_STATEMENT_TIMEOUT_SECONDS",
        "a catalog statement running longer is cancelled by Postgres (0: never)",
    )
    max_statement_bytes: int = _setting(
        1 << 20, "KYMA_MAX_STATEMENT_BYTES", "longest SQL statement, in bytes (0: no limit)"
    )
    max_expression_depth: int = _setting(
        1000,
        "KYMA_MAX_EXPRESSION_DEPTH",
        "deepest expression: nested groups plus chained operators (0: no limit)",
    )
    max_in_list_values: int = _setting(
        10_000, "KYMA_MAX_IN_LIST_VALUES", "most values in one IN (...) list (0: no limit)"
    )
    max_plan_relations: int = _setting(
        1000,
        "KYMA_MAX_PLAN_RELATIONS",
        "most SELECT blocks, VALUES lists and table references in one statement (0: no limit)",
    )
    quarantine_seconds: int = _setting(
        600,
        "KYMA_QUARANTINE_SECONDS",
        "a statement running when the server crashed twice is refused this long (0: never)",
    )
    log_format: str = _setting("text", "KYMA_LOG_FORMAT", "text, or json: one object a line")
    spark_master: str | None = _setting(
        None,
        "KYMA_SPARK_MASTER",
        "Spark master for jobs, e.g. spark://host:7077 (default local[*])",
    )
    compaction_target_rows: int = _setting(
        1_000_000, "KYMA_COMPACTION_TARGET_ROWS", "rows of an extent compaction writes"
    )
    compaction_interval_seconds: int = _setting(
        30,
        "KYMA_COMPACTION_INTERVAL_SECONDS",
        "kyma serve compacts a table this long after it gets rows (0: maintenance round only)",
    )
    block_rows: int = _setting(131_072, "KYMA_BLOCK_ROWS", "rows per extent block")
    extent_format: str = _setting(
        "parquet", "KYMA_EXTENT_FORMAT", "format of new extents: parquet, or tlm (v2)"
    )
    gc_grace_seconds: int = _setting(
        3600, "KYMA_GC_GRACE_SECONDS", "age before an unreferenced object may be deleted"
    )
    snapshot_keep_seconds: int = _setting(
        86400,
        "KYMA_SNAPSHOT_KEEP_SECONDS",
        "age of the snapshots VACUUM keeps for time travel (0: it erases deleted rows at once)",
    )
    maintenance_interval_seconds: int = _setting(
        3600, "KYMA_MAINTENANCE_INTERVAL_SECONDS", "period of the ledger sweeper and orphan GC"
    )
    auth: str = _setting(
        "off", "KYMA_AUTH", "required: every request needs an API token (kyma token create)"
    )
    allow_insecure_listen: bool = _setting(
        False, "KYMA_ALLOW_INSECURE_LISTEN", "true: serve a non-loopback address with auth off"
    )
    tls_cert_file: Path | None = _setting(
        None, "KYMA_TLS_CERT_FILE", "PEM certificate chain: every listener serves TLS"
    )
    tls_key_file: Path | None = _setting(
        None, "KYMA_TLS_KEY_FILE", "PEM private key of KYMA_TLS_CERT_FILE"
    )
    pg_bin_dir: Path | None = _setting(
        None, "KYMA_PG_BIN_DIR", "folder with initdb/pg_ctl (default: found on the system)"
    )

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``environ`` (default: the process environment) and TOML."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        home = Path(environ.get("KYMA_HOME", ".kyma"))
        toml_path = environ.get("KYMA_CONFIG")
        if toml_path or (home / "kyma.toml").exists():
            values.update(_read_toml(Path(toml_path) if toml_path else home / "kyma.toml"))
        for f in dataclasses.fields(cls):
            if f.metadata["env"] in environ:
                values[f.name] = environ[f.metadata["env"]]
        return cls(**{name: _convert(cls, name, raw) for name, raw in values.items()})

    @property
    def resolved_cache_dir(self) -> Path:
        return self.cache_dir or self.home / "cache"

    @property
    def resolved_secrets_dir(self) -> Path:
        return self.secrets_dir or self.home / "secrets"

    @property
    def allowed_import_dirs(self) -> tuple[Path, ...]:
        """The folders SQL's file table functions may read (KYMA_IMPORT_DIRS)."""
        return tuple(Path(p) for p in (self.import_dirs or "").split(os.pathsep) if p)

    @classmethod
    def help_text(cls) -> str:
        """One line per setting, for ``kyma --help``."""
        lines = ["settings (environment variable, or key in the TOML file KYMA_CONFIG):"]
        for f in dataclasses.fields(cls):
            default = "" if f.default is None else f" [default: {f.default}]"
            lines.append(f"  {f.metadata['env']:<36} {f.metadata['help']}{default}")
        return "\n".join(lines)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"settings file {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"settings file {str(path)!r}: {e}") from e
    known = {f.name for f in dataclasses.fields(Settings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"settings file {str(path)!r}: unknown keys {unknown}")
    return data


def _convert(cls: type[Settings], name: str, raw: Any) -> Any:
    kind = {f.name: f.type for f in dataclasses.fields(cls)}[name]
    env = {f.name: f.metadata["env"] for f in dataclasses.fields(cls)}[name]
    if raw == "" and "None" in str(kind):
        return None
    if str(kind) == "bool":
        return _bool(env, raw)
    try:
        if "int" in str(kind):
            return int(raw)
        if "Path" in str(kind):
            return Path(raw)
    except ValueError:
        raise ConfigError(f"{env}: expected an integer, got {raw!r}") from None
    return str(raw)


def _bool(env: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    lowered = str(raw).strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off", ""):
        return False
    raise ConfigError(f"{env}: expected true or false, got {raw!r}")
