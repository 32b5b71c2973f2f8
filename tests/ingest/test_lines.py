"""The body's lines from one native pass (``ingest/coerce/_lines.py``) against Python's
own split and counts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kyma.ingest.coerce import scan

_ALPHABET = b"{}[]:\n " + b"x" * 121  # lines of 128 bytes on average, some past 255
_TO_ALPHABET = bytes(_ALPHABET[i % len(_ALPHABET)] for i in range(256))


@given(
    body=st.binary(max_size=2000).map(lambda b: b.translate(_TO_ALPHABET)),
    limit=st.integers(-1, 40),
)
def test_scan_matches_split_and_count(body: bytes, limit: int) -> None:
    pieces = body.split(b"\n")
    lines = scan(body, limit)
    if 0 <= limit < len(pieces) - 1:
        assert lines is None
        return
    assert lines is not None
    assert [
        body[s:e] for s, e in zip(lines.starts.tolist(), lines.ends.tolist(), strict=True)
    ] == pieces
    assert lines.lengths.tolist() == [len(p) for p in pieces]
    assert lines.colons.tolist() == [p.count(b":") for p in pieces]
    assert lines.openers.tolist() == [p.count(b"{") + p.count(b"[") for p in pieces]
