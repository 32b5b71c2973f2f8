-- Large tables' CDC snapshots run on Spark in chunks (ranges of the table's pages). The plan
-- is stored when the snapshot starts; the task that reads a chunk records its extents, rows
-- and the LSN of the snapshot it read under. A crashed snapshot resumes with the chunks that
-- have no extents yet; the final commit (one kyma snapshot) deletes the table's rows here.
-- Until then the extents listed here count as referenced for orphan GC.

CREATE TABLE kyma.connector_cdc_chunks (
    connector_id  bigint NOT NULL REFERENCES kyma.connectors ON DELETE CASCADE,
    source_table  text NOT NULL,
    chunk         int NOT NULL,
    first_page    bigint NOT NULL,
    end_page      bigint,            -- exclusive; NULL for the last chunk (to the table's end)
    snapshot_lsn  pg_lsn,            -- set with extents when the chunk is read
    rows_read     bigint,
    extents       jsonb,             -- [ExtentWriteResult as JSON], NULL while to do
    column_writes jsonb,             -- [ColumnWrite as JSON], for the column statistics
    PRIMARY KEY (connector_id, source_table, chunk)
);
