"""``kyma sql -c`` and ``-f``: results on stdout, exit 1 and a marked error on the first failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repl_terminal import cli_env
from serve_helpers import Serve


def kyma_sql(serve: Serve, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kyma", "sql", "--url", serve.url, *args],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_c_prints_the_table_and_exits_0(serve: Serve, tmp_path: Path) -> None:
    done = kyma_sql(
        serve, tmp_path, "-c", "SELECT service_name, count(*) AS n FROM logs GROUP BY 1 ORDER BY 1"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        " service_name |  n",
        "--------------+------",
        " svc0         | 2667",
        " svc1         | 2667",
        " svc2         | 2666",
        "(3 rows)",
    ]


def test_c_bad_statement_exits_1_with_a_marker(serve: Serve, tmp_path: Path) -> None:
    done = kyma_sql(serve, tmp_path, "-c", "SELECT 1 AS one;\nSELECT duration\nFROM logs WHER x")
    assert done.returncode == 1
    assert " one" in done.stdout
    lines = done.stderr.splitlines()
    assert lines[0].startswith("ERROR: syntax error at line 2"), done.stderr
    assert lines[1:] == ["LINE 2: FROM logs WHER x", "                       ^"], (
        done.stderr
    )  # at x


def test_f_stops_at_the_first_error(serve: Serve, tmp_path: Path) -> None:
    script = tmp_path / "script.sql"
    script.write_text("\\x\nSELECT 1 AS a;\nSELECT * FROM missing;\nSELECT 2 AS b;\n")
    done = kyma_sql(serve, tmp_path, "-f", str(script))
    assert done.returncode == 1
    assert "a | 1" in done.stdout and "b | 2" not in done.stdout
    assert done.stderr.startswith("ERROR: ") and "missing" in done.stderr


def test_include_runs_a_file_from_c(serve: Serve, tmp_path: Path) -> None:
    script = tmp_path / "included.sql"
    script.write_text("SELECT 7 AS seven;\n\\timing\nSELECT count(*) AS n\n  FROM logs;\n")
    done = kyma_sql(serve, tmp_path, "-c", f"\\i {script}")
    assert done.returncode == 0, done.stderr
    assert " seven" in done.stdout and " 8000" in done.stdout and "Timing is on." in done.stdout
    assert "Time: " in done.stdout


def test_embedded_session_on_a_serving_home_leaves_the_server_up(
    serve: Serve, tmp_path: Path
) -> None:
    """Without --url, kyma sql adopts the running catalog Postgres and must not stop it."""
    done = subprocess.run(
        [sys.executable, "-m", "kyma", "sql", "-c", "SELECT count(*) AS n FROM logs"],
        env={**cli_env(tmp_path), "KYMA_HOME": str(serve.home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "8000" in done.stdout
    assert serve.sql("SELECT count(*) FROM logs")["rows"] == [[8000]]
