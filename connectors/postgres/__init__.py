"""Postgres as a federated source: introspection, type mapping, capabilities, Arrow fetch."""

from kyma.connectors.postgres._connector import PostgresConnector

__all__ = ["PostgresConnector"]
