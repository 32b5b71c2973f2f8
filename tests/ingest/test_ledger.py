"""The ingest ledger's sweeper (the ledger's commit payloads are tested through the write path)."""

from __future__ import annotations

import psycopg

from kyma.stores import Stores


def test_ledger_sweeper_deletes_entries_past_25_hours(stores: Stores) -> None:
    with psycopg.connect(stores.db.url, autocommit=True) as conn:
        for key, age in (("old", "26 hours"), ("edge", "24 hours"), ("new", "1 minute")):
            conn.execute(
                "INSERT INTO kyma.ingest_ledger (key, table_name, ack, created_at)"
                " VALUES (%s, 't', '{}', now() - %s::interval)",
                (key, age),
            )
    assert stores.ledger.sweep() == 1
    with psycopg.connect(stores.db.url) as conn:
        keys = {k for (k,) in conn.execute("SELECT key FROM kyma.ingest_ledger")}
    assert keys == {"edge", "new"}
