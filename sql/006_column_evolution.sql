-- Typed schema evolution: which field an evolved column stands for (`evolved_from`, shown by
-- DESCRIBE), where its values sit in the JSON (`origin`: the path of keys with each step's
-- array dimension, and the value kind), and written-data statistics per column, updated in
-- the transaction of the commit that wrote the rows.

ALTER TABLE kyma.columns ADD COLUMN evolved_from text, ADD COLUMN origin jsonb;

CREATE TABLE kyma.column_stats (
    table_id          bigint NOT NULL REFERENCES kyma.tables ON DELETE CASCADE,
    name              text NOT NULL,
    rows              bigint NOT NULL DEFAULT 0,
    nulls             bigint NOT NULL DEFAULT 0,
    types_seen        text[] NOT NULL DEFAULT '{}',
    first_snapshot_id bigint,
    last_snapshot_id  bigint,
    PRIMARY KEY (table_id, name)
);
