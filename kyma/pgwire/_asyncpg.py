"""asyncpg's type lookup: before it decodes an array type other than ``text[]`` and
``oid[]`` (a vector's ``real[]``, say) asyncpg asks the server about the type with one
recursive query over pg_type (its ``introspection.INTRO_LOOKUP_TYPES``). That query needs
more of Postgres than kyma's catalog context has, so it is recognised and answered here.
"""

from __future__ import annotations

import re

import pyarrow as pa

from kyma.engine.query import QueryResult
from kyma.pgcatalog._relations import TYPE_NAMES, formatted_type
from kyma.pgwire import _types as t

_MARK = re.compile(r"WITH\s+RECURSIVE\s+typeinfo_tree\s*\(", re.I)
_OIDS = re.compile(r"any\s*\(\s*ARRAY\s*\[([\d\s,]*)\]", re.I)
_ELEMENT = {array: element for element, array in t.ARRAY_OF.items()}
_SCHEMA = pa.schema(
    [
        ("oid", pa.int64()),
        ("ns", pa.string()),
        ("name", pa.string()),
        ("kind", pa.string()),
        ("basetype", pa.int64()),
        ("elemtype", pa.int64()),
        ("elemdelim", pa.string()),
        ("range_subtype", pa.int64()),
        ("attrtypoids", pa.list_(pa.string())),  # always NULL; text[] needs no lookup
        ("attrnames", pa.list_(pa.string())),
        ("depth", pa.int32()),
        ("basetype_name", pa.string()),
        ("elemtype_name", pa.string()),
        ("range_subtype_name", pa.string()),
    ]
)


def answer(sql: str) -> QueryResult | None:
    """The rows of asyncpg's type lookup (array types kyma returns), or None for any other
    statement."""
    if not _MARK.search(sql):
        return None
    match = _OIDS.search(sql)
    wanted = [int(n) for n in re.findall(r"\d+", match.group(1))] if match else []
    rows = [
        {
            "oid": oid,
            "ns": "pg_catalog",
            "name": TYPE_NAMES[oid],
            "kind": "b",
            "elemtype": _ELEMENT[oid],
            "elemdelim": ",",
            "depth": 0,
            "elemtype_name": formatted_type(TYPE_NAMES[_ELEMENT[oid]]),
        }
        for oid in dict.fromkeys(wanted)
        if oid in _ELEMENT
    ]
    return QueryResult(pa.Table.from_pylist(rows, schema=_SCHEMA), "OK")
