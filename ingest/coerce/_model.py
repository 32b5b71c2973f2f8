"""What coercion returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from kyma.engine.format import ParsedDynamic


@dataclass(frozen=True)
class Coerced:
    batch: pa.RecordBatch
    """All table columns, in order: its schema is ``arrow_schema(columns)``."""
    rows: int
    unknown_keys: list[str] = field(default_factory=list)
    """Top-level keys that are neither columns nor props fields (dropped), in order of
    first appearance: the write path's input to schema evolution."""
    types_seen: dict[str, list[str]] | None = None
    """Per column, the JSON value types written into it (typed evolution knows them; the
    plain path does not look, and the column's own type stands in)."""
    parsed: dict[str, ParsedDynamic] = field(default_factory=dict)
    """Dynamic columns as pyarrow parsed them (the fast path's inferred structs), and which
    rows' CBOR they vouch for: the extent writer reads paths and shredded sub-columns of
    those rows from them instead of decoding CBOR. Deferred (``coerce_ndjson``), the
    batch holds no bytes for those rows: the writer encodes only what it stores whole."""
