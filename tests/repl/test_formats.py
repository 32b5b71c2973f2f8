"""``kyma sql`` output formats (-A, -t, --csv, \\pset), \\l, \\d on a federated table, \\copy of
vectors, and -c with -f refused."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import time
import urllib.request
from pathlib import Path

import pexpect
import psycopg
import pyarrow.parquet as pq
import pytest
from repl_terminal import Terminal, cli_env
from serve_helpers import Serve
from test_batch import kyma_sql

QUERY = (
    "SELECT service_name, duration FROM logs WHERE duration < 3 OR duration IS NULL"
    " ORDER BY duration NULLS FIRST"
)


def test_unaligned_and_tuples_only_flags(serve: Serve, tmp_path: Path) -> None:
    done = kyma_sql(serve, tmp_path, "-A", "-c", QUERY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "service_name|duration",
        "svc0|",
        "svc1|1",
        "svc2|2",
        "(3 rows)",
    ]
    done = kyma_sql(serve, tmp_path, "-A", "-t", "-c", QUERY)
    assert done.stdout.splitlines() == ["svc0|", "svc1|1", "svc2|2"]
    done = kyma_sql(serve, tmp_path, "-t", "-c", QUERY)
    assert done.stdout.splitlines() == [
        " svc0         |   (null)",
        " svc1         |        1",
        " svc2         |        2",
    ]


def test_pset_format_csv_and_back(serve: Serve, tmp_path: Path) -> None:
    script = tmp_path / "formats.sql"
    script.write_text(
        f"\\pset format csv\n{QUERY};\nSELECT 'a,\"b' AS odd;\n\\pset format aligned\n"
        "SELECT 1 AS one;\n\\pset format html\n"
    )
    done = kyma_sql(serve, tmp_path, "-f", str(script))
    assert done.returncode == 1  # the last line: an unknown format
    out = done.stdout.splitlines()
    assert out[:6] == [
        "Output format is csv.",
        "service_name,duration",
        "svc0,",
        "svc1,1",
        "svc2,2",
        "odd",
    ], done.stdout
    assert out[6] == '"a,""b"' and out[7:] == [
        "Output format is aligned.",
        " one",
        "-----",
        "   1",
        "(1 row)",
    ], done.stdout
    assert "\\pset: expected format aligned|unaligned|csv" in done.stderr


def test_c_and_f_together_are_refused(serve: Serve, tmp_path: Path) -> None:
    script = tmp_path / "one.sql"
    script.write_text("SELECT 1 AS one;\n")
    done = kyma_sql(serve, tmp_path, "-c", "SELECT 2 AS two", "-f", str(script))
    assert done.returncode == 2 and done.stdout == ""
    assert "argument -f: not allowed with argument -c" in done.stderr


def test_copy_of_a_vector_column_to_csv(serve: Serve, tmp_path: Path) -> None:
    target = tmp_path / "vectors.csv"
    sql = "SELECT 'a' AS name, ARRAY[1.5, 2.0, 3.0]::float8[] AS embedding, NULL AS nothing"
    done = kyma_sql(serve, tmp_path, "-c", f"\\copy ({sql}) TO '{target}'")
    assert done.returncode == 0, done.stderr
    assert "COPY 1" in done.stdout
    with target.open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["name", "embedding", "nothing"]
    assert rows[1][0] == "a" and json.loads(rows[1][1]) == [1.5, 2.0, 3.0], rows


@pytest.fixture
def connector(serve: Serve) -> str:
    """A connector ``src`` on a database of the server's own catalog Postgres, dropped after."""
    port = re.search(
        r"catalog\s+postgresql://kyma:\*\*\*@127\.0\.0\.1:(\d+)", "".join(serve.output)
    )
    assert port, serve.output
    password = (serve.home / "catalog.password").read_text().strip()
    admin = f"postgresql://kyma:{password}@127.0.0.1:{port.group(1)}"
    secret = serve.home / "secrets" / "repl_src"  # secrets are read only from KYMA_SECRETS_DIR
    secret.parent.mkdir(exist_ok=True)
    secret.write_text(password)
    with psycopg.connect(f"{admin}/kyma", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS repl_src")
        conn.execute("CREATE DATABASE repl_src")
    with psycopg.connect(f"{admin}/repl_src", autocommit=True) as conn:
        conn.execute("CREATE TABLE items (id integer PRIMARY KEY, label text, price numeric(10,2))")
    status, answer = serve.post(
        "/v1/connectors",
        {
            "name": "src",
            "type": "postgres",
            "connection": {
                "url": f"postgres://kyma@127.0.0.1:{port.group(1)}/repl_src",
                "secret_ref": f"file:{secret}",
                "tls": "disabled",
                "allow_insecure": True,
            },
        },
    )
    assert status == 201, answer
    yield "src"
    request = urllib.request.Request(f"{serve.url}/v1/connectors/src", method="DELETE")
    urllib.request.urlopen(request, timeout=30).close()


def test_describe_a_federated_table_and_list_catalogs(
    serve: Serve, tmp_path: Path, connector: str
) -> None:
    done = kyma_sql(serve, tmp_path, "-c", f"\\d {connector}.public.items")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split("|")[0].strip() == "name" and "source_type" in lines[0], lines
    assert re.match(r" id +\| int +\| integer", lines[2]), lines
    assert re.match(r" price +\| \S+ +\| numeric\(10,2\)", lines[4]), lines
    done = kyma_sql(serve, tmp_path, "-A", "-t", "-c", "\\l")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["kyma|kyma|ready", "src|postgres|ready"], done.stdout
    missing = kyma_sql(serve, tmp_path, "-c", f"\\d {connector}.public.nope")
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_short_output_is_not_paged_tall_output_is(serve: Serve, tmp_path: Path) -> None:
    term = Terminal(serve.url, tmp_path, rows=30, PAGER="sed s/^/paged:/")
    assert "paged:" not in term.run("\\?")  # about 20 lines on a 30-line terminal
    wide = "SELECT repeat('w', 250) AS wide;"  # wider than the terminal, but short
    assert "paged:" not in term.run(wide)
    out = term.run("SELECT duration FROM logs WHERE duration BETWEEN 1 AND 40 ORDER BY 1;")
    assert "paged:(40 rows)" in out
    assert term.close() == 0


def test_default_pager_renders_escapes(serve: Serve, tmp_path: Path) -> None:
    """less -SR (the default PAGER): the dimmed NULL reaches the terminal as an escape, where
    less -S showed it as the text ``ESC[2m``."""
    env = {**cli_env(tmp_path), "TERM": "xterm"}
    del env["PAGER"]
    child = pexpect.spawn(
        sys.executable,
        ["-m", "kyma", "sql", "--url", serve.url],
        env=env,
        dimensions=(10, 120),
        encoding="utf-8",
        timeout=15,
    )
    try:
        child.expect_exact("kyma=>")
        time.sleep(0.2)  # let prompt_toolkit switch the terminal to raw mode
        child.send(f"{QUERY.replace('< 3', '< 20')};\r")
        child.logfile_read = seen = io.StringIO()
        child.expect_exact("svc2")  # less shows the first screen
        time.sleep(0.5)
        child.send("q")
        child.expect_exact("kyma=>")
        shown = seen.getvalue()
        assert "\x1b[2m(null)" in shown and "ESC[2m" not in shown, repr(shown)
    finally:
        child.terminate(force=True)


def test_dynamic_values_show_and_copy_as_json_text(serve: Serve, tmp_path: Path) -> None:
    """Dynamic values are JSON text in every output: the table, CSV and Parquet (never the
    CBOR bytes kyma keeps)."""
    serve.sql("CREATE TABLE IF NOT EXISTS repl_dynamic (n long, attrs dynamic)")
    try:  # the session's serve is shared: other tests count its tables
        rows = [{"n": 1, "attrs": {"http": {"code": 200}, "tags": ["a"]}}, {"n": 2, "attrs": 42}]
        body = "\n".join(json.dumps(r) for r in rows).encode()
        request = urllib.request.Request(f"{serve.url}/v1/ingest/repl_dynamic", data=body)
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.load(answer)["rows"] == 2
        sql = "SELECT n, attrs FROM repl_dynamic ORDER BY n"
        done = kyma_sql(serve, tmp_path, "-A", "-t", "-c", sql)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ['1|{"http":{"code":200},"tags":["a"]}', "2|42"]
        for name in ("dynamic.csv", "dynamic.parquet"):
            done = kyma_sql(serve, tmp_path, "-c", f"\\copy ({sql}) TO '{tmp_path / name}'")
            assert done.returncode == 0, done.stderr
        with (tmp_path / "dynamic.csv").open() as f:
            assert list(csv.reader(f))[1:] == [
                ["1", '{"http":{"code":200},"tags":["a"]}'],
                ["2", "42"],
            ]
        table = pq.read_table(tmp_path / "dynamic.parquet")
        assert str(table.schema.field("attrs").type) == "string"
        assert table.column("attrs").to_pylist() == ['{"http":{"code":200},"tags":["a"]}', "42"]
    finally:
        serve.sql("DROP TABLE repl_dynamic")


def test_kyma_sql_reads_the_postgres_catalog(serve: Serve, tmp_path: Path) -> None:
    sql = "SELECT table_name FROM information_schema.tables WHERE table_name = 'logs'"
    done = kyma_sql(serve, tmp_path, "-A", "-t", "-c", sql)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["logs"]
