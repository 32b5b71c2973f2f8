"""The engine: types, extent format, object storage, catalog, write transaction, queries.

It knows nothing of HTTP, Kafka or Postgres sources; everything else builds on it.
"""
