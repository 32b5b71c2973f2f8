"""The writer's side of stage 3 for substrings: per page, a bloom filter of the trigrams of
each text column (the columns ``_tokens.py`` gives word filters).

Each page's filter (``_gram_bloom``: its ``_timestamp`` range, then the bits) is stored in a
hidden binary column ``__kyma/~grams/<column>`` at the page's first row, null elsewhere; the
footer's ``kyma.gram_filters`` names the columns. ``_gram_filter.py`` reads them.
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.format import _gram_bloom
from kyma.engine.format.parquet._layout import GRAM_FILTERS_PREFIX

TIME = "_timestamp"


def filter_column(column: str) -> str:
    """``__kyma/~grams/message``"""
    return f"{GRAM_FILTERS_PREFIX}{column}"


def block_filter(batch: pa.RecordBatch, column: str) -> pa.Array:
    """The hidden column of one block for text ``column``."""
    index = batch.schema.get_field_index(TIME)
    times = batch.column(index) if index >= 0 else None
    if times is not None and not (pa.types.is_timestamp(times.type) and times.type.unit == "ns"):
        times = None  # the scan's time filter compares nanoseconds
    return _gram_bloom.build(batch.column(column), times)


def footer_entry(columns: list[str]) -> dict[str, object]:
    """What ``kyma.gram_filters`` holds for filters of ``columns``."""
    return {
        "columns": {name: filter_column(name) for name in columns},
        "hashes": _gram_bloom.HASHES,
        "rows": _gram_bloom.ROWS,
    }
