"""``ExportLogsServiceRequest`` → rows of the logs table (``LOG_COLUMNS``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from kyma.engine.types import arrow_schema

from ._cbor import attribute_maps
from ._records import Checked, blank_null, hex_ids, records, times, timestamps
from ._tables import LOG_COLUMNS
from ._values import Converted, hex_id, nanos, text

SCHEMA = arrow_schema(LOG_COLUMNS)


def logs_batch(request: Any) -> Converted:
    """One row per log record; a record with a malformed id or time is rejected."""
    logs, columns = records(request.resource_logs, "scope_logs", "log_records")
    checked = Checked("log record", logs)
    trace_id, bad = hex_ids([r.trace_id for r in logs], 16)
    checked.check(bad, lambda r: hex_id(r.trace_id, 16, "trace_id"))
    span_id, bad = hex_ids([r.span_id for r in logs], 8)
    checked.check(bad, lambda r: hex_id(r.span_id, 8, "span_id"))
    time, late = times([r.time_unix_nano for r in logs])
    checked.check(late, lambda r: nanos(r.time_unix_nano, "time_unix_nano"))
    observed, late = times([r.observed_time_unix_nano for r in logs])
    checked.check(late, lambda r: nanos(r.observed_time_unix_nano, "observed_time_unix_nano"))
    severity = np.array([r.severity_number for r in logs], np.int32)
    flags = np.array([r.flags for r in logs], np.uint32) & 0xFF
    columns.update(
        _timestamp=timestamps(np.where(time != 0, time, observed)),
        observed_timestamp=timestamps(observed),
        severity_number=pa.array(severity, pa.int32(), mask=severity == 0),
        severity_text=blank_null([r.severity_text for r in logs]),
        body=_bodies([r.body for r in logs]),
        attributes=attribute_maps([r.attributes for r in logs]),
        trace_id=trace_id,
        span_id=span_id,
        trace_flags=pa.array(flags.astype(np.int32), mask=trace_id.is_null().to_numpy(False)),
        event_name=blank_null([r.event_name for r in logs]),
    )
    return checked.converted(SCHEMA, columns)


def _bodies(bodies: list[Any]) -> pa.Array:
    """Bodies as text: strings as they are, other values as JSON (``text``)."""
    kinds = [b.WhichOneof("value") for b in bodies]
    if all(k == "string_value" for k in kinds):
        return pa.array([b.string_value for b in bodies], pa.string())
    pairs = zip(bodies, kinds, strict=True)
    return pa.array([b.string_value if k == "string_value" else text(b) for b, k in pairs])
