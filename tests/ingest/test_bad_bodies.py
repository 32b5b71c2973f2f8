"""The bad-body corpus (tests/bad_bodies.py): each raises IngestError naming line and field."""

from __future__ import annotations

import pytest
from bad_bodies import CASES, COLUMNS, PROPS_FIELDS, Bad

from kyma.engine.errors import IngestError
from kyma.ingest.coerce import coerce_ndjson
from kyma.ingest.coerce._slow import coerce_rows


def test_the_corpus_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 100
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name[:60] for c in CASES])
def test_bad_body_names_line_and_field(case: Bad) -> None:
    for read in (coerce_ndjson, coerce_rows):
        with pytest.raises(IngestError) as info:
            read(case.body, COLUMNS, props_fields=PROPS_FIELDS, ingest_time_ns=0)
        error = info.value
        assert (error.line, error.field) == (case.line, case.field), str(error)
        if case.line is None:
            assert str(error) == "empty body: no JSON objects"
        elif case.field is None:
            assert str(error).startswith(f"line {case.line}: ")
        else:
            assert str(error).startswith(f"line {case.line}, field {case.field!r}: ")
