"""Table names as Postgres spells them: ``public.t`` and ``kyma.public.t`` are kyma's table
``t`` wherever a table is named; other schemas do not exist (42P01, 3F000 to create in)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import NotFoundError, PermissionDeniedError, UndefinedSchemaError
from kyma.engine.query import READ, Access


def _ingest(services, table: str, values: list[int]) -> None:
    batch = pa.record_batch({"v": pa.array(values, pa.int64())})
    services.write_path.ingest_batches(table, [batch], source="test")


@pytest.fixture
def kyma(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (v long)")
    services.query.execute('CREATE TABLE "Mixed" (v long)')
    services.query.execute("CREATE TABLE other (v long)")
    _ingest(services, "t", [1, 2, 3])
    _ingest(services, "Mixed", [7])
    _ingest(services, "other", [2, 3])
    return services.query


def _rows(engine, sql: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [tuple(row.values()) for row in engine.execute(sql).table.to_pylist()]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT sum(v) FROM public.t",
        "SELECT sum(v) FROM kyma.public.t",
        "SELECT sum(v) FROM PUBLIC.T",
        'SELECT sum(v) FROM "public"."t"',
        "SELECT sum(public.t.v) FROM public.t",
        "SELECT sum(kyma.public.t.v) FROM kyma.public.t",
        "SELECT sum(x.v) FROM public.t AS x",
        "SELECT sum(v) FROM (SELECT v FROM public.t) AS s",
        "SELECT sum(t.v) FROM public.t JOIN public.other o ON o.v = t.v OR true WHERE o.v = 2",
        "SELECT sum(v) FROM t WHERE v IN (SELECT v FROM kyma.public.t)",
        "WITH w AS (SELECT v FROM public.t) SELECT sum(v) FROM w",
    ],
)
def test_public_names_read_kyma_tables(kyma, sql: str) -> None:
    assert _rows(kyma, sql) == [(6,)]


def test_quoted_names_keep_their_case(kyma) -> None:
    assert _rows(kyma, 'SELECT v FROM public."Mixed"') == [(7,)]
    with pytest.raises(NotFoundError, match="'mixed'"):
        kyma.execute("SELECT v FROM public.Mixed")


def test_insert_describe_and_time_travel(kyma, services) -> None:
    snapshot = services.catalog.get_table("t").current_snapshot_id
    kyma.execute("INSERT INTO public.t (v) VALUES (10)")
    kyma.execute("INSERT INTO kyma.public.t (v) SELECT v FROM public.other WHERE v = 3")
    assert _rows(kyma, "SELECT sum(v) FROM public.t") == [(19,)]
    assert _rows(kyma, f"SELECT sum(v) FROM public.t AS OF SNAPSHOT {snapshot}") == [(6,)]
    described = kyma.execute("DESCRIBE kyma.public.t").table.to_pylist()
    assert "v" in [row["name"] for row in described]


@pytest.mark.parametrize(
    ("sql", "message", "sqlstate"),
    [
        ("SELECT * FROM nosuch.t", 'relation "nosuch.t" does not exist', "42P01"),
        ("SELECT * FROM kyma.nosuch.t", 'relation "kyma.nosuch.t" does not exist', "42P01"),
        ('SELECT * FROM "Public".t', 'relation "Public.t" does not exist', "42P01"),
        ("INSERT INTO nosuch.t VALUES (1)", 'relation "nosuch.t" does not exist', "42P01"),
        ("CREATE TABLE nosuch.u (v bigint)", 'schema "nosuch" does not exist', "3F000"),
    ],
)
def test_other_schemas_do_not_exist(kyma, sql: str, message: str, sqlstate: str) -> None:
    with pytest.raises(NotFoundError) as raised:
        kyma.execute(sql)
    assert str(raised.value) == message
    assert status(raised.value, "sqlstate") == sqlstate
    assert isinstance(raised.value, UndefinedSchemaError) == (sqlstate == "3F000")


def test_a_token_for_t_reads_public_t_and_nothing_else(kyma) -> None:
    def only_t(needs: Access) -> None:
        if needs.scope != READ or not (needs.tables or set()) <= {"t"}:
            raise PermissionDeniedError(f"may not read {sorted(needs.tables or [])}")

    assert kyma.execute("SELECT sum(v) FROM kyma.public.t", authorize=only_t).table.num_rows == 1
    for sql in ("SELECT v FROM public.other", "SELECT t.v FROM t JOIN public.other o ON true"):
        with pytest.raises(PermissionDeniedError, match="other"):
            kyma.execute(sql, authorize=only_t)
