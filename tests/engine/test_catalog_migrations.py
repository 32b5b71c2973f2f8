"""Migrations: every owner's files apply once, in version order, whoever opens the database
first; a catalog made before the stores had their own folders opens unchanged."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from kyma.engine.catalog import ENGINE_MIGRATIONS, CatalogDatabase, Migrations, PostgresCatalog
from kyma.engine.catalog._migrate import migrate, ordered
from kyma.engine.errors import ConfigError
from kyma.engine.types import Column, KymaType
from kyma.stores import MIGRATIONS, Stores

# Every migration, in the order a catalog made by kyma before the split applied them.
BEFORE_THE_SPLIT = [
    (1, "001_catalog.sql"),
    (2, "002_connectors.sql"),
    (3, "003_source_positions.sql"),
    (4, "004_sources.sql"),
    (5, "005_source_files.sql"),
    (6, "006_column_evolution.sql"),
    (7, "007_api_tokens.sql"),
    (8, "008_cdc_state.sql"),
    (9, "009_cdc_snapshot_chunks.sql"),
    (10, "010_extent_format.sql"),
    (11, "011_manifest_scale.sql"),
    (12, "012_long_set_keys.sql"),
]
# ... and every one since.
EVERY = [
    *BEFORE_THE_SPLIT,
    (13, "013_large_sets_unindexed.sql"),
    (14, "014_views.sql"),
    (15, "015_deletes.sql"),
    (16, "016_matviews.sql"),
]


def _recorded(url: str) -> list[tuple[int, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT version, name FROM kyma.schema_migrations ORDER BY 1"
        ).fetchall()


def test_migrations_apply_once_in_version_order(catalog_url: str) -> None:
    first = Stores.open(catalog_url)
    second = Stores.open(catalog_url)
    try:
        assert first.db.migrations_applied == [name for _, name in EVERY]
        assert second.db.migrations_applied == []
        assert _recorded(catalog_url) == EVERY
    finally:
        first.close()
        second.close()


def test_a_catalog_made_before_the_split_opens_unchanged(catalog_url: str) -> None:
    """The old code applied every file of one folder in version order: the same files."""
    with psycopg.connect(catalog_url, autocommit=True) as conn:
        assert migrate(conn, MIGRATIONS) == [name for _, name in EVERY]
        conn.execute(
            "INSERT INTO kyma.connectors (name, type, definition) VALUES ('pg', 'postgres', '{}')"
        )
        conn.execute(
            "INSERT INTO kyma.sources (name, type, table_name, definition)"
            " VALUES ('s', 'kafka', 't', '{}')"
        )
    stores = Stores.open(catalog_url)
    try:
        assert stores.db.migrations_applied == []
        assert stores.connectors.get("pg").type == "postgres"
        assert [r.name for r in stores.sources.list_all()] == ["s"]
        stores.catalog.create_table("t", [Column("n", KymaType("long"))])
        assert stores.catalog.get_table("t").column("n") is not None
    finally:
        stores.close()
    assert _recorded(catalog_url) == EVERY


def test_an_engine_alone_applies_its_own_and_stores_add_theirs(catalog_url: str) -> None:
    catalog = PostgresCatalog.connect(catalog_url)
    try:
        assert catalog.db.migrations_applied == [
            "001_catalog.sql",
            "006_column_evolution.sql",
            "010_extent_format.sql",
            "011_manifest_scale.sql",
            "012_long_set_keys.sql",
            "013_large_sets_unindexed.sql",
            "014_views.sql",
            "015_deletes.sql",
            "016_matviews.sql",
        ]
    finally:
        catalog.close()
    stores = Stores.open(catalog_url)
    try:
        assert stores.db.migrations_applied == [
            "002_connectors.sql",
            "003_source_positions.sql",
            "004_sources.sql",
            "005_source_files.sql",
            "007_api_tokens.sql",
            "008_cdc_state.sql",
            "009_cdc_snapshot_chunks.sql",
        ]
    finally:
        stores.close()
    assert _recorded(catalog_url) == EVERY


def test_a_store_opened_on_a_bare_database_brings_what_it_needs(catalog_url: str) -> None:
    from kyma.connectors.cdc_state import CdcStore

    db = CatalogDatabase(catalog_url)
    try:
        CdcStore(db)  # CDC state references connector records: both apply, in order
        assert [n for _, n in _recorded(catalog_url)] == [
            "002_connectors.sql",
            "008_cdc_state.sql",
            "009_cdc_snapshot_chunks.sql",
        ]
    finally:
        db.close()


def test_a_version_held_by_two_owners_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "clash" / "sql").mkdir(parents=True)
    (tmp_path / "clash" / "__init__.py").write_text("")
    (tmp_path / "clash" / "sql" / "006_other.sql").write_text("SELECT 1;")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="'006_column_evolution.sql' and '006_other.sql'"):
        ordered([ENGINE_MIGRATIONS, Migrations("clash")])
