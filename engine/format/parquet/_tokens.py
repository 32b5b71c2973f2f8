"""The writer's side of stage 3: per row group, a bloom filter of the words of each text column.

A text column is a string column whose first block holds at least one space per value on
average (messages, not ids or names: their words are the values, which min/max and Parquet's
bloom filters serve). Each filter is stored in a hidden binary column
``__kyma/~tokens/<column>``, at the first row of its row group (null elsewhere: nulls cost a
few bytes a page); the footer's ``kyma.token_filters`` names the columns. ``_token_filter.py``
reads them.
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.format import _token_bloom
from kyma.engine.format._shred import is_hidden
from kyma.engine.format._stats import _is_str
from kyma.engine.format.parquet._layout import TOKEN_FILTERS_PREFIX
from kyma.engine.native import strings

SPACES_PER_VALUE = 1.0


def filter_column(column: str) -> str:
    """``__kyma/~tokens/message``"""
    return f"{TOKEN_FILTERS_PREFIX}{column}"


def text_columns(sample: pa.RecordBatch) -> list[str]:
    """The string columns of ``sample`` (an extent's first block) that hold text."""
    out = []
    for field, values in zip(sample.schema, sample.columns, strict=True):
        if not _is_str(field.type) or is_hidden(field.name):
            continue
        present = len(values) - values.null_count
        if present and strings.spaces(values) >= SPACES_PER_VALUE * present:
            out.append(field.name)
    return out


def block_filter(values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The hidden column of one block: its words' filter at row 0 (null: too many words);
    and the words (distinct), which are also the block's share of the extent's token set."""
    words = strings.words(values)
    head = pa.array([_token_bloom.build(words)], pa.binary())
    return pa.concat_arrays([head, pa.nulls(len(values) - 1, pa.binary())]), words


def footer_entry(columns: list[str]) -> dict[str, object]:
    """What ``kyma.token_filters`` holds for filters of ``columns``."""
    return {
        "columns": {name: filter_column(name) for name in columns},
        "hashes": _token_bloom.HASHES,
    }
