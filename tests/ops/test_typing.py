"""mypy passes over the package with pyproject.toml's settings (CI runs it through here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from typecheck import typecheck  # noqa: E402


def test_mypy_finds_no_errors() -> None:
    assert importlib.util.find_spec("mypy"), "mypy is missing: bash scripts/setup.sh installs it"
    done = typecheck()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
