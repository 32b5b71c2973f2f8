"""Every shell block the docs mark runnable runs, as written, against a real ``kyma serve``.

A block is runnable when the line before its fence is ``<!-- runnable -->``. The blocks of one
page run in order in one bash session (later blocks see what earlier ones made) against a
server of their own on a fresh catalog; ``localhost:8080`` and the Postgres port ``5433`` in
the text become that server's ports. ``curl`` fails on an HTTP error (``--fail-with-body``), so
an example that answers 4xx or 5xx fails the test with the server's message.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from serve_helpers import Serve, free_port

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- runnable -->"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)  # Markdown, not SQL
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body --no-progress-meter "$@"; }
"""


def runnable_blocks(page: Path) -> list[str]:
    """The bodies of the page's runnable shell blocks, in order."""
    text = page.read_text()
    blocks = []
    for fence in _FENCE.finditer(text):
        before = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.strip() == MARK:
            assert fence.group(1) in ("sh", "bash"), f"{page}: runnable {fence.group(1)!r} block"
            blocks.append(fence.group(2))
    return blocks


PAGES = sorted(
    p.relative_to(ROOT).as_posix()
    for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    if runnable_blocks(p)
)


def test_the_front_page_and_getting_started_have_runnable_examples() -> None:
    assert {"README.md", "docs/getting-started.md"} <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_runnable_examples(page: str, catalog_url: str, tmp_path: Path) -> None:
    serve = Serve(tmp_path / "home", KYMA_CATALOG_URL=catalog_url, KYMA_PG_PORT=str(free_port()))
    try:
        http = serve.url.removeprefix("http://")
        for number, block in enumerate(runnable_blocks(ROOT / page), 1):
            script = block.replace("localhost:8080", http).replace("127.0.0.1:8080", http)
            script = script.replace("5433", str(serve.pg_port))
            for port, url in (("4317", serve.otlp_grpc_url), ("4318", serve.otlp_http_url)):
                if url is not None:
                    script = script.replace(f"localhost:{port}", url.split("://", 1)[1])
            ran = subprocess.run(
                ["bash", "-c", PRELUDE + script],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert ran.returncode == 0, f"{page}, block {number}:\n{ran.stdout}\n{ran.stderr}"
            assert '"error"' not in ran.stdout, f"{page}, block {number}:\n{ran.stdout}"
    finally:
        serve.stop()
