"""The documentation site builds with --strict: every page in the nav, no broken link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "site" / "getting-started" / "index.html").exists()


def test_every_page_is_in_the_nav() -> None:
    """A page left out of mkdocs.yml's nav is only an INFO line for mkdocs: fail here."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    missing = sorted(p for p in pages if p not in nav)
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_readme_stays_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300
    assert "bash scripts/setup.sh && make test" in lines
    assert "bash scripts/setup.sh && .venv/bin/kyma serve" in lines
