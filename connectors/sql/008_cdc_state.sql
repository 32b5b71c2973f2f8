-- Postgres CDC sync: where each connector's replication slot and each synced table stand.
-- A table's cursor (the end LSN of the last source transaction its kyma table holds) moves
-- in the same transaction as the extent commit holding those changes; confirmed_lsn (every
-- table holds everything up to it) moves after all of a batch's commits, and only then is
-- the source's slot advanced. A worker claims a connector by bumping its epoch; a commit
-- carrying an older epoch (a paused zombie) is rejected.

CREATE TABLE kyma.connector_cdc (
    connector_id  bigint PRIMARY KEY REFERENCES kyma.connectors ON DELETE CASCADE,
    slot_name     text NOT NULL,
    consistent_lsn pg_lsn,            -- where the slot's exported snapshot stands
    confirmed_lsn pg_lsn,             -- every synced table holds every change up to here
    epoch         bigint NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE kyma.connector_cdc_tables (
    connector_id     bigint NOT NULL REFERENCES kyma.connectors ON DELETE CASCADE,
    source_table     text NOT NULL,   -- schema.table at the source
    kyma_table       text NOT NULL,
    primary_key      text[] NOT NULL, -- information_schema order
    phase            text NOT NULL DEFAULT 'snapshot',  -- 'snapshot' | 'streaming'
    cursor_lsn       pg_lsn,
    rows_snapshotted bigint NOT NULL DEFAULT 0,
    changes_applied  bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_id, source_table)
);
