-- API tokens. Only the SHA-256 of a token is kept: tokens are 256 random bits, so a fast
-- hash is enough (nothing to brute-force), and the clear token is shown once, at creation.
-- scopes: 'read', 'ingest', 'admin' (admin implies the others); tables: the kyma tables a
-- read or ingest token is limited to, NULL for every table. A revoked token stays listed.

CREATE TABLE kyma.api_tokens (
    token_id     bigserial PRIMARY KEY,
    name         text,
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    scopes       text[] NOT NULL CHECK (scopes <@ ARRAY['read', 'ingest', 'admin']
                                        AND cardinality(scopes) > 0),
    tables       text[],
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
