"""Tokens on the HTTP API: 401 without a good token, 403 without the scope or the table."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess

import pytest
from secure_serve import Secure, kyma


def test_health_stays_open(secure: Secure) -> None:
    assert secure.call("/healthz")[0] == 200
    assert secure.call("/readyz")[0] == 200


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "missing token"),
        ("kyma_not-a-real-token", "unknown token"),
        ("revoked", "was revoked"),
    ],
)
def test_missing_unknown_and_revoked_tokens_get_401(
    secure: Secure, token: str | None, message: str
) -> None:
    token = secure.tokens.get(token or "", token)
    for path, body in (("/v1/query", {"sql": "SELECT 1"}), ("/v1/tables", None)):
        status, answer, headers = secure.call(path, token, body=body)
        assert status == 401, answer
        assert answer["error"] == "unauthenticated" and message in answer["message"]
        assert headers["www-authenticate"].startswith("Bearer")
    status, answer, _ = secure.call("/v1/ingest/logs", token, body=b'{"msg": "x"}')
    assert status == 401 and message in answer["message"]


def test_read_token_limited_to_its_table(secure: Secure) -> None:
    token = secure.tokens["read_logs"]
    status, answer, _ = secure.sql("SELECT msg FROM logs", token)
    assert status == 200 and answer["rows"] == [["logs row"]]
    assert secure.call("/v1/tables/logs", token)[0] == 200
    assert secure.sql("DESCRIBE logs", token)[0] == 200
    assert secure.sql("SHOW TABLES", token)[0] == 200
    for sql in (
        "SELECT * FROM secrets",
        "SELECT l.msg FROM logs l JOIN secrets s ON l.msg = s.msg",
        "WITH s AS (SELECT * FROM secrets) SELECT * FROM s",
        "SELECT * FROM logs WHERE msg IN (SELECT msg FROM secrets)",
        "SELECT * FROM secrets AS OF SNAPSHOT 1",
        "EXPLAIN SELECT * FROM secrets",
        "DESCRIBE secrets",
    ):
        status, answer, _ = secure.sql(sql, token)
        assert status == 403, (sql, answer)
        assert answer["error"] == "permission_denied" and answer["table"] == "secrets", sql
        assert "'secrets'" in answer["message"]
    status, answer, _ = secure.call("/v1/tables/secrets", token)
    assert status == 403 and answer["table"] == "secrets"


def test_read_token_cannot_write_or_administer(secure: Secure) -> None:
    token = secure.tokens["read"]
    assert secure.sql("SELECT * FROM secrets", token)[0] == 200  # every table: no grant list
    for sql in (
        "CREATE TABLE t2 (a long)",
        "DROP TABLE logs",
        "ALTER TABLE logs ADD COLUMN b long",
    ):
        status, answer, _ = secure.sql(sql, token)
        assert status == 403 and answer["scope"] == "admin", (sql, answer)
    status, answer, _ = secure.sql("CREATE SOURCE s TYPE kafka WITH (table = 'logs')", token)
    assert status == 403 and answer["scope"] == "admin"
    status, answer, _ = secure.call("/v1/ingest/logs", token, body=b'{"msg": "x"}')
    assert status == 403 and answer["scope"] == "ingest"
    for path in ("/v1/sources", "/v1/connectors", "/v1/jobs/load", "/v1/tokens", "/v1/tables"):
        status, answer, _ = secure.call(path, token, body={"name": "x"})
        assert status == 403 and answer["scope"] == "admin", (path, answer)
    assert secure.call("/v1/connectors", token)[0] == 200  # GET: read
    assert secure.call("/v1/tokens", token)[0] == 403


def test_ingest_token_limited_to_its_tables(secure: Secure) -> None:
    token = secure.tokens["ingest_logs"]
    status, answer, _ = secure.call("/v1/ingest/logs", token, body=b'{"msg": "more"}')
    assert status == 200 and answer["rows"] == 1
    status, answer, _ = secure.call("/v1/ingest/secrets", token, body=b'{"msg": "x"}')
    assert status == 403 and answer["table"] == "secrets" and "'secrets'" in answer["message"]
    status, answer, _ = secure.sql("SELECT * FROM logs", token)
    assert status == 403 and answer["scope"] == "read"


def test_admin_token_does_everything(secure: Secure) -> None:
    admin = secure.tokens["admin"]
    assert secure.sql("CREATE TABLE IF NOT EXISTS scratch (a long)", admin)[0] == 200
    assert secure.sql("SELECT * FROM secrets", admin)[0] == 200
    status, answer, _ = secure.call("/v1/tokens", admin)
    assert status == 200 and {t["name"] for t in answer["tokens"]} >= {"bootstrap", "read"}
    assert "token" not in answer["tokens"][0]


def test_catalog_holds_only_token_hashes(secure: Secure) -> None:
    """A dump of the whole catalog database has each token's SHA-256, never the token."""
    banner = "".join(secure.serve.output)
    host, port, database = re.search(
        r"catalog\s+postgresql://\w+:\*\*\*@([\d.]+):(\d+)/(\w+)", banner
    ).groups()
    password = (secure.serve.home / "catalog.password").read_text().strip()
    dump = subprocess.run(
        ["/usr/lib/postgresql/15/bin/pg_dump", "-h", host, "-p", port, "-U", "kyma", database],
        env={**os.environ, "PGPASSWORD": password},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "api_tokens" in dump
    for name, token in secure.tokens.items():
        assert token not in dump, name
        assert token.removeprefix("kyma_") not in dump, name
        assert hashlib.sha256(token.encode()).hexdigest() in dump, name


def test_token_cli_lists_without_secrets(secure: Secure) -> None:
    listed = kyma(secure.serve.home, "token", "list")
    assert listed.returncode == 0, listed.stderr
    assert "bootstrap" in listed.stdout and "read_logs" in listed.stdout
    revoked_line = next(
        line for line in listed.stdout.splitlines() if line.rstrip().endswith(" revoked")
    )
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+revoked$", revoked_line.rstrip())
    for token in secure.tokens.values():
        assert token not in listed.stdout
