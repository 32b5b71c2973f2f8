"""Every way bytes arrive (REST NDJSON, OTLP, Kafka, file-drop, Spark jobs), funnelled into
one write path: coercion, evolution, idempotency, extents, commit."""
