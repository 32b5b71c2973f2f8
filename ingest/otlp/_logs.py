"""``ExportLogsServiceRequest`` → rows of the logs table (``LOG_COLUMNS``)."""

from __future__ import annotations

from typing import Any

from ._tables import LOG_COLUMNS
from ._values import Columns, Converted, Rejected, dynamic, hex_id, nanos, text


def logs_batch(request: Any) -> Converted:
    """One row per log record; a record with a malformed id or time is rejected."""
    columns = Columns(LOG_COLUMNS)
    c = columns.lists
    for record in columns.walk(request.resource_logs, "scope_logs", "log_records"):
        try:
            trace_id = hex_id(record.trace_id, 16, "trace_id")
            span_id = hex_id(record.span_id, 8, "span_id")
            time = nanos(record.time_unix_nano, "time_unix_nano")
            observed = nanos(record.observed_time_unix_nano, "observed_time_unix_nano")
        except Rejected as e:
            columns.reject("log record", e)
            continue
        c["_timestamp"].append(time or observed)
        c["observed_timestamp"].append(observed)
        c["severity_number"].append(record.severity_number or None)
        c["severity_text"].append(record.severity_text or None)
        c["body"].append(text(record.body))
        c["attributes"].append(dynamic(record.attributes))
        c["trace_id"].append(trace_id)
        c["span_id"].append(span_id)
        c["trace_flags"].append(record.flags & 0xFF if trace_id else None)
        c["event_name"].append(record.event_name or None)
    return columns.converted()
