"""``COPY … TO STDOUT`` over the protocol: CopyOutResponse, one CopyData a row as the engine
computes the rows (a batch in memory at a time; its lines and their framing built by Arrow
and numpy, column by column), CopyDone and ``COPY n``."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pyarrow as pa

from kyma.engine.query import QueryResult
from kyma.pgwire import _messages as m
from kyma.pgwire._copy import Copy
from kyma.pgwire._encoding import encoded
from kyma.pgwire._rows import Rows

SLICE_ROWS = 16_384  # rows turned into lines and sent at a time


def send_copy(
    send: Callable[..., None],
    copy: Copy,
    result: QueryResult,
    limits: tuple[Callable[[], bool], float],
) -> None:
    """Send ``result``'s rows as ``copy`` words them; ``limits``: the statement's cancel
    check and deadline (the connection's ``statement_limits``)."""
    width = result.table.num_columns
    send(m.message(b"H", struct.pack(f"!bh{width}h", 0, width, *([0] * width))))
    header = copy.header_line(result.table.column_names)
    if header is not None:
        send(m.copy_data(header))

    plain = [_plain(f.type) for f in result.table.schema]

    def sink(table: pa.Table) -> None:
        for start in range(0, table.num_rows, SLICE_ROWS):
            part = table.slice(start, SLICE_ROWS)
            if part.num_rows:
                send(m.copy_data(copy.lines(encoded(part, None), plain)))

    rows = Rows(result)
    rows.send(0, sink, *limits)
    send(m.message(b"c"), m.command_complete(f"COPY {rows.sent}"))


def _plain(dtype: pa.DataType) -> bool:
    """Whether a type's text is a number, a boolean or a timestamp (nothing to escape)."""
    return (
        pa.types.is_integer(dtype)
        or pa.types.is_floating(dtype)
        or pa.types.is_boolean(dtype)
        or pa.types.is_timestamp(dtype)
    )
