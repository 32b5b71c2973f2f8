"""A source role whose defaults would change what kyma's SQL means: standard_conforming_strings
off, a search_path that shadows built-ins, other date and interval styles, another time zone.
Kyma's answers stay Postgres's (with the standard settings), and a literal stays a literal."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import psycopg
import pytest
from http_helpers import sql
from psycopg import sql as pgsql
from serve_helpers import Serve, request
from source_postgres import run_in_postgres

SECRET_ENV = "KYMA_SECRET_TEST_LOOSE"
ROLE_DEFAULTS = {
    "standard_conforming_strings": "off",
    "search_path": "evil, pg_catalog, public",  # a list, unquoted
    "DateStyle": "'SQL, DMY'",
    "IntervalStyle": "sql_standard",
    "TimeZone": "'Asia/Kolkata'",
}


@pytest.fixture(scope="module")
def loose_role(source_db) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Role ``loose`` on ``fed`` with ROLE_DEFAULTS, and a schema ``evil`` that shadows lower()."""
    password = secrets.token_urlsafe(16)
    with psycopg.connect(source_db.admin_url, autocommit=True) as admin:
        create = pgsql.SQL("CREATE ROLE loose LOGIN NOSUPERUSER PASSWORD {}")
        admin.execute(create.format(pgsql.Literal(password)))
        admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO loose")
        admin.execute("CREATE SCHEMA evil")
        admin.execute("GRANT USAGE ON SCHEMA evil TO loose")
        admin.execute(
            "CREATE FUNCTION evil.lower(text) RETURNS text LANGUAGE sql AS $$ SELECT 'pwned' $$"
        )
        for setting, value in ROLE_DEFAULTS.items():
            admin.execute(f"ALTER ROLE loose SET {setting} = {value}")
    try:
        yield password
    finally:
        with psycopg.connect(source_db.admin_url, autocommit=True) as admin:
            admin.execute("DROP SCHEMA evil CASCADE")
            admin.execute("DROP OWNED BY loose")
            admin.execute("DROP ROLE loose")


@pytest.fixture
def src(client, source_db, loose_role, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(SECRET_ENV, loose_role)
    url = source_db.url.replace("//app@", "//loose@")
    connection = {"url": url, "secret_ref": f"$env:{SECRET_ENV}"}
    answer = client.post(
        "/v1/connectors", json={"name": "src", "type": "postgres", "connection": connection}
    )
    assert answer.status_code == 201 and answer.get_json()["state"] == "ready", answer.get_json()
    return url


def test_the_role_really_has_the_loose_defaults(source_db, src, loose_role) -> None:
    (row,) = run_in_postgres(
        src,
        "SELECT current_setting('standard_conforming_strings'), length('a\\b'), lower('A')",
        password=loose_role,
    )
    assert row == ("off", 2, "pwned")  # a plain 'a\b' is an escape string (a, backspace) here


@pytest.mark.parametrize("name", ["back\\slash", "C:\\temp\\new", "a\\%b"])
def test_backslash_literals_mean_what_postgres_means(client, source_db, src, name) -> None:
    query = f"SELECT id FROM public.items WHERE name = '{name}' ORDER BY id"
    expected = run_in_postgres(source_db.url, query, password=source_db.password)
    assert expected  # the seed holds these names
    answer = sql(client, query.replace("public.items", "src.public.items"))
    assert [tuple(r) for r in answer["rows"]] == expected
    (summary,) = answer["pushdown_summary"]
    assert "E'" in summary["sql"]  # written as an escape string, the same under any setting


def test_an_injection_through_a_literal_stays_a_literal(client, source_db, src) -> None:
    query = "SELECT count(*) FROM src.public.items WHERE name = 'x\\'' OR 1=1 --'"
    assert sql(client, query)["rows"] == [[0]]
    like = "SELECT count(*) FROM public.items WHERE name LIKE 'a\\%b'"
    expected = run_in_postgres(source_db.url, like, password=source_db.password)
    assert expected[0][0] > 0
    assert sql(client, like.replace("public.", "src.public."))["rows"] == [list(expected[0])]


def test_built_ins_are_not_shadowed_by_the_roles_search_path(client, source_db, src) -> None:
    answer = sql(client, "SELECT lower(name) AS l FROM src.public.items WHERE id = 1")
    assert answer["rows"] == [["apple"]]


def test_every_session_pins_the_settings(services, src) -> None:
    """Both kinds of session: psycopg's (introspection) and the ADBC pool's (queries)."""
    connector = services.connectors.connector("src")
    probe = (
        "SELECT current_setting('standard_conforming_strings'), current_setting('DateStyle'),"
        " current_setting('IntervalStyle'), current_setting('TimeZone'),"
        " current_setting('search_path')"
    )
    with psycopg.connect(**connector.libpq_params()) as conn:
        (introspection,) = conn.execute(probe).fetchall()
    with connector.pool.connection() as conn, conn.cursor() as cur:
        cur.execute(probe)
        (query,) = cur.fetchall()
    assert introspection[:4] == query[:4] == ("on", "ISO, YMD", "postgres", "UTC")
    assert query[4] == "pg_catalog, evil, pg_catalog, public"


def test_a_real_serve_keeps_literals_literal_on_the_loose_role(
    tmp_path, source_db, loose_role
) -> None:
    """Issue 25 item 6 replayed against ``kyma serve``: the right answers, and the server
    still answers /healthz within a second."""
    serve = Serve(tmp_path / "home", **{SECRET_ENV: loose_role})
    try:
        connection = {
            "url": source_db.url.replace("//app@", "//loose@"),
            "secret_ref": f"$env:{SECRET_ENV}",
        }
        status, created = serve.post(
            "/v1/connectors", {"name": "src", "type": "postgres", "connection": connection}
        )
        assert status == 201 and created["state"] == "ready", created
        injected = "SELECT count(*) FROM src.public.items WHERE name = 'x\\'' OR 1=1 --'"
        assert serve.sql(injected)["rows"] == [[0]]
        query = "SELECT id FROM public.items WHERE name = 'back\\slash' ORDER BY id"
        expected = run_in_postgres(source_db.url, query, password=source_db.password)
        answer = serve.sql(query.replace("public.items", "src.public.items"))
        assert expected and [tuple(r) for r in answer["rows"]] == expected
        started = time.monotonic()
        assert request(f"{serve.url}/healthz", timeout=1)[0] == 200
        assert time.monotonic() - started < 1
    finally:
        assert serve.stop() == 0
