"""The engine catalog's DDL (tables, columns, snapshots, manifest, ingest ledger, column
statistics) as numbered migrations. Stores keep theirs beside their code (``*/sql/``)."""
