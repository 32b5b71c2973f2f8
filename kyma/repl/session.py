"""Running input: statements through the client, backslash commands, output and its pager."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from kyma.repl import render
from kyma.repl._split import split
from kyma.repl.client import Answer, Client, QueryError

PROGRESS_AFTER = 1.0  # seconds a statement runs before its progress line shows
PROGRESS_EVERY = 0.5  # seconds between updates of the line
# Statements whose status names two words, like "CREATE TABLE".
_TWO_WORD = {"CREATE", "DROP", "ALTER", "REFRESH", "SHOW"}


class Quit(Exception):
    """``\\q``: leave the session."""


class Cancelled(Exception):
    """Ctrl-C stopped a running statement."""


class Session:
    """The state of one ``kyma sql``: display toggles, the output file, pending input.

    ``interactive`` sessions may page long results, ``color`` ones dim NULL; ``feed_line``
    and ``finish`` answer False on the first failed statement so scripts stop there.
    """

    def __init__(
        self,
        client: Client,
        interactive: bool,
        pager: str = "",
        color: bool = False,
        on_schema_change: Callable[[], None] | None = None,
        output_format: str = "aligned",
        tuples_only: bool = False,
    ) -> None:
        self.client = client
        self.interactive = interactive
        self.pager = pager
        self.color = color
        self.on_schema_change = on_schema_change
        self.expanded = False
        self.format = output_format  # one of render.FORMATS (\\pset format, -A, --csv)
        self.tuples_only = tuples_only  # \\t, -t
        self.timing = False
        self.output: TextIO | None = None  # None: stdout
        self.pending = ""

    @property
    def out(self) -> TextIO:
        return self.output or sys.stdout

    def feed_line(self, line: str) -> bool:
        """One line of input: a backslash command, or part of one or more statements."""
        from kyma.repl import commands  # here: commands imports this module

        if not self.pending.strip() and line.lstrip().startswith("\\"):
            self.pending = ""
            return commands.run(self, line.strip())
        statements, self.pending = split(self.pending + line + "\n")
        if not self.pending.strip():
            self.pending = ""
        return all(self.run_statement(sql) for sql in statements)

    def finish(self) -> bool:
        """Run what is left without a closing ``;`` (the end of a script)."""
        rest, self.pending = self.pending.strip(), ""
        return self.run_statement(rest) if rest else True

    def run_text(self, text: str) -> bool:
        """A whole script: stops at the first failure."""
        return all(self.feed_line(line) for line in text.split("\n")) and self.finish()

    def run_statement(self, sql: str) -> bool:
        started = time.perf_counter()
        try:
            answer = self.execute(sql)
        except Cancelled:
            print("cancelled", file=sys.stderr, flush=True)
            return False
        except QueryError as e:
            self.error(render.error(e.message, sql, e.line, e.column))
            return False
        elapsed = time.perf_counter() - started
        self.show(answer, sql)
        if self.timing:
            print(f"Time: {elapsed * 1000:.3f} ms", file=self.out, flush=True)
        if self.on_schema_change and sql.split()[0].upper() in ("CREATE", "DROP", "ALTER"):
            self.on_schema_change()
        return True

    def execute(self, sql: str) -> Answer:
        """Run ``sql`` in a worker thread; Ctrl-C cancels it and raises Cancelled."""
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["answer"] = self.client.execute(sql)
            except BaseException as e:  # handed to the waiting thread
                box["error"] = e

        worker = threading.Thread(target=work, daemon=True, name="kyma-sql-query")
        worker.start()
        shown = self.interactive and sys.stderr.isatty()
        started, polled, drawn = time.monotonic(), 0.0, False
        try:
            while worker.is_alive():
                worker.join(0.05)
                now = time.monotonic()
                if shown and now - started > PROGRESS_AFTER and now - polled > PROGRESS_EVERY:
                    polled = now
                    entry = self.client.progress(sql)
                    if entry is not None and worker.is_alive():
                        sys.stderr.write("\r" + render.progress(entry) + "\x1b[K")
                        sys.stderr.flush()
                        drawn = True
        except KeyboardInterrupt:
            self.client.cancel()
            raise Cancelled from None
        finally:
            if drawn:  # the progress line goes before the answer is printed
                sys.stderr.write("\r\x1b[K")
                sys.stderr.flush()
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box["answer"]  # type: ignore[return-value]

    def show(self, answer: Answer, sql: str) -> None:
        table = answer.table
        if table.num_columns == 0:
            self.write([answer.status or _status(sql)])
            return
        dim = self.color and self.output is None and sys.stdout.isatty()
        self.write(
            render.lines(
                table, self.format, expand=self.expanded, tuples_only=self.tuples_only, dim=dim
            )
        )

    def write(self, lines: list[str]) -> None:
        """Lines to the output; through the pager when they do not fit the terminal."""
        text = "\n".join(lines) + "\n"
        if self._needs_pager(text.splitlines()):
            try:
                subprocess.run(shlex.split(self.pager), input=text, text=True, check=False)
                return
            except OSError:
                pass  # no such pager: print instead
        self.out.write(text)
        self.out.flush()

    def error(self, lines: list[str]) -> None:
        print("\n".join(lines), file=sys.stderr, flush=True)

    def _needs_pager(self, lines: list[str]) -> bool:
        """Output taller than the terminal (a line left for the prompt), as psql decides."""
        if not (self.interactive and self.pager and self.output is None and sys.stdout.isatty()):
            return False
        return len(lines) >= shutil.get_terminal_size().lines


def _status(sql: str) -> str:
    words = sql.split()
    count = 2 if words[0].upper() in _TWO_WORD else 1
    return " ".join(words[:count]).upper()
