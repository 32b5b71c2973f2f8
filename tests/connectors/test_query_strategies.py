"""The query generator writes valid, varied Postgres SQL over the seeded source."""

from __future__ import annotations

import doctest
from collections import Counter

import query_strategies
import source_postgres
from hypothesis import HealthCheck, event, given, settings
from query_strategies import BIGS, CODES, NAMES, TAGS, federated_queries
from source_postgres import SourceDatabase, run_in_postgres

# Features every run of 200 queries shows (checked over 100 runs: each came up 3+ times);
# missing one means a branch of the generator broke. Rarer ones are only reported as events.
FEATURES = {
    "group by": " GROUP BY ",
    "like escape": " ESCAPE '!'",
    "nulls first": " NULLS FIRST",
    "limit": " LIMIT ",
    "between": " BETWEEN ",
    "in list": " IN (",
    "not": "NOT (",
    "count distinct": "count(DISTINCT ",
}
EVENTS = {**FEATURES, "timestamptz literal": "TIMESTAMPTZ '", "is null": " IS NULL"}


def test_doctests() -> None:
    for module in (query_strategies, source_postgres):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_the_generator_knows_the_seeded_text(source_db: SourceDatabase) -> None:
    def distinct(column: str) -> set[str]:
        query = f"SELECT DISTINCT {column} FROM public.items WHERE {column} IS NOT NULL"
        return {row[0] for row in run_in_postgres(source_db.admin_url, query)}

    assert distinct("name") == set(NAMES) and distinct("tag") == set(TAGS)
    assert distinct("code") == set(CODES)  # unpadded, as kyma reads char(n)
    assert {str(value.normalize()) for value in distinct("big")} == set(BIGS)


def test_generated_queries_run_on_postgres(source_db: SourceDatabase) -> None:
    seen: Counter[str] = Counter()

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(federated_queries("{table}"))
    def run(template: str) -> None:
        query = template.format(table="public.items")
        assert query.replace("public.items", "{table}") == template
        rows = run_in_postgres(source_db.url, query, password=source_db.password)
        found = [name for name, marker in EVENTS.items() if marker in query]
        found += ["rows"] if rows else []
        for name in found:
            event(name)
        seen.update(found)

    run()
    missing = [name for name in [*FEATURES, "rows"] if not seen[name]]
    assert not missing, f"200 generated queries had no {missing}; seen {dict(seen)}"
