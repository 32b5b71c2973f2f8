"""``spark.read.format("kyma")``: a Python data source over a kyma table.

Planning (on the driver's Python worker) runs stage 1 of the pruning cascade in the
catalog and plans one Spark partition per surviving extent. Each task then runs stages 2
and 3 on its extent -- block stats, then a projected read of the surviving blocks -- and
hands Spark Arrow batches. Pruning is conservative, so every pushed filter goes back to
Spark, which applies it to the rows kyma returns.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from kyma.engine.catalog import ExtentRef
from kyma.engine.errors import SchemaError
from kyma.engine.format.choice import segment_format
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.query._scan import ScanStats, TableScan, scan_blocks
from kyma.engine.spark._filters import to_predicate
from kyma.engine.spark._options import KymaOptions
from kyma.engine.spark._schema import arrow_target, spark_schema, to_spark_batch
from kyma.engine.types import Column, arrow_schema


@dataclass
class ExtentPartition(InputPartition):
    """One Spark task: one extent that survived the catalog stage."""

    object_path: str
    block_count: int
    deletes: bytes | None = None  # its deletion vector: these rows are not read


class KymaDataSource(DataSource):
    """Registered as ``kyma``; options ``table`` and how to reach kyma (see KymaOptions)."""

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.kyma = KymaOptions.resolve(options, os.environ)

    @classmethod
    def name(cls) -> str:
        return "kyma"

    def schema(self) -> StructType:
        return spark_schema(self._columns())

    def reader(self, schema: StructType) -> KymaReader:
        return KymaReader(self.kyma, self._columns(), schema)

    def _columns(self) -> tuple[Column, ...]:
        with self.kyma.catalog() as catalog:
            return catalog.get_table(self.kyma.table).columns


class KymaReader(DataSourceReader):
    """Pickled to every task: options, the projected columns and the predicate, no connections."""

    def __init__(self, kyma: KymaOptions, columns: tuple[Column, ...], schema: StructType):
        by_name = {c.name: c for c in columns}
        unknown = [name for name in schema.fieldNames() if name not in by_name]
        if unknown:
            raise SchemaError(f"table {kyma.table!r} has no columns {unknown}")
        self.kyma = kyma
        self.types = {c.name: c.type for c in columns}
        self.columns = tuple(by_name[name] for name in schema.fieldNames())
        self.schema = schema
        self.predicate: BlockPredicate | None = None
        self.extents_total = 0

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:  # noqa: N802 - Spark's name
        """Prune with what the filters imply; give every filter back to Spark."""
        self.predicate = to_predicate(filters, self.types)
        return filters

    def partitions(self) -> Sequence[InputPartition]:
        with self.kyma.catalog() as catalog:
            total, extents = catalog.prune_extents(
                self.kyma.table, self.kyma.snapshot, self.predicate
            )
        self.extents_total = total
        kept = [e for e in extents if self.kyma.keeps(e.object_path)]
        return [ExtentPartition(e.object_path, e.block_count, e.deletes) for e in kept]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ExtentPartition):  # no extent survived: Spark's filler
            return iter(())
        return read_extent(self, partition, ScanStats())

    def scan(self) -> TableScan:
        return TableScan(arrow_schema(self.columns), self.predicate)


def read_extent(
    reader: KymaReader, partition: ExtentPartition, stats: ScanStats
) -> Iterator[pa.RecordBatch]:
    """One task: the extent's blocks that survive block stats, as Spark batches.

    ``stats`` counts blocks, bytes and rows as the query engine's scans do.
    """
    target = arrow_target(reader.schema)
    dynamic = frozenset(c.name for c in reader.columns if c.type.name == "dynamic")
    scan = reader.scan()
    extent = ExtentRef("", partition.object_path, 0, 0, partition.block_count, partition.deletes)
    try:
        for batch in scan_blocks(scan, [extent], reader.kyma.store(), segment_format()):
            yield to_spark_batch(batch, dynamic, target)
    finally:
        stats.add(scan.stats)
