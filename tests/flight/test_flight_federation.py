"""A federated Postgres table through Flight SQL: in the metadata as a FOREIGN TABLE under
its connector's catalog, and queried as ``<connector>.<schema>.<table>`` and ``live(...)``.

The source is the test catalog's own database (a schema ``shop`` kyma does not use), reached
over loopback without TLS, which is all this needs: pushdown and TLS are tested elsewhere.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest

SECRET_ENV = "KYMA_SECRET_TEST_FLIGHT_SOURCE"


@pytest.fixture
def shop(services, client, monkeypatch):  # type: ignore[no-untyped-def]
    url = urlsplit(services.catalog.url)
    with psycopg.connect(services.catalog.url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA shop")
        conn.execute("CREATE TABLE shop.orders (id bigint PRIMARY KEY, item text)")
        conn.execute("INSERT INTO shop.orders VALUES (1, 'tea'), (2, 'cake'), (3, 'jam')")
    monkeypatch.setenv(SECRET_ENV, url.password)
    answer = client.post(
        "/v1/connectors",
        json={
            "name": "src",
            "type": "postgres",
            "connection": {
                "url": f"postgres://{url.username}@{url.hostname}:{url.port}{url.path}",
                "secret_ref": f"$env:{SECRET_ENV}",
                "tls": "disabled",
                "allow_insecure": True,
            },
            "scope": {"include_schemas": ["shop"]},
        },
    )
    assert answer.status_code == 201, answer.get_json()


def test_federated_tables_through_flight_sql(shop, adbc) -> None:  # type: ignore[no-untyped-def]
    objects = {c["catalog_name"]: c for c in adbc.adbc_get_objects().read_all().to_pylist()}
    assert set(objects) == {"kyma", "src"}
    (schema,) = objects["src"]["catalog_db_schemas"]
    assert schema["db_schema_name"] == "shop"
    (table,) = schema["db_schema_tables"]
    assert (table["table_name"], table["table_type"]) == ("orders", "FOREIGN TABLE")
    assert [c["column_name"] for c in table["table_columns"]] == ["id", "item"]
    with adbc.cursor() as cur:
        cur.execute("SELECT item FROM src.shop.orders WHERE id >= ? ORDER BY id", parameters=(2,))
        assert cur.fetchall() == [("cake",), ("jam",)]
        cur.execute("SELECT count(*) AS n FROM live(src.shop.orders)")
        assert cur.fetchall() == [(3,)]
