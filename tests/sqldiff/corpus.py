"""The corpus files, and one file's run on a fresh kyma and a fresh Postgres database.

``CORPUS`` holds the vendored public files (compressed), ``CASES`` kyma's own; ``KNOWN``
cases exercise areas other work is changing, reported but not gated on.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import psycopg
import sqllogic
from differ import Outcome, Row, run_file

from kyma.engine.query.pg_numeric import is_numeric_text
from kyma.engine.storage.local import LocalStore
from kyma.services import wire_services
from kyma.settings import Settings
from kyma.stores import Stores

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
CASES = HERE / "cases"
KNOWN = ("known_",)
"""Case files whose names start so are about areas being changed elsewhere: not gated."""


def files() -> list[Path]:
    """Every corpus and case file, in a stable order."""
    return sorted(CORPUS.glob("*.test.gz")) + sorted(CASES.glob("*.test"))


def name_of(path: Path) -> str:
    return path.name.removesuffix(".gz").removesuffix(".test")


def run(path: Path, pg_server_url: str, limit: int | None = None) -> list[Outcome]:
    """The outcomes of one file (its first ``limit`` queries Postgres is meant to run)."""
    records = list(sqllogic.records(sqllogic.read(path)))
    if limit is not None:
        records = _first_queries(records, limit)
    with (
        _database(pg_server_url) as pg_url,
        _database(pg_server_url) as catalog_url,
        _kyma(catalog_url) as kyma,
    ):
        return run_file(name_of(path), records, kyma, pg_url)


def _first_queries(records: list[sqllogic.Record], limit: int) -> list[sqllogic.Record]:
    """The records up to the ``limit``-th query that runs (every statement before it kept)."""
    kept, queries = [], 0
    for record in records:
        if record.kind == "query" and record.runs:
            if queries == limit:
                break
            queries += 1
        kept.append(record)
    return kept


@contextmanager
def _database(pg_server_url: str) -> Iterator[str]:
    name = f"sqldiff_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        # Text compares by code point in kyma: Postgres's "C" collation does the same.
        admin.execute(  # type: ignore[call-overload]
            f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8'"
            " LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    base, _, _ = pg_server_url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # type: ignore[arg-type]


@contextmanager
def _kyma(catalog_url: str) -> Iterator:  # type: ignore[type-arg]
    """A kyma wired as ``kyma serve`` wires it; yields its runner of one statement."""
    home = Path(tempfile.mkdtemp(prefix="kyma-sqldiff-"))
    stores = Stores.open(catalog_url)
    settings = Settings(home=home / "home", catalog_url=catalog_url, block_rows=1024)
    services = wire_services(settings, stores, LocalStore(home / "objects"))

    def execute(sql: str) -> tuple[list[str], list[Row]]:
        table = services.query.execute(sql).table
        if table is None:
            return [], []
        columns = [
            [None if v is None else Decimal(v) for v in column.to_pylist()]
            if is_numeric_text(field)  # Postgres's text of each numeric: as psycopg reads it
            else column.to_pylist()
            for field, column in zip(table.schema, table.columns, strict=True)
        ]
        return table.column_names, list(zip(*columns, strict=True))

    try:
        yield execute
    finally:
        services.close()
        stores.close()
        shutil.rmtree(home, ignore_errors=True)
