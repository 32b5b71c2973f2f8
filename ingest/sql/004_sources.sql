-- Ingest sources that run inside kyma (Kafka now; file-drop later): their definitions.
-- Where each has read up to lives in kyma.source_positions, keyed by the source's name.

CREATE TABLE kyma.sources (
    source_id  bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    type       text NOT NULL,
    table_name text NOT NULL,
    definition jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
