"""Helpers for the typed schema evolution tests: a typed table, batches in, columns out."""

from __future__ import annotations

import itertools

from http_helpers import post_lines, sql


def typed_table(client, name: str = "t", columns: str = "") -> None:  # type: ignore[no-untyped-def]
    sql(client, f"CREATE TABLE {name} ({columns}) WITH (schema_evolution = 'typed')")


_CLOCK = itertools.count(1)


def batches(client, *requests: list, table: str = "t") -> None:  # type: ignore[no-untyped-def]
    """Each request is one batch (the peer's "task time"); rows get increasing timestamps,
    so ``ORDER BY _timestamp`` is the order they were sent in."""
    for lines in requests:
        post_lines(client, table, [{**line, "_timestamp": next(_CLOCK)} for line in lines])


def evolved_columns(client, table: str = "t") -> dict[str, tuple[str, str | None]]:  # type: ignore[no-untyped-def]
    """{name: (type, evolved_from)} of the table's non-default columns."""
    rows = sql(client, f"DESCRIBE {table}")["rows"]
    return {name: (kind, origin) for name, kind, _, default, origin in rows if not default}


def column_values(client, table: str = "t") -> list[dict]:  # type: ignore[no-untyped-def]
    """Every row (in ingest order) as {column: value}, nulls left out."""
    answer = sql(client, f"SELECT * FROM {table} ORDER BY _timestamp")
    names = [c["name"] for c in answer["columns"]]
    return [
        {n: v for n, v in zip(names, row, strict=True) if v is not None and n != "_timestamp"}
        for row in answer["rows"]
    ]
