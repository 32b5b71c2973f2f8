"""The differential harness in CI: a bounded sample of the public corpus and kyma's own cases,
each query run on kyma and on a loopback Postgres, must give no wrong answer, no internal
error, and refuse only in the ways docs/sql-differences.md lists. ``make sqldiff`` runs all.
"""

from __future__ import annotations

from pathlib import Path

import corpus
import pytest
import sqllogic
from differ import INTERNAL, KYMA_ERROR, WRONG

SAMPLE = 130
"""Queries of each public corpus file run in CI: its first ones (deterministic)."""
SAMPLES = {"select4": 60}
"""Fewer of select4's: five-table joins, half the sample's time at 130."""
DOCS = Path(__file__).parents[2] / "docs" / "sql-differences.md"
REFUSALS = "## Refused where Postgres answers"

GATED = [p for p in corpus.files() if not p.name.startswith(corpus.KNOWN)]


def documented() -> list[str]:
    """The error texts the docs list under REFUSALS: each bullet's first `code` span."""
    text = DOCS.read_text()
    section = text.split(REFUSALS, 1)[1].split("\n## ", 1)[0]
    return [line.split("`")[1] for line in section.splitlines() if line.startswith("- `")]


def limit_of(path: Path) -> int | None:
    if path.parent != corpus.CORPUS:
        return None
    return SAMPLES.get(corpus.name_of(path), SAMPLE)


@pytest.mark.parametrize("path", GATED, ids=corpus.name_of)
def test_kyma_answers_as_postgres(path: Path, pg_server_url: str) -> None:
    outcomes = corpus.run(path, pg_server_url, limit_of(path))
    bad = [
        f"{o.kind} at line {o.line}: {o.reason}\n{o.sql}"
        for o in outcomes
        if o.kind in (WRONG, INTERNAL)
    ]
    assert not bad, "\n\n".join(bad)
    known = documented()
    refused = [
        f"line {o.line}: {o.reason}\n{o.sql}"
        for o in outcomes
        if o.kind == KYMA_ERROR and not any(k in o.reason for k in known)
    ]
    assert not refused, "not in the docs' list of refusals:\n" + "\n\n".join(refused)


def test_the_sample_has_a_thousand_queries() -> None:
    queries = 0
    for path in GATED:
        records = list(sqllogic.records(sqllogic.read(path)))
        limit = limit_of(path)
        ran = sum(1 for r in records if r.kind == "query" and r.runs)
        queries += ran if limit is None else min(ran, limit)
    assert queries >= 1000
