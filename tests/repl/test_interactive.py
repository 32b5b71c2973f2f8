"""``kyma sql`` at a prompt, in a real terminal, against a real ``kyma serve``."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.csv as csv
import pyarrow.parquet as pq
from repl_terminal import SLOW_SQL, Terminal
from serve_helpers import Serve, request


def test_tab_completes_table_and_column_names(terminal: Terminal, tmp_path: Path) -> None:
    # A dumb terminal echoes only the last character typed, so the completed line is read
    # back from the history file, which holds the line as accepted.
    for typed, completed in (
        ("SELECT service_n", "ame"),
        (" FROM lo", "gs"),
        (" WHERE dura", "tion"),
    ):
        terminal.child.send(typed)
        terminal.child.expect_exact(typed)
        terminal.child.send("\t")  # completes asynchronously: wait for its last character
        terminal.child.expect_exact(completed[-1])
    terminal.child.send(" = 7;\r")
    terminal.child.expect_exact("(1 row)")
    assert "svc1" in terminal.child.before
    terminal.prompt()
    assert terminal.close() == 0
    history = (tmp_path / "history").read_text()
    assert "+SELECT service_name FROM logs WHERE duration = 7;" in history


def test_multi_line_statement_and_null_display(terminal: Terminal) -> None:
    terminal.run("SELECT duration,", prompt="kyma-> ")
    terminal.run("  service_name FROM logs", prompt="kyma-> ")
    out = terminal.run("ORDER BY duration NULLS FIRST LIMIT 2;")
    lines = [line.rstrip() for line in out.strip("\r\n").splitlines()]
    assert lines[-4:] == [
        "----------+--------------",
        "   (null) | svc0",
        "        1 | svc1",
        "(2 rows)",
    ]
    assert lines[-5] == " duration | service_name"


def test_describe_commands(terminal: Terminal) -> None:
    out = terminal.run("\\d")
    assert " logs |" in out and "(1 row)" in out
    out = terminal.run("\\d logs")
    assert " service_name | string" in out and " duration     | long" in out
    assert "(4 rows)" in out
    assert "(0 rows)" in terminal.run("\\dc")
    out = terminal.run("\\d nope")
    assert "ERROR: " in out and "nope" in out


def test_expanded_and_timing_toggles(terminal: Terminal) -> None:
    assert "Expanded display is on." in terminal.run("\\x")
    out = terminal.run("SELECT service_name, duration FROM logs WHERE duration = 5;")
    assert "-[ RECORD 1 ]" in out
    assert "service_name | svc2" in out and "duration     | 5" in out
    assert "Expanded display is off." in terminal.run("\\x")
    assert "Timing is on." in terminal.run("\\timing")
    out = terminal.run("SELECT 1 AS one;")
    assert "(1 row)" in out and "Time: " in out and " ms" in out
    assert "Timing is off." in terminal.run("\\timing")
    assert "Time: " not in terminal.run("SELECT 1 AS one;")


def test_output_to_a_file_and_back(terminal: Terminal, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    terminal.run(f"\\o {target}")
    out = terminal.run("SELECT count(*) AS n FROM logs;")
    assert "8000" not in out
    terminal.run("\\o")
    assert "(1 row)" in terminal.run("SELECT 2 AS two;")
    text = target.read_text()
    assert " 8000" in text and "(1 row)" in text and "two" not in text


def test_copy_to_csv_and_parquet(terminal: Terminal, tmp_path: Path) -> None:
    query = "SELECT service_name, duration FROM logs WHERE duration < 10 ORDER BY duration"
    for name in ("rows.csv", "rows.parquet"):
        out = terminal.run(f"\\copy ({query}) TO '{tmp_path / name}'")
        assert "COPY 9" in out
    from_csv = csv.read_csv(tmp_path / "rows.csv")
    from_parquet = pq.read_table(tmp_path / "rows.parquet")
    expected = {"service_name": [f"svc{i % 3}" for i in range(1, 10)], "duration": [*range(1, 10)]}
    assert from_csv.to_pydict() == expected
    assert from_parquet.to_pydict() == expected


def test_ctrl_c_cancels_a_slow_query_and_the_prompt_stays(terminal: Terminal, serve: Serve) -> None:
    started = time.monotonic()
    terminal.child.send(SLOW_SQL + "\r")
    terminal.child.expect_exact(SLOW_SQL)
    time.sleep(1)
    terminal.child.sendintr()
    terminal.child.expect_exact("cancelled")
    terminal.prompt()
    assert time.monotonic() - started < 3.5, "the query ran to its end instead of cancelling"
    # The server saw the client go: the statement counts as cancelled, not ok.
    metrics = request(f"{serve.url}/metrics")[2].decode()
    assert 'kyma_queries_total{outcome="cancelled"} 1.0' in metrics, metrics
    assert "(1 row)" in terminal.run("SELECT 3 AS three;")
    terminal.child.send("SELECT half a line")
    terminal.child.sendintr()  # at the prompt: drops the line
    terminal.prompt()
    assert "(1 row)" in terminal.run("SELECT 4 AS four;")
    assert terminal.close() == 0


def test_a_slow_statement_shows_its_progress_until_it_ends(terminal: Terminal) -> None:
    terminal.child.send(SLOW_SQL + "\r")
    terminal.child.expect_exact(SLOW_SQL)
    # after a second: elapsed time, what the pruning cascade kept, rows handed over so far
    terminal.child.expect(r"running \d+\.\d s · 1/1 extents · [\d ]+ rows, .* to scan", timeout=15)
    terminal.child.sendintr()
    terminal.child.expect_exact("cancelled")
    terminal.prompt()
    out = terminal.run("SELECT 3 AS three;")  # a quick statement shows no progress line
    assert "(1 row)" in out and "running" not in out
    assert terminal.close() == 0


def test_results_taller_than_the_terminal_go_through_the_pager(
    serve: Serve, tmp_path: Path
) -> None:
    term = Terminal(serve.url, tmp_path, rows=10, PAGER="sed s/^/paged:/")
    out = term.run("SELECT duration FROM logs WHERE duration BETWEEN 1 AND 20 ORDER BY 1;")
    assert "paged:(20 rows)" in out
    assert "paged:" not in term.run("SELECT 1 AS one;")
    assert term.close() == 0


def test_history_persists_in_the_file(serve: Serve, tmp_path: Path) -> None:
    first = Terminal(serve.url, tmp_path)
    first.run("SELECT 5 AS remembered;")
    assert first.close() == 0
    assert "SELECT 5 AS remembered;" in (tmp_path / "history").read_text()
