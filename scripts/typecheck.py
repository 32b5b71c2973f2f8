"""Run mypy over the ``kyma`` package as it installs (settings: pyproject.toml's [tool.mypy]).

``engine/``, ``ingest/`` and ``connectors/`` install as ``kyma.engine`` and so on (setup.py);
mypy reads folders, so this links the installed layout into a temporary folder first.
``make lint`` and tests/ops/test_typing.py run it; the exit status is mypy's.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = {"engine": "engine", "ingest": "ingest", "connectors": "connectors", "sql": "migrations"}


def typecheck() -> subprocess.CompletedProcess[str]:
    """mypy's run over the package: ``returncode`` and ``stdout`` (its report)."""
    with tempfile.TemporaryDirectory(prefix="kyma-mypy-") as tmp:
        package = Path(tmp, "kyma")
        package.mkdir()
        for entry in (ROOT / "kyma").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        for folder, name in MAPPED.items():
            (package / name).symlink_to(ROOT / folder)
        config = ["--config-file", str(ROOT / "pyproject.toml")]
        cache = ["--cache-dir", str(ROOT / ".mypy_cache")]
        command = [sys.executable, "-m", "mypy", *config, *cache, "-p", "kyma"]
        return subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)


if __name__ == "__main__":
    done = typecheck()
    print(done.stdout + done.stderr, end="")
    sys.exit(done.returncode)
