"""File drop as an ingest source type: NDJSON, CSV and Parquet files from a folder or S3."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kyma.engine.errors import ConfigError
from kyma.ingest.filedrop._spec import FileDropSpec, parse_filedrop_spec
from kyma.ingest.filedrop._worker import FileDropWorker, prepare_table
from kyma.ingest.source import Source, SourceWorker

if TYPE_CHECKING:
    from kyma.ingest.sources import SourceRegistry


class FileDropSource(Source):
    type_name = "filedrop"

    def parse(self, body: Any) -> FileDropSpec:
        return parse_filedrop_spec(body)

    def prepare(self, spec: FileDropSpec, sources: SourceRegistry) -> None:
        try:  # a bad path fails here, not later
            sources.open_store(spec.path, spec.s3_endpoint_url)
        except ConfigError as e:
            raise ConfigError(f"path: {e}; a file-drop source watches an existing folder") from e
        prepare_table(spec, sources.catalog)

    def worker(self, spec: FileDropSpec, sources: SourceRegistry) -> SourceWorker:
        store = sources.open_store(spec.path, spec.s3_endpoint_url)
        return FileDropWorker(
            spec, sources.catalog, sources.store.files, sources.write_path, store, sources.bulk_load
        )

    def status(
        self, spec: FileDropSpec, sources: SourceRegistry, worker: SourceWorker | None
    ) -> dict[str, Any]:
        files = sources.store.files.files(spec.name)
        return {
            "last_scan": getattr(worker, "last_scan", None),
            "files_ingested": sum(f.state == "ingested" for f in files),
            "files_failed": sum(f.state == "failed" for f in files),
            "files": [
                {
                    "key": f.key,
                    "state": f.state,
                    "size": f.size,
                    "rows": f.rows,
                    "snapshot_id": f.snapshot_id,
                    "sha256": f.sha256,
                    "error": f.error,
                }
                for f in files
            ],
        }
