"""A load cut into tasks: NDJSON by byte ranges of whole lines, Parquet by row group, CSV
and compressed files whole; and each NDJSON split's first line number in its file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kyma.ingest.load._inputs import InputFile

SPLIT_BYTES = 64 << 20
TAIL_BYTES = 1 << 20


@dataclass(frozen=True)
class Split:
    file: int  # index into the load's files
    start: int  # NDJSON: byte offsets; Parquet: row group number (end = start + 1)
    end: int
    first_line: int = 1  # NDJSON: the file's number of the split's first line


def text_starts(files: list[InputFile]) -> dict[int, list[int]]:
    """Where the NDJSON splits after the first begin, by file index (plain NDJSON only)."""
    starts = {}
    for index, file in enumerate(files):
        if file.format == "ndjson" and not file.compressed and file.size > SPLIT_BYTES:
            starts[index] = list(range(SPLIT_BYTES, file.size, SPLIT_BYTES))
    return starts


def plan_splits(
    files: list[InputFile],
    row_groups: Callable[[InputFile], int],
    first_lines: dict[tuple[int, int], int],
) -> list[Split]:
    """``first_lines`` maps (file index, start) of the text splits to their first line."""
    splits = []
    for index, file in enumerate(files):
        if file.format == "parquet":
            splits += [Split(index, g, g + 1) for g in range(row_groups(file))]
        elif file.format == "csv" or file.compressed:
            splits.append(Split(index, 0, file.size))  # CSV: one header per task
        else:
            splits += [
                Split(index, s, min(s + SPLIT_BYTES, file.size), first_lines.get((index, s), 1))
                for s in range(0, file.size, SPLIT_BYTES)
            ]
    return splits


class LineCounter:
    """Counts newlines in blocks read in order, for the line numbers of ``text_starts``."""

    def __init__(self, starts: dict[int, list[int]]) -> None:
        self._starts = starts
        self._newlines = dict.fromkeys(starts, 0)
        self.first_lines: dict[tuple[int, int], int] = {}

    def observe(self, index: int, offset: int, data: bytes) -> None:
        """A block of file ``index`` at ``offset``; blocks of a file come in order."""
        if index not in self._starts:
            return
        for start in self._starts[index]:
            if offset < start <= offset + len(data):  # the byte before start is in this block
                before = self._newlines[index] + data.count(b"\n", 0, start - 1 - offset)
                self.first_lines[(index, start)] = before + 2  # see whole_lines
        self._newlines[index] += data.count(b"\n")


def pieces(body: bytes, size: int) -> Iterator[tuple[bytes, int]]:
    """``body`` cut after a newline every ``size`` bytes or so; each with its lines before."""
    start, lines = 0, 0
    while start < len(body):
        cut = body.find(b"\n", start + size - 1)
        end = len(body) if cut < 0 else cut + 1
        piece = body[start:end]
        yield piece, lines
        lines += piece.count(b"\n")
        start = end


def whole_lines(read: Callable[[int, int], bytes], size: int, start: int, end: int) -> bytes:
    """The lines whose first byte lies in ``[start, end)``: every line in exactly one split.

    The first of them is line 2 + the newlines before byte ``start - 1`` (for start > 0):
    whether or not that byte is a newline, one newline ends the line before it.
    """
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
