"""Ingest source types by name: adding a source type is its folder plus one line here."""

from __future__ import annotations

from kyma.ingest.filedrop import FileDropSource
from kyma.ingest.kafka import KafkaSource
from kyma.ingest.source import Source

SOURCE_TYPES: dict[str, Source] = {
    source.type_name: source
    for source in (
        KafkaSource(),
        FileDropSource(),
    )
}
