"""DataRow framing by numpy blocks and one Arrow take gives exactly the bytes the protocol
spells out row by row: NULLs, empty values, fixed- and variable-width columns, slices."""

from __future__ import annotations

import struct

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kyma.pgwire._binary import binary_column
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
    fixed = [  # fixed-width binary cells, as binary results of numbers come
        pa.array([b"xyz"] * skip + c, pa.binary(3)).slice(skip)
        if all(v is not None and len(v) == 3 for v in c)
        else array
        for c, array in zip(columns, arrays, strict=True)
    ]
    assert data_rows(fixed) == _spelled(columns)


def _spelled_array(row: list[int] | None, oid: int, fmt: str) -> bytes | None:
    """array_send of one row, spelled out: header, then (length, value) per element."""
    if row is None:
        return None
    if not row:
        return struct.pack("!iii", 0, 0, oid)
    cells = b"".join(struct.pack("!i", struct.calcsize(fmt)) + struct.pack(fmt, v) for v in row)
    return struct.pack("!iiiii", 1, 0, oid, len(row), 1) + cells


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(-1000, 1000), max_size=4)), max_size=8))
def test_binary_arrays_of_fixed_width_elements_spell_each_row(rows: list[list[int] | None]) -> None:
    """Arrays packed for the whole column (real[], int8[]) are array_send's bytes, row by row."""
    for arrow, oid, fmt in ((pa.float32(), 700, "!f"), (pa.int64(), 20, "!q")):
        column = pa.array(rows, pa.list_(arrow))
        got = binary_column(pa.field("v", column.type), column).to_pylist()
        assert got == [_spelled_array(row, oid, fmt) for row in rows]
    vectors = pa.array([[1.5, -2.0, 0.0], None], pa.list_(pa.float32(), 3))
    got = binary_column(pa.field("v", vectors.type), vectors).to_pylist()
    assert got == [_spelled_array([1.5, -2.0, 0.0], 700, "!f"), None]  # type: ignore[list-item]
