"""Arrow Flight SQL against a real server in this process, through real clients: ADBC's
Flight SQL driver (what BI tools and Python use) and pyarrow's plain Flight client sending
the spec's messages."""

from __future__ import annotations

import subprocess
import sys

import adbc_driver_manager
import pyarrow as pa
import pyarrow.flight as flight
import pytest
from http_helpers import post_lines, sql

from kyma.flight._commands import pack
from kyma.flight._messages import CommandGetCatalogs, CommandStatementQuery
from kyma.flight._server import BATCH_ROWS


@pytest.fixture
def events(client):  # type: ignore[no-untyped-def]
    sql(client, "CREATE TABLE events (x long, name string)")
    rows = [{"x": i, "name": f"n{i}"} for i in range(10)] + [{"x": 10, "name": "o'brien"}]
    post_lines(client, "events", rows)
    return client


def test_statement_query(events, adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        cur.execute("SELECT x, name FROM events WHERE x < 3 ORDER BY x")
        assert cur.fetchall() == [(0, "n0"), (1, "n1"), (2, "n2")]
        cur.execute("SELECT count(*) AS n FROM events")
        table = cur.fetch_arrow_table()
    assert table.column_names == ["n"] and table.column("n").to_pylist() == [11]


def test_ddl_and_show_tables_through_flight(client, adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        cur.execute("CREATE TABLE made_by_flight (v real)")
        cur.fetchall()
        cur.execute("SHOW TABLES")
        names = cur.fetch_arrow_table().column(0).to_pylist()
        cur.execute("INSERT INTO made_by_flight VALUES (0.1)")
        cur.fetchall()
        cur.execute("SELECT v, v * 3 AS w FROM made_by_flight")
        table = cur.fetch_arrow_table()
    assert "made_by_flight" in names
    # SQL's real is Postgres's float4: Arrow float32; real times an integer is a double
    assert [f.type for f in table.schema] == [pa.float32(), pa.float64()]
    assert table.schema.field("v").metadata[b"ARROW:FLIGHT:SQL:TYPE_NAME"] == b"real"
    assert table.to_pylist() == [{"v": 0.10000000149011612, "w": 0.30000000447034836}]


def test_parameters_bind_as_typed_literals(events, adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        cur.execute("SELECT name FROM events WHERE x = ?", parameters=(5,))
        assert cur.fetchall() == [("n5",)]
        cur.execute("SELECT x FROM events WHERE name = ?", parameters=("o'brien",))
        assert cur.fetchall() == [(10,)]
        # A value that would be SQL if pasted in stays a string.
        cur.execute("SELECT x FROM events WHERE name = ?", parameters=("x' OR '1'='1",))
        assert cur.fetchall() == []
        cur.execute("SELECT x FROM events WHERE x BETWEEN $1 AND $2 ORDER BY x", parameters=(2, 3))
        assert cur.fetchall() == [(2,), (3,)]


def test_get_objects_lists_catalog_schema_tables_and_columns(events, adbc) -> None:  # type: ignore[no-untyped-def]
    objects = adbc.adbc_get_objects().read_all().to_pylist()
    catalogs = {c["catalog_name"]: c for c in objects}
    assert "kyma" in catalogs
    schemas = {s["db_schema_name"]: s for s in catalogs["kyma"]["catalog_db_schemas"]}
    tables = {t["table_name"]: t for t in schemas["public"]["db_schema_tables"]}
    assert tables["events"]["table_type"] == "TABLE"
    columns = [c["column_name"] for c in tables["events"]["table_columns"]]
    assert {"x", "name", "_timestamp"} <= set(columns)


def test_table_schema_and_types(events, adbc) -> None:  # type: ignore[no-untyped-def]
    schema = adbc.adbc_get_table_schema("events")
    assert schema.field("x").type == pa.int64()
    assert schema.field("name").type == pa.string()
    assert set(adbc.adbc_get_table_types()) == {"TABLE", "FOREIGN TABLE"}


def test_dynamic_values_are_json_and_columns_name_their_types(client, adbc) -> None:  # type: ignore[no-untyped-def]
    sql(client, "CREATE TABLE typed (n long, v vector(2), attributes dynamic)")
    rows = [{"n": 1, "v": [1.0, 2.0], "attributes": {"http": {"method": "GET"}, "k": [1, 2]}}]
    post_lines(client, "typed", rows + [{"n": 2, "v": [0.5, 0.5]}])
    with adbc.cursor() as cur:
        cur.execute("SELECT n, attributes, _timestamp FROM typed ORDER BY n")
        table = cur.fetch_arrow_table()
    assert table.column("attributes").to_pylist() == ['{"http":{"method":"GET"},"k":[1,2]}', None]
    names = {f.name: f.metadata[b"ARROW:FLIGHT:SQL:TYPE_NAME"] for f in table.schema}
    assert names == {
        "n": b"bigint",
        "attributes": b"jsonb",
        "_timestamp": b"timestamp with time zone",
    }
    objects = adbc.adbc_get_objects(table_name_filter="typed").read_all().to_pylist()
    (catalog,) = [c for c in objects if c["catalog_name"] == "kyma"]
    (schema,) = [s for s in catalog["catalog_db_schemas"] if s["db_schema_name"] == "public"]
    (table_info,) = schema["db_schema_tables"]
    types = {c["column_name"]: c["xdbc_type_name"] for c in table_info["table_columns"]}
    assert types["n"] == "bigint" and types["attributes"] == "jsonb"
    assert types["v"] == "real[]"
    assert adbc.adbc_get_table_schema("typed").field("attributes").type == pa.string()


def test_sql_info_names_the_server(adbc) -> None:  # type: ignore[no-untyped-def]
    info = adbc.adbc_get_info()
    assert info["vendor_name"] == "kyma"
    assert info["vendor_version"] == "0.1.0"


def test_a_large_result_streams_in_batches(client, adbc) -> None:  # type: ignore[no-untyped-def]
    sql(client, "CREATE TABLE digits (d long)")
    post_lines(client, "digits", [{"d": i} for i in range(1000)])
    with adbc.cursor() as cur:
        cur.execute("SELECT a.d * 1000 + b.d AS n FROM digits a CROSS JOIN digits b")
        reader = cur.fetch_record_batch()
        rows = batches = total = 0
        for batch in reader:
            batches += 1
            rows += batch.num_rows
            total += pa.compute.sum(batch.column(0)).as_py() or 0
    assert rows == 1_000_000
    assert batches >= 1_000_000 // BATCH_ROWS
    assert total == sum(range(1_000_000))


def test_errors_carry_kymas_message(events, adbc) -> None:  # type: ignore[no-untyped-def]
    with adbc.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error, match="syntax error") as bad_sql:
            cur.execute("SELEC x FROM events")
        assert "unknown word 'SELEC' (did you mean SELECT?)" in str(bad_sql.value)
        assert bad_sql.value.status_code == adbc_driver_manager.AdbcStatusCode.INVALID_ARGUMENT
        assert "_parse.py" not in str(bad_sql.value)  # no engine traceback crosses the wire
        with pytest.raises(adbc_driver_manager.Error, match="'nope'") as missing:
            cur.execute("SELECT * FROM nope")
        assert missing.value.status_code == adbc_driver_manager.AdbcStatusCode.NOT_FOUND
        with pytest.raises(adbc_driver_manager.Error, match="parameter"):
            cur.execute("SELECT x FROM events WHERE x = ? AND name = ?", parameters=(1,))
        cur.execute("SELECT 1 AS one")  # the connection still works
        assert cur.fetchall() == [(1,)]


def test_plain_flight_client(events, flight_url: str) -> None:  # type: ignore[no-untyped-def]
    """GetFlightInfo then DoGet on its ticket, as any Flight SQL client does underneath."""

    def rows(raw: flight.FlightClient, command: object) -> pa.Table:
        info = raw.get_flight_info(flight.FlightDescriptor.for_command(pack(command)))
        return raw.do_get(info.endpoints[0].ticket).read_all()

    with flight.connect(flight_url) as raw:
        query = CommandStatementQuery(query="SELECT x FROM events WHERE x >= 8 ORDER BY x")
        table = rows(raw, query)
        assert table.column("x").to_pylist() == [8, 9, 10]
        catalogs = rows(raw, CommandGetCatalogs())
        assert catalogs.column("catalog_name").to_pylist() == ["kyma"]


def test_filters_and_statement_schema(events, client, adbc, flight_url: str) -> None:  # type: ignore[no-untyped-def]
    sql(client, "CREATE TABLE other (v real)")
    objects = adbc.adbc_get_objects(depth="tables", table_name_filter="ev%").read_all()
    names = [
        t["table_name"]
        for c in objects.to_pylist()
        for s in c["catalog_db_schemas"] or []
        for t in s["db_schema_tables"] or []
    ]
    assert names == ["events"]
    command = CommandStatementQuery(query="SELECT x, name FROM events")
    with flight.connect(flight_url) as raw:
        schema = raw.get_schema(flight.FlightDescriptor.for_command(pack(command))).schema
    assert schema.names == ["x", "name"]


def test_a_taken_port_is_a_config_error(services, flight_url: str) -> None:  # type: ignore[no-untyped-def]
    from kyma.engine.errors import ConfigError
    from kyma.flight import start_flight_server

    port = int(flight_url.rsplit(":", 1)[1])
    with pytest.raises(ConfigError, match="KYMA_FLIGHT_PORT"):
        start_flight_server(services, "127.0.0.1", port)


def test_the_server_needs_no_flightsql_package() -> None:
    """The Flight SQL messages are kyma's own: the server imports with ``flightsql`` blocked."""
    code = "import sys; sys.modules['flightsql'] = None; import kyma.flight._server"
    subprocess.run([sys.executable, "-c", code], check=True)
