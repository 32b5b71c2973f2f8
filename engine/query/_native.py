"""Stage 3 inside DataFusion: each surviving Parquet extent becomes a native Parquet scan.

Stages 1 (catalog) and 2 (block stats, from footers parsed once and cached: extents are
immutable) decide which extents are read; an extent with no surviving block is not read at
all. Each other one is a DataFusion Parquet scan of the file, and the table is their union:
decoding, projection, filter and limit pushdown, row-group and page pruning (by the same
min/max the block stats hold), parallelism and memory are DataFusion's, streaming. Path
columns are expressions over the extent's shredded sub-columns, or ``kyma_dyn_get`` over
its CBOR column (``_path_scan``). Extents of other formats (tlm), and extents with deleted
rows (a deletion vector, ``engine/deletes.py``), go through ``scan_blocks`` into a memory
table joined to the same union.

Stats stay kyma's: blocks kept by stage 2, their rows and the decoded bytes of the columns
read, from the footer.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from itertools import chain

import pyarrow as pa
from datafusion import DataFrame, Expr, SessionContext, col

from kyma.engine import deletes
from kyma.engine.catalog import ExtentRef
from kyma.engine.format import SegmentFormat, _gram_filter, _residual, _token_filter
from kyma.engine.format._shred import Shred
from kyma.engine.format.parquet._reader import ParquetExtentReader
from kyma.engine.format.predicate import BlockPredicate, BlockStats, block_evaluator
from kyma.engine.query import _path_scan, _row_groups
from kyma.engine.query._decoded import DecodedColumns
from kyma.engine.query._limits import checkpoint
from kyma.engine.query._recent import Recent
from kyma.engine.query._scan import TableScan, scan_blocks
from kyma.engine.storage import ObjectStore

FOOTERS = 16_384
"""Parsed footers kept (least recently used out): about 1 KB each plus the block stats."""


@dataclass(frozen=True)
class Footer:
    """What a native scan needs of a Parquet extent, parsed once."""

    file_schema: pa.Schema
    block_stats: list[BlockStats] | None
    shredded: list[Shred]
    block_rows: list[int]
    column_bytes: list[dict[str, int]]

    def decoded_bytes(self, columns: Collection[str], blocks: Iterable[int] | None = None) -> int:
        """What ``columns`` take decoded in ``blocks`` (None: every block)."""
        sizes = self.column_bytes
        chosen = range(len(sizes)) if blocks is None else blocks
        return sum(sizes[b].get(c, 0) for b in chosen for c in columns)

    def pruned(self, predicate: BlockPredicate | None) -> list[int]:
        if self.block_stats is None:
            return list(range(len(self.block_rows)))
        keep = block_evaluator(predicate)
        return [i for i, stats in enumerate(self.block_stats) if keep(stats)]


_UNREAD = object()


def footer_of(store: ObjectStore, fmt: SegmentFormat, path: str) -> Footer | None:
    """The extent's footer, parsed and its checksum verified on its first read; None when it
    is not Parquet."""
    key = (store.url, path)
    found = footers.get(key, _UNREAD)
    if found is not _UNREAD:
        return found
    reader = fmt.open_extent(store, path)
    try:
        if isinstance(reader, ParquetExtentReader):
            reader.verify()  # once: the parsed footer is cached, and extents are immutable
            footer: Footer | None = _footer(reader)
        else:
            footer = None
    finally:
        reader.close()
    footers.put(key, footer)
    return footer


def _footer(reader: ParquetExtentReader) -> Footer:
    return Footer(
        reader.file_schema,
        reader.metadata().block_stats,
        reader.shredded(),
        reader.block_rows(),
        reader.column_bytes(),
    )


footers: Recent[Footer | None] = Recent(FOOTERS)


class ScanFolders:
    """Folders of links to sets of extents, for DataFusion to list.

    DataFusion's Python API registers a Parquet listing over a folder, not over a list of
    files; the extents of a snapshot share their folder with others (older, compacted or
    uncommitted ones), so a scan lists a folder of links of its own. One listing is one
    Parquet scan whose files DataFusion spreads over its target partitions: a union of one
    scan per extent has as many partitions as extents (slower, and an aggregate per
    partition for the memory pool to hold). Extents are immutable, so a folder serves every
    statement that reads the same extents; the least recently used unused ones go. The
    folders live in memory (``/dev/shm``) where there is such a folder."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._root: str | None = None
        self._folders: OrderedDict[tuple[str, ...], str] = OrderedDict()
        self._users: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, files: list[str]) -> str:
        """A folder linking exactly ``files``; ``release`` it when the statement ends."""
        key = tuple(files)
        with self._lock:
            folder = self._folders.get(key)
            if folder is not None:
                self._folders.move_to_end(key)
                self._users[folder] += 1
                return folder
            if self._root is None:
                self._root = tempfile.mkdtemp(prefix="kyma-scans-", dir=_memory_folder())
                atexit.register(shutil.rmtree, self._root, True)
            root = self._root
        folder = tempfile.mkdtemp(dir=root)
        for i, path in enumerate(files):
            os.symlink(path, os.path.join(folder, f"{i}.parquet"))
        with self._lock:
            self._folders[key] = folder
            self._users[folder] = 1
            idle = [k for k, f in self._folders.items() if not self._users[f]]
            gone = [self._forget(k) for k in idle[: max(0, len(self._folders) - self.size)]]
        for old in gone:
            shutil.rmtree(old, ignore_errors=True)
        return folder

    def _forget(self, key: tuple[str, ...]) -> str:
        folder = self._folders.pop(key)
        del self._users[folder]
        return folder

    def release(self, folder: str) -> None:
        with self._lock:
            if folder in self._users:
                self._users[folder] -= 1

    @contextmanager
    def lease(self) -> Iterator[Callable[[list[str]], str]]:
        """``acquire`` for one statement: its folders are released when it ends."""
        held: list[str] = []

        def acquire(files: list[str]) -> str:
            held.append(self.acquire(files))
            return held[-1]

        try:
            yield acquire
        finally:
            for folder in held:
                self.release(folder)


def _memory_folder() -> str | None:
    """A folder in memory (tmpfs) when the system has one: a table of many extents means as
    many links per folder, cheap to make and remove there. None: the temporary folder."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


folders = ScanFolders()
Folders = Callable[[list[str]], str]
"""Gives the folder that links a list of extent files, for one statement."""


@dataclass
class _Group:
    """Extents whose columns are read alike: one listing scan."""

    footer: Footer
    paths: _path_scan.ExtentPaths
    blocks: list[int]
    files: list[str] = field(default_factory=list)  # object paths
    spans: list[_row_groups.Range] | None = field(default_factory=list)
    """The time ranges of every extent's kept row groups (None: some unknown)."""
    pruned: bool = False
    """Whether stage 3 pruned row groups of an extent: then the scan keeps ``spans`` only."""

    def add(
        self, pruned: list[_row_groups.Range] | None, kept: list[_row_groups.Range] | None
    ) -> None:
        """An extent's kept row groups' times: ``pruned`` when stage 3 pruned some."""
        self.pruned = self.pruned or pruned is not None
        found = pruned if pruned is not None else kept
        if self.spans is not None and found is not None:
            self.spans += found
        else:
            self.spans = None


def register(
    ctx: SessionContext,
    name: str,
    scan: TableScan,
    extents: list[ExtentRef],
    store: ObjectStore,
    fmt: SegmentFormat,
    folders: Folders,
    partitions: int,
    decoded: DecodedColumns | None = None,
    where: Expr | None = None,
) -> bool:
    """Register table ``name`` in ``ctx``: the surviving blocks of ``extents``, projected to
    ``scan.schema``; ``scan.stats`` counts stage 2 and 3. A scan without path columns whose
    columns fit ``decoded`` reads them from there (decoded once) instead of from Parquet.
    ``where``: only the rows it keeps (pushed into the Parquet scans). Whether it lists
    Parquet files (False: every row is in memory)."""
    groups: dict[tuple[tuple[str, ...], ...], _Group] = {}
    others: list[ExtentRef] = []
    kept: list[tuple[ExtentRef, Footer, list[int]]] = []
    deleting: list[ExtentRef] = []  # extents with deleted rows: no native scan drops them
    for entry in extents:
        checkpoint()
        # Every extent of a DELETE's scan, which needs each row's position, is read by
        # ``scan_blocks``; so are extents with deleted rows unless the decoded columns serve.
        footer = None if scan.rows else footer_of(store, fmt, entry.object_path)
        if footer is None:
            others.append(entry)
            continue
        blocks = footer.pruned(scan.predicate)
        if not blocks:
            scan.stats.blocks_total += entry.block_count
            continue
        names = footer.file_schema.names
        tokened = _token_filter.pruned(store, fmt, entry.object_path, names, scan.predicate, blocks)
        fine = _gram_filter.pruned(
            store, fmt, entry.object_path, names, scan.predicate, tokened, footer.block_stats
        )
        tokened = fine.blocks
        spans = None
        if tokened != blocks or fine.spans is not None:
            # DataFusion reads the kept row groups (pages) by their times alone
            spans = fine.spans or _row_groups.ranges(footer.block_stats, tokened)
            if spans is None or entry.deletes is not None:
                others.append(entry)
                continue
            if not tokened:
                scan.stats.blocks_total += entry.block_count
                scan.stats.blocks_after_stats += len(blocks)
                scan.stats.pages_searched += fine.pages
                continue
        stage2, blocks = len(blocks), tokened
        reads = _path_scan.plan_of(footer.shredded, footer.block_stats, scan.paths, blocks).reads
        if _residual.stripped_columns(names, [*_names(scan), *reads]):
            others.append(entry)  # a dynamic column stored stripped: the block reader rebuilds
            continue
        kept.append((entry, footer, blocks))
        if entry.deletes is not None:
            deleting.append(entry)
            continue
        scan.stats.blocks_total += entry.block_count
        scan.stats.blocks_after_stats += stage2
        scan.stats.blocks_after_tokens += len(blocks)
        scan.stats.pages_searched += fine.pages
        scan.stats.pages_after_grams += fine.pages_kept
        paths = _path_scan.plan_of(footer.shredded, footer.block_stats, scan.paths, blocks)
        _count(scan, footer, blocks, paths.reads)
        key = tuple(paths.source(p, blocks) for p in scan.paths)
        group = groups.setdefault(key, _Group(footer, paths, blocks))
        group.files.append(entry.object_path)
        group.add(spans, _row_groups.ranges(footer.block_stats, blocks))
    if decoded is not None and not scan.paths and decoded.admits(_decoded_bytes(scan, kept)):
        for entry, footer, blocks in kept:
            if entry.deletes is not None:  # counted here: ``scan_blocks`` does not read it
                scan.stats.blocks_total += entry.block_count
                scan.stats.blocks_after_stats += len(blocks)
                scan.stats.blocks_after_tokens += len(blocks)
                scan.stats.bytes_read += footer.decoded_bytes(set(_names(scan)), blocks)
        read = chain(
            (
                batch
                for entry, footer, blocks in kept
                for batch in _kept(scan, entry, footer, blocks, store, fmt, decoded)
            ),
            (batch.cast(scan.schema) for batch in scan_blocks(scan, others, store, fmt)),
        )
        frame = _memory(ctx, f"__kyma_blocks/{name}", scan.schema, read, partitions)
        frame = frame if where is None else frame.filter(where)
        ctx.register_table(_path_scan.quoted(name), frame.into_view())
        return False
    others += deleting
    frames = [
        _listing(ctx, f"{name}/{i}", scan, group, folders, store)
        for i, group in enumerate(groups.values())
    ]
    if others or not frames:
        tlm_batches = scan_blocks(scan, others, store, fmt)
        frames.append(_memory(ctx, f"__kyma_blocks/{name}", scan.schema, tlm_batches, partitions))
    frame = reduce(DataFrame.union, frames)
    frame = frame if where is None else frame.filter(where)
    ctx.register_table(_path_scan.quoted(name), frame.into_view())
    return bool(groups)


def _kept(
    scan: TableScan,
    entry: ExtentRef,
    footer: Footer,
    blocks: list[int],
    store: ObjectStore,
    fmt: SegmentFormat,
    decoded: DecodedColumns,
) -> Iterator[pa.RecordBatch]:
    """The extent's ``blocks`` from the decoded columns, without its deleted rows."""
    names = footer.file_schema.names
    deleted = deletes.positions(entry.deletes)
    if deleted is None:
        yield from decoded.batches(
            store, fmt, entry.object_path, names, scan.schema, blocks, footer.block_rows
        )
        return
    rows = deletes.live_rows(footer.block_rows, deleted)
    version = (entry.extent_id, deleted)
    for batch in decoded.batches(
        store, fmt, entry.object_path, names, scan.schema, blocks, rows, version
    ):
        scan.stats.rows_scanned += batch.num_rows
        yield batch


def _decoded_bytes(scan: TableScan, kept: list[tuple[ExtentRef, Footer, list[int]]]) -> int:
    """What the scanned columns of the extents in ``kept`` take decoded, every block."""
    read = set(scan.schema.names)
    return sum(footer.decoded_bytes(read) for _, footer, _ in kept)


def _names(scan: TableScan) -> list[str]:
    virtual = {p.name for p in scan.paths}
    return [n for n in scan.schema.names if n not in virtual]


def _count(scan: TableScan, footer: Footer, blocks: list[int], extra: list[str]) -> None:
    read = set(_names(scan)) | set(extra)
    scan.stats.rows_scanned += sum(footer.block_rows[b] for b in blocks)
    scan.stats.bytes_read += footer.decoded_bytes(read, blocks)


def _listing(
    ctx: SessionContext,
    name: str,
    scan: TableScan,
    group: _Group,
    folders: Folders,
    store: ObjectStore,
) -> DataFrame:
    names = _names(scan)
    extra = [c for c in group.paths.reads if c not in names]
    kept = group.pruned and group.spans is not None  # row groups kept by stage 3: by time
    if kept and _row_groups.TIME not in names + extra:
        extra.append(_row_groups.TIME)
    fields = [_viewed(scan.schema.field(n)) for n in names]
    fields += [group.footer.file_schema.field(c) for c in extra]
    hidden = f"__kyma_scan/{name}"
    files = [str(store.local_path(path)) for path in group.files]
    ctx.register_listing_table(_path_scan.quoted(hidden), folders(files), schema=pa.schema(fields))
    frame = ctx.table(_path_scan.quoted(hidden))
    if kept:
        assert group.spans is not None
        frame = frame.filter(_row_groups.time_filter(group.spans))
    if not scan.paths and not extra:
        return frame
    columns = [col(_path_scan.quoted(n)) for n in names]
    columns += [group.paths.expression(p, group.blocks).alias(p.name) for p in scan.paths]
    return frame.select(*columns)


def _viewed(field: pa.Field) -> pa.Field:
    """A text column as DataFusion's Parquet reader decodes it fastest: string views (no
    copy of each page's values into one buffer; GROUP BY, DISTINCT, comparisons and sorts
    on short strings read the inline prefix). Answers come back as plain strings
    (``_decoded.plain``). ClickBench, 10 M rows, cache off: BENCHMARKS.md, ``cb36``."""
    return field.with_type(pa.string_view()) if pa.types.is_string(field.type) else field


def _memory(
    ctx: SessionContext,
    name: str,
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
    partitions: int,
) -> DataFrame:
    """Extents without a native scan, read block by block into a memory table."""
    parts: list[list[pa.RecordBatch]] = [[] for _ in range(partitions)]
    for i, batch in enumerate(batches):
        checkpoint()
        parts[i % partitions].append(batch)
    parts = [p for p in parts if p] or [[pa.RecordBatch.from_pylist([], schema)]]
    ctx.register_record_batches(_path_scan.quoted(name), parts)
    return ctx.table(_path_scan.quoted(name))
