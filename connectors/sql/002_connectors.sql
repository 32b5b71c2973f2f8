-- Connector definitions: sources kyma federates (and, later, syncs). Secrets never live
-- here: a definition holds a secret_ref ("$env:NAME" or "file:/path") resolved at connect time.

CREATE TABLE kyma.connectors (
    connector_id    bigserial PRIMARY KEY,
    name            text NOT NULL UNIQUE,
    type            text NOT NULL,
    definition      jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Set when the connector must not run (e.g. 'tls_failed: …'); cleared by an enable.
    disabled_reason text,
    last_error      text,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
