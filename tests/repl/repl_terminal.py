"""The REPL tests' terminal: ``kyma sql`` in a pseudo-terminal, and the slow query to cancel."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect

# Three-way join of ~3.8e9 rows: about 5 s on a 2-core machine, long enough to cancel.
SLOW_SQL = (
    "SELECT count(*) FROM logs a, logs b, (SELECT * FROM logs LIMIT 60) c "
    "WHERE a.duration + b.duration + c.duration > 7;"
)


def cli_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TERM": "dumb",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "KYMA_HISTORY_FILE": str(tmp_path / "history"),
        "PAGER": "",
    }


class Terminal:
    """``kyma sql`` in a pseudo-terminal; every wait is bounded by pexpect's timeout."""

    def __init__(self, url: str, tmp_path: Path, rows: int = 50, **env: str) -> None:
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "kyma", "sql", "--url", url],
            env={**cli_env(tmp_path), **env},
            cwd=str(tmp_path),
            dimensions=(rows, 200),
            encoding="utf-8",
            timeout=15,
        )
        self.prompt()

    def prompt(self, text: str = "kyma=> ") -> str:
        """Wait for the prompt; the output before it."""
        self.child.expect_exact(text)
        time.sleep(0.1)  # let prompt_toolkit switch the terminal to raw mode
        return self.child.before

    def run(self, line: str, prompt: str = "kyma=> ") -> str:
        """Send one line; the output up to the next prompt, without the echoed line."""
        self.child.send(line + "\r")
        self.child.expect_exact(line)
        return self.prompt(prompt)

    def close(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus
