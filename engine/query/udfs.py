"""kyma's SQL functions, registered on every DataFusion session. All are vectorized.

- ``kyma_dyn_get(dynamic, path_json)``: the value at a path of a dynamic column, as text
  (strings as-is, other values as Postgres renders jsonb); NULL when the path is absent or
  null. The rewriter produces it from ``attributes['a']['b']`` and ``->>``.
- the ``kyma_jsonb_*`` functions (``jsonb.py``): ``->``, ``#>``, ``@>``, ``?``, ``::text``…
- ``has_token(text, token)``: whether ``text`` holds ``token`` as a word (the same
  tokenization as the extent token sets: lower-cased ASCII alphanumeric runs).
- ``cosine_distance(vector, array)``: 1 - cosine similarity.
- ``kyma_double_text(double)``: a double as ``kyma_dyn_get`` words it (shredded paths).
- ``kyma_numeric_input(text)``: its text, once no value is too long to cast to a decimal
  (``rewrite.numeric_input``); ``kyma_numeric_text(text)`` also refuses more decimals than
  a plain numeric keeps.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from datafusion import AggregateUDF, ScalarUDF, SessionContext, udf
from sqlglot.tokens import TokenType

from kyma.engine.errors import SqlError
from kyma.engine.format._shred import double_text
from kyma.engine.query import (
    jsonb,
    pg_float,
    pg_float4,
    pg_float_division,
    pg_interval,
    pg_numeric,
    pg_to_char,
    pg_to_char_number,
)
from kyma.engine.query.jsonb import constant, dyn_get
from kyma.engine.query.rewrite import numeric_input as _numeric_input


def has_token(text: pa.Array, token: pa.Array) -> pa.Array:
    word = (constant(token) or "").lower()
    if not re.fullmatch(r"[a-z0-9]+", word):
        return pc.if_else(pc.is_null(text), pa.scalar(None, pa.bool_()), False)
    pattern = rf"(^|[^a-z0-9]){word}([^a-z0-9]|$)"
    lowered = pc.ascii_lower(offsets_from_zero(text))
    # The word as a substring first (a plain search): the regex runs on those rows only.
    found = pc.match_substring(lowered, word)
    if not pc.any(found).as_py():
        return found
    candidates = pc.fill_null(found, False)
    exact = pc.match_substring_regex(lowered.filter(candidates), pattern)
    return pc.replace_with_mask(found, candidates, exact)


def offsets_from_zero(text: pa.Array) -> pa.Array:
    """``text`` with value offsets that start at 0 (no copy of the bytes).

    DataFusion hands a UDF every batch after a partition's first as a slice whose offsets
    start past 0 (array offset 0), and pyarrow's ASCII case kernels (``ascii_lower``,
    ``ascii_upper``) read such an array wrong: ``has_token`` missed rows.

    >>> import numpy as np
    >>> whole = pa.array(["a B", "Zebra x", "OK"])
    >>> offsets = np.frombuffer(whole.buffers()[1], np.int32)[1:]  # starts at 3
    >>> tail = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(offsets.tobytes()),
    ...                                                whole.buffers()[2]])
    >>> pc.ascii_lower(offsets_from_zero(tail)).to_pylist()
    ['zebra x', 'ok']
    """
    if text.offset or not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
        return text  # pyarrow's own slices (array offset past 0) read right
    width = np.dtype(np.int64 if pa.types.is_large_string(text.type) else np.int32)
    validity, offsets_buffer, data = text.buffers()
    offsets = np.frombuffer(offsets_buffer, width, len(text) + 1)
    start = int(offsets[0])
    if start == 0 or data is None:
        return text
    rebased = pa.py_buffer((offsets - start).astype(width).tobytes())
    values = data.slice(start, int(offsets[-1]) - start)
    return pa.Array.from_buffers(text.type, len(text), [validity, rebased, values], text.null_count)


def cosine_distance(vectors: pa.Array, query: pa.Array) -> pa.Array:
    q = constant(query)
    if q is None:
        return pa.nulls(len(vectors), pa.float64())
    qv = np.asarray(q, dtype=np.float32)
    lengths = pc.list_value_length(vectors).drop_null()
    if len(lengths) and not pc.all(pc.equal(lengths, len(qv))).as_py():
        raise SqlError(
            f"cosine_distance: the query vector has {len(qv)} numbers, "
            "the column's vectors have a different length"
        )
    # The non-null vectors as one row-major float32 matrix (no copy when already float32).
    matrix = pc.list_flatten(vectors).to_numpy(zero_copy_only=False).reshape(-1, len(qv))
    with np.errstate(divide="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix)) * np.linalg.norm(qv)
        distance = 1.0 - (matrix @ qv).astype(np.float64) / norms
    if vectors.null_count == 0:
        return pa.array(distance, pa.float64())
    valid = pc.is_valid(vectors).to_numpy(zero_copy_only=False)
    out = np.zeros(len(vectors))
    out[valid] = distance
    return pa.array(out, pa.float64(), mask=~valid)


def numeric_input(values: pa.Array) -> pa.Array:
    """``values`` as they are, or OutOfRangeError if one is too long to be a numeric (the
    longest is measured: one vectorized pass)."""
    longest = pc.max(pc.utf8_length(values)).as_py()
    if longest is not None:
        _numeric_input.check_length(longest)  # the same error as a literal's
    return values


def numeric_text(values: pa.Array) -> pa.Array:
    """``numeric_input``, and UnsupportedStatementError if a value has more decimals than a
    plain numeric keeps (the most decimals are measured: one vectorized pass)."""
    numeric_input(values)
    fraction = pc.utf8_length(pc.extract_regex(values, r"\.(?P<f>\d*)\s*$").field("f"))
    most = pc.max(fraction).as_py()
    if most is not None and most > _numeric_input.SCALE:
        found = pc.filter(values, pc.greater(fraction, _numeric_input.SCALE))[0].as_py()
        _numeric_input.check_scale(found)
    return values


# Built once: every session registers the same functions (no per-statement construction).
DYN_GET = udf(dyn_get, [pa.binary(), pa.string()], pa.string(), "immutable", name="kyma_dyn_get")
DOUBLE_TEXT = udf(double_text, [pa.float64()], pa.string(), "immutable", name="kyma_double_text")
_FUNCTIONS = (
    DYN_GET,
    DOUBLE_TEXT,
    udf(has_token, [pa.string(), pa.string()], pa.bool_(), "immutable", name="has_token"),
    udf(numeric_input, [pa.string()], pa.string(), "immutable", name=_numeric_input.FUNCTION),
    udf(numeric_text, [pa.string()], pa.string(), "immutable", name=_numeric_input.UNSCALED),
    udf(
        cosine_distance,
        [pa.list_(pa.float32()), pa.list_(pa.float64())],
        pa.float64(),
        "immutable",
        name="cosine_distance",
    ),
)


ALL: tuple[ScalarUDF | AggregateUDF, ...] = (
    *_FUNCTIONS,
    *jsonb.FUNCTIONS,
    *pg_numeric.FUNCTIONS,
    *pg_float.FUNCTIONS,
    *pg_float4.FUNCTIONS,
    *pg_float_division.FUNCTIONS,
    *pg_interval.FUNCTIONS,
    *pg_to_char.FUNCTIONS,
    *pg_to_char_number.FUNCTIONS,
)
"""Every kyma function a session may need (each registration costs a few microseconds)."""


def register(
    ctx: SessionContext,
    functions: Sequence[ScalarUDF | AggregateUDF] = ALL,
    called: Collection[str] | None = None,
) -> None:
    """Add ``functions`` to a session: those named in ``called`` (None: all)."""
    for function in functions:
        if called is not None and function.name not in called:
            continue
        if isinstance(function, AggregateUDF):
            ctx.register_udaf(function)
        else:
            ctx.register_udf(function)


def called(sql: str) -> frozenset[str]:
    """The names ``sql`` calls (read by sqlglot's lexer: every word before a parenthesis,
    keywords too), lower-case: a plan's session registers only these functions.

    >>> sorted(called("SELECT has_token(m, 'a'), CAST(x AS INT) FROM t WHERE a IN (1)"))
    ['cast', 'has_token', 'in']
    """
    tokens = sqlglot.tokenize(sql, read="postgres")
    pairs = zip(tokens, tokens[1:], strict=False)
    return frozenset(t.text.lower() for t, n in pairs if n.token_type == TokenType.L_PAREN)
