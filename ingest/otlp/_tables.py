"""The three OTLP tables: their columns, and making sure a table has them.

Every column is filled from one OTLP field (the mapping tables of docs/guide/otlp.md);
OTLP fields not listed here are dropped. ``_timestamp`` is the record's time (a span's start,
a metric point's time), and the ingest time when the record has none.
"""

from __future__ import annotations

from kyma.engine.catalog import Catalog
from kyma.engine.errors import NotFoundError, SchemaError
from kyma.engine.types import Column, KymaType


def _columns(spec: str) -> tuple[Column, ...]:
    """``"name type, name type"`` → columns."""
    pairs = (item.split() for item in spec.split(","))
    return tuple(Column(name, KymaType.parse(kind)) for name, kind in pairs)


_RESOURCE = "service_name string, resource_attributes dynamic, scope_name string, "
_RESOURCE += "scope_version string, scope_attributes dynamic"

LOG_COLUMNS = _columns(
    "_timestamp timestamp, observed_timestamp timestamp, severity_number int, "
    "severity_text string, body string, attributes dynamic, trace_id string, span_id string, "
    f"trace_flags int, event_name string, {_RESOURCE}"
)
SPAN_COLUMNS = _columns(
    "_timestamp timestamp, end_timestamp timestamp, duration_ns long, trace_id string, "
    "span_id string, parent_span_id string, trace_state string, name string, kind string, "
    "status_code string, status_message string, attributes dynamic, events dynamic, "
    f"links dynamic, {_RESOURCE}"
)
METRIC_COLUMNS = _columns(
    "_timestamp timestamp, start_timestamp timestamp, metric_name string, "
    "metric_description string, metric_unit string, metric_type string, "
    "aggregation_temporality string, is_monotonic bool, attributes dynamic, value real, "
    "count long, sum real, min real, max real, bucket_counts dynamic, explicit_bounds dynamic, "
    "scale int, zero_count long, zero_threshold real, positive_offset int, "
    "positive_bucket_counts dynamic, negative_offset int, negative_bucket_counts dynamic, "
    f"quantiles dynamic, {_RESOURCE}"
)


def prepare_table(catalog: Catalog, name: str, columns: tuple[Column, ...]) -> None:
    """Create ``name`` with ``columns``, or check a table of that name can take them.

    A table created by hand is used when every column it shares with ``columns`` has the
    same type; columns it lacks are added. SchemaError names the first one that differs.
    """
    wanted = [c for c in columns if c.name != "_timestamp"]
    try:
        info = catalog.get_table(name)
    except NotFoundError:
        catalog.create_table(name, wanted, if_not_exists=True)
        return
    for column in wanted:
        have = info.column(column.name)
        if have is None:
            catalog.add_column(name, column, if_not_exists=True)
        elif have.type != column.type:
            raise SchemaError(
                f"table {name!r} cannot take OTLP data: column {column.name!r} is"
                f" {have.type}, expected {column.type}"
            )
