"""DataRow framing by numpy blocks and one Arrow take gives exactly the bytes the protocol
spells out row by row: NULLs, empty values, fixed- and variable-width columns, slices."""

from __future__ import annotations

import struct

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kyma.pgwire._messages import data_rows

_VALUE = st.one_of(st.none(), st.binary(max_size=12))


def _spelled(columns: list[list[bytes | None]]) -> bytes:
    out = b""
    for row in zip(*columns, strict=True):
        cells = b"".join(
            struct.pack("!i", -1) if v is None else struct.pack("!i", len(v)) + v for v in row
        )
        out += b"D" + struct.pack("!ih", 4 + 2 + len(cells), len(row)) + cells
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.lists(
            st.one_of(
                st.lists(_VALUE, min_size=n, max_size=n),
                st.lists(st.binary(min_size=3, max_size=3), min_size=n, max_size=n),
                st.lists(st.just(b""), min_size=n, max_size=n),
            ),
            min_size=1,
            max_size=5,
        )
    ),
    st.integers(0, 3),
)
def test_data_rows_spell_each_row(columns: list[list[bytes | None]], skip: int) -> None:
    arrays = [pa.array([b"x"] * skip + c, pa.large_binary()).slice(skip) for c in columns]
    assert data_rows(arrays) == _spelled(columns)
