"""How the data source reaches kyma: its options, defaulted from kyma's environment.

Spark builds the data source, not kyma's composition layer, so the defaults come from the
same ``KYMA_*`` variables kyma's Settings reads (not its TOML file), on the driver: the
resolved values travel to the executors inside the pickled data source.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kyma.engine.catalog import Catalog, PostgresCatalog
from kyma.engine.errors import ConfigError
from kyma.engine.storage import ObjectStore
from kyma.engine.storage.config import StoreConfig

# option -> the environment variable that defaults it (kyma's Settings names)
ENVIRONMENT = {
    "catalog_url": "KYMA_CATALOG_URL",
    "object_store": "KYMA_OBJECT_STORE",
    "s3_endpoint_url": "KYMA_S3_ENDPOINT_URL",
    "s3_region": "KYMA_S3_REGION",
    "s3_access_key_id": "KYMA_S3_ACCESS_KEY_ID",
    "s3_secret_access_key": "KYMA_S3_SECRET_ACCESS_KEY",
    "cache_dir": "KYMA_CACHE_DIR",
}


@dataclass(frozen=True)
class KymaOptions:
    table: str
    catalog_url: str
    object_store: str
    cache_dir: str
    snapshot: int | None = None
    extents: frozenset[str] | None = None
    """Only these extents' object paths (``read_table``'s fallback for what Spark can't read)."""
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None

    @classmethod
    def resolve(cls, options: Mapping[str, str], environ: Mapping[str, str]) -> KymaOptions:
        """Spark's options first, then the environment, then kyma's defaults."""
        values = {k: options.get(k) or environ.get(env) or None for k, env in ENVIRONMENT.items()}
        table = options.get("table")
        if not table:
            raise ConfigError("the kyma data source needs a table: .option('table', 'logs')")
        if not values["catalog_url"]:
            raise ConfigError(
                "the kyma data source needs the catalog's Postgres URL:"
                " .option('catalog_url', 'postgresql://…') or KYMA_CATALOG_URL"
            )
        home = Path(environ.get("KYMA_HOME") or ".kyma").absolute()
        values["object_store"] = values["object_store"] or f"file://{home / 'objects'}"
        values["cache_dir"] = values["cache_dir"] or str(home / "cache")
        values["s3_region"] = values["s3_region"] or "us-east-1"
        snapshot = options.get("snapshot")
        try:
            pinned = None if snapshot in (None, "") else int(snapshot)
        except ValueError:
            raise ConfigError(
                f"option 'snapshot': expected a snapshot id, got {snapshot!r}"
            ) from None
        return cls(
            table=table,
            snapshot=pinned,
            extents=_extents(options.get("extents")),
            **values,  # type: ignore[arg-type]
        )

    def keeps(self, object_path: str) -> bool:
        """Whether the read covers this extent (every extent unless ``extents`` says)."""
        return self.extents is None or object_path in self.extents

    @contextmanager
    def catalog(self) -> Iterator[Catalog]:
        """A one-connection catalog for planning, closed afterwards."""
        catalog = PostgresCatalog.connect(self.catalog_url, pool_size=1)
        try:
            yield catalog
        finally:
            catalog.close()

    def store(self) -> ObjectStore:
        return StoreConfig(
            self.object_store,
            self.cache_dir,
            self.s3_endpoint_url,
            self.s3_region,
            self.s3_access_key_id,
            self.s3_secret_access_key,
        ).open()


def _extents(text: str | None) -> frozenset[str] | None:
    if not text:
        return None
    try:
        paths = json.loads(text)
    except ValueError:
        paths = None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"option 'extents': expected a JSON list of object paths, got {text!r}")
    return frozenset(paths)
