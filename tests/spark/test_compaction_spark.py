"""Compaction on Spark: groups rewritten by tasks, committed by the driver, same answers."""

from __future__ import annotations

import dataclasses

from compaction_helpers import answers, ingest

from kyma.engine.compaction import compact_table
from kyma.engine.spark.compaction import on_spark


def test_groups_are_rewritten_by_spark_tasks_and_committed_once_each(spark, services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    for i in range(8):
        ingest(services, i * 500, 500)
    before = answers(services)
    snapshots = len(services.catalog.snapshots("t"))
    jobs = len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))
    rewriter = on_spark(lambda: spark, services.jobs.store, "parquet", 1024)
    result = compact_table(
        services.catalog, services.store, services.format, "t", target_rows=2_000, rewriter=rewriter
    )
    assert (result.groups, result.extents_in, result.extents_out, result.rows) == (2, 8, 2, 4000)
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(None)) > jobs  # on Spark
    assert len(services.catalog.snapshots("t")) == snapshots + 2  # one commit per group
    assert len(services.catalog.live_extents("t")) == 2
    assert answers(services) == before
    assert (
        compact_table(
            services.catalog,
            services.store,
            services.format,
            "t",
            target_rows=2_000,
            rewriter=rewriter,
        ).groups
        == 0
    )


def test_services_compact_on_spark_when_a_master_is_set(spark, services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    for i in range(3):
        ingest(services, i * 100, 100)
    before = answers(services)
    jobs = len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))
    services.compact("t")  # no master: in process, no Spark job
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(None)) == jobs
    for i in range(3, 6):
        ingest(services, i * 100, 100)
    services.settings = dataclasses.replace(services.settings, spark_master="local[2]")
    result = services.compact("t")
    assert result.extents_in == 4 and result.rows == 600
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(None)) > jobs
    assert len(services.catalog.live_extents("t")) == 1
    assert answers(services)[1] == [
        {"host": f"h{h}", "c": 120, "s": sum(n for n in range(600) if n % 5 == h)} for h in range(5)
    ]
    assert answers(services)[0][:300] == before[0]
