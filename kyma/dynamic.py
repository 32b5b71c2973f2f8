"""Dynamic values as every client sees them: JSON text, never the CBOR bytes kyma keeps.

One renderer for Flight SQL, the Postgres protocol, ``POST /v1/query``, the REPL and its
``\\copy``: each distinct value of a column is decoded and rendered once (a million rows
holding a few hundred distinct values cost a few hundred decodes), all with the same options.
"""

from __future__ import annotations

from typing import Any

import cbor2
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.types import KYMA_TYPE_KEY


def is_dynamic(field: pa.Field) -> bool:
    return (field.metadata or {}).get(KYMA_TYPE_KEY) == b"dynamic"


def json_text(value: Any) -> str:
    """One value as compact JSON: keys that are no strings as text, the rest orjson cannot
    spell (bytes, sets) as their ``str``; NaN and infinities as null.

    >>> json_text({"a": [1, 2.5, None], 3: "x"}), json_text(float("nan"))
    ('{"a":[1,2.5,null],"3":"x"}', 'null')
    """
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def json_texts(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A dynamic column's CBOR values as JSON text (a string array, null for NULL), each
    distinct value decoded once.

    >>> json_texts(pa.array([cbor2.dumps({"a": 1}), None, cbor2.dumps({"a": 1})])).to_pylist()
    ['{"a":1}', None, '{"a":1}']
    """
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    distinct = pc.unique(values)
    texts = pa.array(
        [None if raw is None else json_text(cbor2.loads(raw)) for raw in distinct.to_pylist()],
        pa.string(),
    )
    return texts.take(pc.index_in(values, distinct))


def with_json_text(table: pa.Table) -> pa.Table:
    """``table`` with each dynamic column as JSON text (a plain string column)."""
    for i, field in enumerate(table.schema):
        if is_dynamic(field):
            text = pa.field(field.name, pa.string(), field.nullable)
            table = table.set_column(i, text, json_texts(table.column(i)))
    return table
