"""A file-drop source definition: the JSON body of ``POST /v1/sources``, checked field by field."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kyma.engine.errors import ConfigError
from kyma.ingest.source_spec import source_header

FORMATS = ("ndjson", "csv", "parquet")
SPARK_MIN_BYTES = 1 << 30
PARALLEL_FILES = 4
GROUP_BYTES = 16 << 20
CHUNK_BYTES = 16 << 20


@dataclass(frozen=True)
class FileDropSpec:
    name: str
    table: str
    path: str  # file:///folder or s3://bucket/prefix
    format: str
    poll_ms: int = 1_000
    schema_evolve: bool = True
    csv_delimiter: str = ","
    s3_endpoint_url: str | None = None
    spark_min_bytes: int | None = SPARK_MIN_BYTES  # larger files go to a Spark load
    parallel_files: int = PARALLEL_FILES  # files read and committed at once
    group_bytes: int = GROUP_BYTES  # smaller files are committed together, up to this many bytes
    chunk_bytes: int = CHUNK_BYTES  # larger NDJSON is coerced and written in chunks this size

    def to_json(self) -> dict[str, Any]:
        """The definition as stored and shown (the body's shape, defaults filled in)."""
        body: dict[str, Any] = {
            "name": self.name,
            "type": "filedrop",
            "table": self.table,
            "path": self.path,
            "format": self.format,
            "poll_ms": self.poll_ms,
            "schema_evolve": self.schema_evolve,
            "csv_delimiter": self.csv_delimiter,
            "spark_min_bytes": self.spark_min_bytes,
            "parallel_files": self.parallel_files,
            "group_bytes": self.group_bytes,
            "chunk_bytes": self.chunk_bytes,
        }
        if self.s3_endpoint_url is not None:
            body["s3_endpoint_url"] = self.s3_endpoint_url
        return body


def parse_filedrop_spec(body: Any) -> FileDropSpec:
    """A FileDropSpec from a JSON body; ConfigError naming the field on any mistake."""
    known = {
        "name",
        "type",
        "table",
        "path",
        "format",
        "poll_ms",
        "schema_evolve",
        "csv_delimiter",
        "s3_endpoint_url",
        "spark_min_bytes",
        "parallel_files",
        "group_bytes",
        "chunk_bytes",
    }
    name, table = source_header(body, "filedrop", known)
    path = body.get("path")
    if not isinstance(path, str) or not re.fullmatch(r"(file:///|s3://[^/]+).*", path):
        raise ConfigError(f"path: expected file:///folder or s3://bucket/prefix, got {path!r}")
    fmt = body.get("format")
    if fmt not in FORMATS:
        raise ConfigError(f"format: expected one of {list(FORMATS)}, got {fmt!r}")
    poll_ms = body.get("poll_ms", 1_000)
    if isinstance(poll_ms, bool) or not isinstance(poll_ms, int) or not 10 <= poll_ms <= 86_400_000:
        raise ConfigError(f"poll_ms: expected an integer from 10 to 86400000, got {poll_ms!r}")
    evolve = body.get("schema_evolve", True)
    if not isinstance(evolve, bool):
        raise ConfigError(f"schema_evolve: expected true or false, got {evolve!r}")
    delimiter = body.get("csv_delimiter", ",")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ConfigError(f"csv_delimiter: expected one character, got {delimiter!r}")
    endpoint = body.get("s3_endpoint_url")
    if endpoint is not None and not (isinstance(endpoint, str) and "://" in endpoint):
        raise ConfigError(f"s3_endpoint_url: expected a URL, got {endpoint!r}")
    spark_min = body.get("spark_min_bytes", SPARK_MIN_BYTES)
    if spark_min is not None and (
        isinstance(spark_min, bool) or not isinstance(spark_min, int) or spark_min < 1
    ):
        raise ConfigError(
            f"spark_min_bytes: expected a positive integer or null (never), got {spark_min!r}"
        )
    parallel = body.get("parallel_files", PARALLEL_FILES)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or not 1 <= parallel <= 64:
        raise ConfigError(f"parallel_files: expected an integer from 1 to 64, got {parallel!r}")
    group = body.get("group_bytes", GROUP_BYTES)
    if isinstance(group, bool) or not isinstance(group, int) or not 0 <= group <= 1 << 30:
        raise ConfigError(
            f"group_bytes: expected an integer from 0 (a commit per file) to {1 << 30},"
            f" got {group!r}"
        )
    chunk = body.get("chunk_bytes", CHUNK_BYTES)
    if isinstance(chunk, bool) or not isinstance(chunk, int) or not 1 << 10 <= chunk <= 1 << 30:
        raise ConfigError(
            f"chunk_bytes: expected an integer from {1 << 10} to {1 << 30}, got {chunk!r}"
        )
    return FileDropSpec(
        name,
        table,
        path,
        fmt,
        poll_ms,
        evolve,
        delimiter,
        endpoint,
        spark_min,
        parallel,
        group,
        chunk,
    )
