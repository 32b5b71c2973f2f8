"""File-drop ingest: NDJSON, CSV and Parquet files from a local folder or an S3 prefix."""

from kyma.ingest.filedrop._source import FileDropSource
from kyma.ingest.filedrop._spec import FileDropSpec, parse_filedrop_spec
from kyma.ingest.filedrop._worker import BulkLoad, FileDropWorker, prepare_table

__all__ = [
    "BulkLoad",
    "FileDropSource",
    "FileDropSpec",
    "FileDropWorker",
    "parse_filedrop_spec",
    "prepare_table",
]
