"""``ExportLogsServiceRequest`` → rows of the logs table (``LOG_COLUMNS``)."""

from __future__ import annotations

from typing import Any

from ._values import Columns, Rejected, dynamic, hex_id, nanos, text


def fill_logs(columns: Columns, request: Any) -> None:
    """One row per log record of ``request``; a record with a malformed id or time is
    rejected."""
    c = columns.lists
    # Bound appends: a record is ten of them, the commonest step of the loop.
    times, observed_at = c["_timestamp"].append, c["observed_timestamp"].append
    numbers, texts, bodies = (
        c["severity_number"].append,
        c["severity_text"].append,
        c["body"].append,
    )
    attrs, trace_ids, span_ids = c["attributes"].append, c["trace_id"].append, c["span_id"].append
    flags, event_names = c["trace_flags"].append, c["event_name"].append
    for record in columns.walk(request.resource_logs, "scope_logs", "log_records"):
        try:
            trace_id = hex_id(record.trace_id, 16, "trace_id")
            span_id = hex_id(record.span_id, 8, "span_id")
            time = nanos(record.time_unix_nano, "time_unix_nano")
            observed = nanos(record.observed_time_unix_nano, "observed_time_unix_nano")
        except Rejected as e:
            columns.reject("log record", e)
            continue
        times(time or observed)
        observed_at(observed)
        numbers(record.severity_number or None)
        texts(record.severity_text or None)
        bodies(text(record.body))
        attrs(dynamic(record.attributes))
        trace_ids(trace_id)
        span_ids(span_id)
        flags(record.flags & 0xFF if trace_id else None)
        event_names(record.event_name or None)
