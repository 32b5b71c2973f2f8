"""The JSON answer's rows built by Arrow kernels are byte for byte the per-value path's."""

from __future__ import annotations

import math
import random

import orjson
import pyarrow as pa

from kyma.server.json_rows import SMALL, rows_json
from kyma.server.query import _timestamps, json_column


def _per_value(table: pa.Table) -> bytes:
    values = [json_column(f, table.column(i)) for i, f in enumerate(table.schema)]
    return orjson.dumps([list(row) for row in zip(*values, strict=True)])


def test_rows_by_kernels_equal_rows_by_value() -> None:
    rng = random.Random(7)
    doubles = [
        rng.choice((-1, 1)) * rng.uniform(1, 9.99) * 10 ** rng.randint(-5, 8) for _ in range(2000)
    ]
    doubles += [0.0, -0.0, 1.0, 100.0, -2.0, 0.1, 1e-5, 999999999.5, math.nan, math.inf, None]
    n = len(doubles)
    reals = [None if d == 1e-5 else d for d in doubles]  # 1e-5 as float4 is below it
    texts = ['a"b\\c', "é ☃ 😀", "", "plain", "back\\\\slash", None, "'quote'", "/"]
    table = pa.table(
        {
            "long": pa.array([rng.randint(-(2**63), 2**63 - 1) for _ in range(n - 1)] + [None]),
            "int": pa.array([rng.randint(-100, 100) for _ in range(n)], pa.int32()),
            "bool": pa.array([[True, False, None][i % 3] for i in range(n)]),
            "text": pa.array([texts[i % len(texts)] for i in range(n)]),
            "double": pa.array(doubles, pa.float64()),
            "real": pa.array(
                [r if r is None or abs(r) < 1e8 else 1.5 for r in reals], pa.float32()
            ),
            "ts": pa.array(
                [None if i % 9 == 0 else rng.randint(0, 2**62) for i in range(n)],
                pa.timestamp("ns", tz="UTC"),
            ),
            "naive": pa.array([rng.randint(0, 2**40) for _ in range(n)], pa.timestamp("us")),
        }
    )
    fragment = rows_json(table, _timestamps)
    assert fragment is not None
    assert orjson.dumps(fragment) == _per_value(table)


def test_values_arrow_would_write_otherwise_take_the_per_value_path() -> None:
    for column in (
        pa.array([1e15, 2.0]),  # Arrow writes 1e+15, orjson 1000000000000000.0
        pa.array([1e-7]),
        pa.array(["tab\there"]),  # orjson escapes control characters as \t, \u0001
        pa.array([1e-7], pa.float32()),
        pa.array([[1, 2]]),
    ):
        table = pa.table({"c": pa.concat_arrays([column] * SMALL)})  # past the small ones
        assert rows_json(table, _timestamps) is None
    assert rows_json(pa.table({"c": pa.array([], pa.int64())}), _timestamps) is None


def test_a_small_answer_takes_the_per_value_path() -> None:
    """The kernels' fixed cost is most of a point query's: a few values go one by one."""
    small = pa.table({"id": pa.array(range(SMALL // 2), pa.int64()), "t": ["x"] * (SMALL // 2)})
    assert rows_json(small, _timestamps) is None
    large = pa.table({"id": pa.array(range(SMALL + 1), pa.int64())})
    fragment = rows_json(large, _timestamps)
    assert fragment is not None
    assert orjson.dumps(fragment) == _per_value(large)


def test_a_real_has_float4_s_shortest_digits_either_way() -> None:
    """As Postgres writes a real (``0.33333334``), not its double's digits."""
    column = pa.array([1 / 3, 2.0, 1e-7, None, math.inf], pa.float32())
    assert _per_value(pa.table({"c": column})) == b"[[0.33333334],[2.0],[1e-7],[null],[null]]"
    table = pa.table({"c": pa.concat_arrays([column[:2]] * SMALL)})  # past the small ones
    fragment = rows_json(table, _timestamps)
    assert fragment is not None
    assert orjson.dumps(fragment) == b"[" + b",".join([b"[0.33333334],[2.0]"] * SMALL) + b"]"
