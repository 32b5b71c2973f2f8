"""The console's committed bundle (kyma/console/static) is the build of its sources in
console/: BUILD.json holds the hash of the sources it was built from (computed as
console/build.mjs computes it) and of each output file. After editing console/, rebuild:
``cd console && npm ci && npm run build``."""

from __future__ import annotations

import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).parents[2]
SOURCES = ROOT / "console"
STATIC = ROOT / "kyma" / "console" / "static"
REBUILD = "the console's sources changed: cd console && npm ci && npm run build, and commit"


def sources_hash() -> str:
    """sha256 over each source file's relative path and bytes, in path order (build.mjs)."""
    names = ["build.mjs", "package.json", "package-lock.json"]
    names += [
        p.relative_to(SOURCES).as_posix() for p in (SOURCES / "src").rglob("*") if p.is_file()
    ]
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{name}\n".encode())
        digest.update((SOURCES / name).read_bytes())
        digest.update(b"\n")
    return digest.hexdigest()


def test_the_bundle_was_built_from_these_sources() -> None:
    build = json.loads((STATIC / "BUILD.json").read_text())
    assert build["sources_sha256"] == sources_hash(), REBUILD


def test_the_outputs_are_the_ones_built() -> None:
    build = json.loads((STATIC / "BUILD.json").read_text())
    for name, expected in build["outputs"].items():
        assert hashlib.sha256((STATIC / name).read_bytes()).hexdigest() == expected, (
            f"kyma/console/static/{name} differs from its build; {REBUILD}"
        )
    assert sorted(p.name for p in STATIC.iterdir()) == sorted([*build["outputs"], "BUILD.json"])


def test_the_page_loads_nothing_from_elsewhere() -> None:
    class Links(HTMLParser):
        found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.found += [v or "" for k, v in attrs if k in ("src", "href")]

    page = Links()
    page.feed((STATIC / "index.html").read_text())
    assert sorted(page.found) == ["console.css", "console.js"]
    assert all((STATIC / name).is_file() for name in page.found)
