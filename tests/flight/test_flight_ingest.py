"""ADBC's bulk ingest (``cursor.adbc_ingest``, Flight SQL ``CommandStatementIngest``) into
kyma tables through the one write path, and prepared statements' schemas.

The modes against Postgres as the oracle: the same ``adbc_ingest`` calls through ADBC's
Postgres driver into a real Postgres 15 and through Flight SQL into kyma answer the same
update counts, fail in the same places and leave the same rows. Then what only kyma has:
nested values as ``dynamic`` columns, an evolving table, one snapshot and one extent for a
stream of many small batches, and the schemas CreatePreparedStatement answers."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

import adbc_driver_manager
import adbc_driver_postgresql.dbapi
import pyarrow as pa
import pyarrow.flight as flight
import pytest

from kyma.flight import _messages as msg
from kyma.flight._commands import pack

UTC = dt.UTC
PARIS = dt.timezone(dt.timedelta(hours=2))
FIRST = pa.table(
    {
        "id": pa.array([1, 2, 3], pa.int64()),
        "small": pa.array([7, None, -7], pa.int16()),
        "score": pa.array([1.5, None, -0.25], pa.float64()),
        "ok": pa.array([True, False, None]),
        "name": pa.array(["a", "it's", None]),
        "at": pa.array(
            [dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), None, dt.datetime(1999, 12, 31)],
            pa.timestamp("us", tz="UTC"),
        ),
    }
)
SECOND = pa.table(
    {
        "id": pa.array([4], pa.int64()),
        "small": pa.array([1], pa.int16()),
        "score": pa.array([2.0]),
        "ok": pa.array([True]),
        "name": pa.array(["four"]),
        "at": pa.array([dt.datetime(2026, 6, 1, 12, tzinfo=PARIS)], pa.timestamp("us", tz="UTC")),
    }
)
COLUMNS = "id, small, score, ok, name, at"


@pytest.fixture
def postgres(module_catalog_url: str) -> Iterator[adbc_driver_manager.dbapi.Connection]:
    """ADBC's Postgres driver on a fresh database of the loopback Postgres (not kyma's)."""
    with adbc_driver_postgresql.dbapi.connect(module_catalog_url, autocommit=True) as conn:
        yield conn


def _calls(conn, table: str) -> list[object]:  # type: ignore[no-untyped-def]
    """The modes in turn, each call's update count (or the ADBC status of its error), then
    the rows left."""
    out: list[object] = []
    with conn.cursor() as cur:
        for data, mode in (
            (FIRST, "append"),  # no table: fails
            (FIRST, "create"),
            (SECOND, "create"),  # exists: fails
            (SECOND, "append"),
            (SECOND, "create_append"),
            (FIRST, "replace"),
            (SECOND, "create_append"),
        ):
            try:
                out.append((mode, cur.adbc_ingest(table, data, mode=mode)))
            except adbc_driver_manager.Error as e:
                out.append((mode, type(e).__name__))
        cur.execute(f"SELECT {COLUMNS} FROM {table} ORDER BY id")
        out.append(cur.fetch_arrow_table().to_pylist())
    return out


def test_ingest_modes_answer_as_postgres(postgres, adbc) -> None:  # type: ignore[no-untyped-def]
    got = _calls(adbc, "ingested")
    assert got == _calls(postgres, "ingested")
    assert got[1] == ("create", 3) and got[-2] == ("create_append", 1)
    assert [row["id"] for row in got[-1]] == [1, 2, 3, 4]  # replace kept FIRST only


def test_types_timestamps_and_nested_values_read_back_exactly(adbc) -> None:  # type: ignore[no-untyped-def]
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "f": pa.array([0.5, None], pa.float32()),
            "naive": pa.array([dt.datetime(2026, 3, 1, 8, 30), None], pa.timestamp("ms")),
            "tags": pa.array([["x", "y"], []], pa.list_(pa.string())),
            "attrs": pa.array([{"http": {"status": 200}, "k": "v"}, None]),
        }
    )
    with adbc.cursor() as cur:
        assert cur.adbc_ingest("nested", data, mode="create") == 2
        cur.execute("SELECT id, f, naive, tags, attrs FROM nested ORDER BY id")
        table = cur.fetch_arrow_table()
    assert table.column("id").to_pylist() == [1, 2]
    assert table.column("f").to_pylist() == [0.5, None]
    assert table.column("naive").to_pylist() == [dt.datetime(2026, 3, 1, 8, 30, tzinfo=UTC), None]
    assert table.column("tags").to_pylist() == [["x", "y"], []]
    attrs = table.column("attrs").to_pylist()
    assert json.loads(attrs[0]) == {"http": {"status": 200}, "k": "v"} and attrs[1] is None
    described = adbc.adbc_get_table_schema("nested")
    assert described.field("naive").type == pa.timestamp("ns", tz="UTC")
    assert described.field("attrs").type == pa.string()  # dynamic, answered as JSON text


def test_append_evolves_the_table_by_its_rule(adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        cur.adbc_ingest("grows", pa.table({"n": pa.array([1], pa.int64())}), mode="create")
        more = pa.table({"n": pa.array([2], pa.int64()), "extra": [5], "Not Safe": ["p"]})
        assert cur.adbc_ingest("grows", more, mode="append") == 1
        cur.execute("SELECT n, extra, props FROM grows ORDER BY n")
        rows = cur.fetchall()
    # a new field: a string column (the table's rule); a name no column may take: props
    assert rows == [(1, None, None), (2, "5", '{"Not Safe":"p"}')]


def test_many_small_batches_are_one_snapshot_of_one_extent(services, adbc) -> None:  # type: ignore[no-untyped-def]
    schema = pa.schema([("n", pa.int64())])
    batches = [
        pa.record_batch([pa.array(range(i, i + 10))], schema=schema) for i in range(0, 500, 10)
    ]
    with adbc.cursor() as cur:
        cur.adbc_ingest("batched", pa.table({"n": pa.array([-1], pa.int64())}), mode="create")
        before = services.catalog.get_table("batched").current_snapshot_id
        reader = pa.RecordBatchReader.from_batches(schema, batches)
        assert cur.adbc_ingest("batched", reader, mode="append") == 500
        cur.execute("SELECT count(*), count(DISTINCT n) FROM batched WHERE n >= 0")
        assert cur.fetchall() == [(500, 500)]
    after = services.catalog.get_table("batched").current_snapshot_id
    assert after == before + 1
    assert len(services.catalog.live_extents("batched")) == 2  # the first row's, and these


def test_refusals(adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error, match="binary has no kyma type") as bad:
            cur.adbc_ingest("blobs", pa.table({"b": pa.array([b"x"])}), mode="create")
        assert bad.value.status_code == adbc_driver_manager.AdbcStatusCode.INVALID_ARGUMENT
        cur.execute("SHOW TABLES")
        assert "blobs" not in cur.fetch_arrow_table().column(0).to_pylist()
        cur.adbc_ingest("typed_n", pa.table({"n": pa.array([1], pa.int64())}), mode="create")
        with pytest.raises(adbc_driver_manager.Error, match="'n'"):  # text into a long column
            cur.adbc_ingest("typed_n", pa.table({"n": ["one"]}), mode="append")
        with pytest.raises(adbc_driver_manager.Error, match="connector|schema"):
            cur.adbc_ingest("t", pa.table({"n": [1]}), mode="create", db_schema_name="nosuch")
        with pytest.raises(adbc_driver_manager.Error, match="temporary"):
            cur.adbc_ingest("t", pa.table({"n": [1]}), mode="create", temporary=True)


def test_prepared_statements_answer_their_schemas(adbc, flight_url: str) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        cur.adbc_ingest(
            "prepped", pa.table({"n": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]})
        )
        assert cur.adbc_prepare(
            "SELECT n, s FROM prepped WHERE n >= ? AND s <> ? LIMIT ?"
        ) == pa.schema([("$1", pa.int64()), ("$2", pa.string()), ("$3", pa.int64())])
        assert cur.adbc_prepare(
            "INSERT INTO prepped (s, n) VALUES (?, CAST(? AS int))"
        ) == pa.schema([("$1", pa.string()), ("$2", pa.int32())])
        cur.execute("SELECT n, s FROM prepped WHERE n >= ? ORDER BY n", parameters=(2,))
        assert cur.fetchall() == [(2, "b"), (3, "c")]
    client = flight.FlightClient(flight_url)
    request = msg.ActionCreatePreparedStatementRequest(
        query="SELECT s, n + 1 AS m FROM prepped WHERE n = $1"
    )
    (answer,) = client.do_action(flight.Action("CreatePreparedStatement", pack(request)))
    result = msg.ActionCreatePreparedStatementResult()
    _unpack(answer.body.to_pybytes(), result)
    dataset = pa.ipc.read_schema(pa.py_buffer(result.dataset_schema))
    assert [(f.name, f.type) for f in dataset] == [("s", pa.string()), ("m", pa.int64())]
    parameters = pa.ipc.read_schema(pa.py_buffer(result.parameter_schema))
    assert parameters == pa.schema([("$1", pa.int64())])
    with pytest.raises(pa.ArrowKeyError, match="nosuch"):  # planned now, as PREPARE does
        request = msg.ActionCreatePreparedStatementRequest(query="SELECT * FROM nosuch WHERE x = ?")
        list(client.do_action(flight.Action("CreatePreparedStatement", pack(request))))


def _unpack(data: bytes, message) -> None:  # type: ignore[no-untyped-def]
    from google.protobuf import any_pb2

    wrapper = any_pb2.Any()
    wrapper.ParseFromString(data)
    assert wrapper.Unpack(message)


def test_the_server_says_it_is_not_read_only(flight_url: str) -> None:
    client = flight.FlightClient(flight_url)
    read_only = msg.SqlInfo.FLIGHT_SQL_SERVER_READ_ONLY
    command = flight.FlightDescriptor.for_command(pack(msg.CommandGetSqlInfo(info=[read_only])))
    info = client.get_flight_info(command)
    table = client.do_get(info.endpoints[0].ticket).read_all()
    assert table.to_pylist() == [{"info_name": read_only, "value": False}]
