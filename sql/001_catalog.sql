-- The catalog: tables and their columns, snapshots, the extent manifest, the ingest ledger.
-- Everything lives in the schema "kyma" so an external catalog database stays tidy.

CREATE TABLE kyma.tables (
    table_id            bigserial PRIMARY KEY,
    name                text NOT NULL UNIQUE,
    created_at          timestamptz NOT NULL DEFAULT now(),
    current_snapshot_id bigint,
    options             jsonb NOT NULL DEFAULT '{}'
);

-- Schema only widens: columns are added, never dropped or retyped.
CREATE TABLE kyma.columns (
    table_id  bigint NOT NULL REFERENCES kyma.tables ON DELETE CASCADE,
    name      text NOT NULL,
    ordinal   int NOT NULL,
    type      text NOT NULL,
    nullable  boolean NOT NULL DEFAULT true,
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, name),
    UNIQUE (table_id, ordinal)
);

-- A table's snapshots form one chain: each commit's parent is the head it replaced, and
-- its id is drawn after reading that head, so ids grow along the chain.
CREATE TABLE kyma.snapshots (
    snapshot_id bigserial PRIMARY KEY,
    table_id    bigint NOT NULL REFERENCES kyma.tables ON DELETE CASCADE,
    parent_id   bigint,
    created_at  timestamptz NOT NULL DEFAULT now(),
    summary     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX snapshots_by_table ON kyma.snapshots (table_id, snapshot_id);

-- An extent belongs to snapshot S when added_snapshot_id <= S < removed_snapshot_id.
-- No foreign keys to snapshots: retention expires old snapshots while their extents live on.
CREATE TABLE kyma.manifest (
    extent_id           uuid PRIMARY KEY,
    table_id            bigint NOT NULL REFERENCES kyma.tables ON DELETE CASCADE,
    object_path         text NOT NULL UNIQUE,
    byte_size           bigint NOT NULL,
    row_count           bigint NOT NULL,
    block_count         int NOT NULL,
    min_ts              bigint,
    max_ts              bigint,
    column_stats        jsonb NOT NULL DEFAULT '{}',
    present_paths       text[] NOT NULL DEFAULT '{}',
    added_snapshot_id   bigint NOT NULL,
    removed_snapshot_id bigint
);
CREATE INDEX manifest_live ON kyma.manifest (table_id, added_snapshot_id)
    WHERE removed_snapshot_id IS NULL;

-- One row per applied idempotency key, written in the same transaction as its commit.
CREATE TABLE kyma.ingest_ledger (
    key         text PRIMARY KEY,
    table_name  text NOT NULL,
    body_hash   text,
    ack         jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ingest_ledger_age ON kyma.ingest_ledger (created_at);
