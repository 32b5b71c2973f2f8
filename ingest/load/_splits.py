"""A load cut into tasks: NDJSON and CSV by byte ranges of whole lines, Parquet by row
group, compressed files whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kyma.ingest.load._inputs import InputFile

SPLIT_BYTES = 64 << 20
TAIL_BYTES = 1 << 20


@dataclass(frozen=True)
class Split:
    file: int  # index into the load's files
    start: int  # NDJSON: byte offsets; Parquet: row group number (end = start + 1)
    end: int


def plan_splits(files: list[InputFile], row_groups: Callable[[InputFile], int]) -> list[Split]:
    splits = []
    for index, file in enumerate(files):
        if file.format == "parquet":
            splits += [Split(index, g, g + 1) for g in range(row_groups(file))]
        elif file.format == "csv" or file.compressed:
            splits.append(Split(index, 0, file.size))  # CSV: one header per task
        else:
            ends = range(0, file.size, SPLIT_BYTES)
            splits += [Split(index, s, min(s + SPLIT_BYTES, file.size)) for s in ends]
    return splits


def whole_lines(read: Callable[[int, int], bytes], size: int, start: int, end: int) -> bytes:
    """The lines whose first byte lies in ``[start, end)``: every line in exactly one split."""
    if start > 0:
        head = read(start - 1, end - start + 1)  # from the byte before: is start a line start?
        cut = head.find(b"\n")
        if cut < 0 or start + cut >= end:
            return b""  # no line starts in this range
        body = head[cut + 1 :]
    else:
        body = read(0, end)
    position = end
    while body and not body.endswith(b"\n") and position < size:  # finish the last line
        more = read(position, min(TAIL_BYTES, size - position))
        newline = more.find(b"\n")
        if newline >= 0:
            return body + more[: newline + 1]
        body += more
        position += len(more)
    return body
