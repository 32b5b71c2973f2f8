"""``COPY … TO STDOUT`` over the protocol: CopyOutResponse, one CopyData a row as the engine
computes the rows (a batch in memory at a time), CopyDone and ``COPY n``."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pyarrow as pa

from kyma.engine.query import QueryResult
from kyma.pgwire import _messages as m
from kyma.pgwire._copy import Copy
from kyma.pgwire._encoding import text_rows
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
        send(m.message(b"d", header))

    def sink(table: pa.Table) -> None:
        for start in range(0, table.num_rows, SLICE_ROWS):
            lines = copy.lines(text_rows(table.slice(start, SLICE_ROWS)))
            send(*(m.message(b"d", line) for line in lines))

    rows = Rows(result)
    rows.send(0, sink, *limits)
    send(m.message(b"c"), m.command_complete(f"COPY {rows.sent}"))
