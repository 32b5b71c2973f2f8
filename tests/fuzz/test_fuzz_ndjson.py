"""Arbitrary bytes, and JSON lines close to valid ones, through NDJSON coercion: an answer or
IngestError, never another exception."""

from __future__ import annotations

import json

from bad_bodies import COLUMNS, PROPS_FIELDS
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import IngestError
from kyma.ingest.coerce import coerce_ndjson

_NAMES = st.sampled_from(
    ["_timestamp", "props", "b", "i", "l", "r", "s", "t", "v", "d", "nn", "extra", "x"]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=10)
    | st.sampled_from(["2026-01-01T00:00:00Z", "2026-13-01", "1e400", "NaN"])
)
_LISTS = st.lists(_SCALARS, max_size=4)
_JSON = _SCALARS | _LISTS | st.dictionaries(st.text(max_size=5), _SCALARS | _LISTS, max_size=4)
# "nn" is NOT NULL: present (and valid) unless a drawn value replaces it.
_LINES = st.dictionaries(_NAMES, _JSON, max_size=6).map(lambda d: json.dumps({"nn": 0, **d}))


def _coerce(body: bytes) -> None:
    try:
        coerced = coerce_ndjson(body, COLUMNS, props_fields=PROPS_FIELDS, ingest_time_ns=0)
    except IngestError:
        return
    assert coerced.batch.num_rows == coerced.rows


@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_ingest_error(body: bytes) -> None:
    _coerce(body)


@given(st.lists(_LINES, max_size=6), st.sampled_from(["\n", "\r\n", "\n\n"]))
def test_json_lines_raise_only_ingest_error(lines: list[str], sep: str) -> None:
    _coerce(sep.join(lines).encode())


@given(st.lists(_LINES, min_size=1, max_size=4), st.integers(0, 400), st.binary(max_size=4))
def test_mangled_lines_raise_only_ingest_error(lines: list[str], at: int, junk: bytes) -> None:
    body = "\n".join(lines).encode()
    at %= len(body) + 1
    _coerce(body[:at] + junk + body[at:])
