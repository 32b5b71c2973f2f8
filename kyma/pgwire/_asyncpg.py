"""asyncpg's type lookup: before it decodes an array type other than ``text[]`` and
``oid[]`` (a vector's ``real[]``, say) asyncpg asks the server about the type with one
recursive query over pg_type (its ``introspection.INTRO_LOOKUP_TYPES``). That query needs
more of Postgres than kyma's catalog context has, so it is recognised and answered here.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot.tokens import Token, TokenType

from kyma.engine.query import QueryResult
from kyma.pgcatalog._relations import TYPE_NAMES, formatted_type
from kyma.pgwire import _types as t
from kyma.pgwire._session_sql import tokens

_MARK = ["with", "recursive", "typeinfo_tree", "("]
_OIDS = ["any", "(", "array", "["]
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
    if "typeinfo_tree" not in sql:  # most statements: not tokenized again
        return None
    found = tokens(sql, limit=None)
    words = [token.text.lower() for token in found]
    if not any(words[i : i + 4] == _MARK for i in range(len(words))):
        return None
    start = next((i + 4 for i in range(len(words)) if words[i : i + 4] == _OIDS), len(words))
    wanted = _numbers(found[start:])
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


def _numbers(found: list[Token]) -> list[int]:
    """The integers of ``1, 2, 3]``, up to the bracket."""
    numbers = []
    for token in found:
        if token.token_type == TokenType.NUMBER:
            numbers.append(int(token.text))
        elif token.token_type != TokenType.COMMA:
            break
    return numbers
