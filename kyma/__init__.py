"""kyma: a SQL engine for event data that also federates and mirrors Postgres.

This package is the composition layer (settings, CLI, server, embedded runtime). The
engine, ingest paths and connectors install as ``kyma.engine``, ``kyma.ingest`` and
``kyma.connectors`` from the repository's top-level folders.
"""

__version__ = "0.1.0"
