"""``SHOW PATHS FROM t.column``: the paths a dynamic column holds, with their types and
counts, from the catalog's manifests; authorized as a read of the table."""

from __future__ import annotations

import pytest
from http_helpers import post_lines

from kyma.engine.errors import NotFoundError, PermissionDeniedError, SchemaError, SqlError
from kyma.engine.query import READ, Access


@pytest.fixture
def kyma(client, services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (id bigint, doc dynamic)")
    services.query.execute("CREATE TABLE other (v bigint)")
    post_lines(
        client, "t", [{"id": i, "doc": {"http": {"method": "GET"}, "n": i}} for i in range(3)]
    )
    post_lines(client, "t", [{"id": 9, "doc": {"n": "x", "a/b c": [1]}}, {"id": 10, "doc": None}])
    return services.query


def test_paths_with_types_and_counts(kyma) -> None:
    for sql in ("SHOW PATHS FROM t.doc", "show paths from kyma.public.T.DOC"):
        answer = kyma.execute(sql)
        assert answer.table.to_pylist() == [
            {"path": '{"a/b c"}', "types": None, "extents": 1, "rows": 2},
            {"path": "{http}", "types": ["object"], "extents": 1, "rows": 3},
            {"path": "{http,method}", "types": ["string"], "extents": 1, "rows": 3},
            {"path": "{n}", "types": ["long", "string"], "extents": 2, "rows": 5},
        ]
    # a listed path reads back with #>>
    rows = kyma.execute("SELECT doc #>> '{http,method}' AS m FROM t WHERE id = 0").table
    assert rows.to_pylist() == [{"m": "GET"}]


def test_mistakes(kyma) -> None:
    with pytest.raises(NotFoundError, match="column 'nope' of table 't' does not exist"):
        kyma.execute("SHOW PATHS FROM t.nope")
    with pytest.raises(SchemaError, match="not dynamic"):
        kyma.execute("SHOW PATHS FROM t.id")
    with pytest.raises(NotFoundError, match="'missing'"):
        kyma.execute("SHOW PATHS FROM missing.doc")
    with pytest.raises(SqlError, match=r"SHOW PATHS FROM <table>\.<column>"):
        kyma.execute("SHOW PATHS FROM t")


def test_authorized_as_a_read_of_the_table(kyma) -> None:
    def only(table: str):  # type: ignore[no-untyped-def]
        def authorize(needs: Access) -> None:
            if needs.scope != READ or needs.tables is None or not needs.tables <= {table}:
                raise PermissionDeniedError(f"may not read {sorted(needs.tables or ['*'])}")

        return authorize

    assert kyma.execute("SHOW PATHS FROM public.t.doc", authorize=only("t")).table.num_rows == 4
    with pytest.raises(PermissionDeniedError, match=r"\['t'\]"):
        kyma.execute("SHOW PATHS FROM t.doc", authorize=only("other"))
