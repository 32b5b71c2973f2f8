-- What a file-drop source has done with each object it saw: ingested (in the same
-- transaction as the snapshot holding its rows, so a re-scan never ingests it twice, even
-- after the ingest ledger's keys expire) or failed, with the error. A file whose size or
-- modification time changes is looked at again.

CREATE TABLE kyma.source_files (
    source      text NOT NULL,
    object_key  text NOT NULL,
    size        bigint NOT NULL,
    modified    timestamptz NOT NULL,
    sha256      text,
    state       text NOT NULL CHECK (state IN ('ingested', 'failed')),
    rows        bigint,
    snapshot_id bigint,
    error       text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, object_key)
);
