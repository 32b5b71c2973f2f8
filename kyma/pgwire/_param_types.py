"""The types of ``$n`` parameters a client left unspecified, for ParameterDescription.

Postgres infers them from the statement; strict drivers (asyncpg) then encode each argument
as that type. Inferred here from the text: a cast (``$1::int``, ``CAST($1 AS date)``), a
comparison with a column of a table the statement reads (``n = $1``, ``$1 < ts``,
``n IN ($1, $2)``, ``ts BETWEEN $1 AND $2``) or ``LIMIT``/``OFFSET``; text otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pyarrow as pa

from kyma.pgwire import _types as t

_NAMES = {
    "int": t.INT4,
    "integer": t.INT4,
    "int4": t.INT4,
    "smallint": t.INT2,
    "int2": t.INT2,
    "bigint": t.INT8,
    "int8": t.INT8,
    "long": t.INT8,
    "real": t.FLOAT4,
    "float4": t.FLOAT4,
    "float": t.FLOAT8,
    "float8": t.FLOAT8,
    "double": t.FLOAT8,
    "double precision": t.FLOAT8,
    "numeric": t.NUMERIC,
    "decimal": t.NUMERIC,
    "bool": t.BOOL,
    "boolean": t.BOOL,
    "text": t.TEXT,
    "varchar": t.TEXT,
    "string": t.TEXT,
    "date": t.DATE,
    "timestamp": t.TIMESTAMPTZ,
    "timestamptz": t.TIMESTAMPTZ,
    "jsonb": t.JSONB,
    "json": t.JSONB,
}
_ARRAYS = {"oid[]": 1028, "int[]": 1007, "bigint[]": 1016, "text[]": 1009, "int8[]": 1016}
_TYPE = r"(?P<type>double\s+precision|\w+(?:\s*\[\s*\])?)"
_TYPE2 = _TYPE.replace("type", "type2")
_CAST = re.compile(rf"\$(?P<n>\d+)\s*::\s*{_TYPE}|cast\s*\(\s*\$(?P<m>\d+)\s+as\s+{_TYPE2}", re.I)
_NAME = r'(?:"[^"]+"|\w+)'
_COLUMN = rf"(?P<col>(?:{_NAME}\s*\.\s*)*{_NAME})"
_OP = r"(?:=|<>|!=|<=|>=|<|>)"
_LEFT = re.compile(rf"{_COLUMN}\s*{_OP}\s*\$(?P<n>\d+)\b")
_RIGHT = re.compile(rf"\$(?P<n>\d+)\s*{_OP}\s*{_COLUMN}")
_IN = re.compile(rf"{_COLUMN}\s+(?:not\s+)?in\s*\((?P<list>\s*\$\d+(?:\s*,\s*\$\d+)*)\s*\)", re.I)
_BETWEEN = re.compile(rf"{_COLUMN}\s+(?:not\s+)?between\s+\$(?P<a>\d+)\s+and\s+\$(?P<b>\d+)", re.I)
_LIMIT = re.compile(r"\b(?:limit|offset)\s+\$(?P<n>\d+)", re.I)
_TABLE = re.compile(rf"\b(?:from|join)\s+(?P<table>{_NAME})", re.I)
_STRING = re.compile(r"'(?:[^']|'')*'")


def referenced_tables(sql: str) -> set[str]:
    """The names after FROM and JOIN (unquoted, lower case)."""
    code = _STRING.sub("''", sql)
    return {m.group("table").strip('"').lower() for m in _TABLE.finditer(code)}


def column_types(schemas: Iterable[pa.Schema]) -> dict[str, int]:
    """Column name (lower case) → type OID over ``schemas``; the first table wins a name."""
    found: dict[str, int] = {}
    for schema in schemas:
        for field in schema:
            found.setdefault(field.name.lower(), t.type_oid(field))
    return found


def infer(sql: str, declared: list[int], columns: Mapping[str, int]) -> list[int]:
    """Each parameter's OID: the declared one, else inferred, else text.

    >>> infer("SELECT * FROM e WHERE n = $1 AND $2 < ts LIMIT $3", [0, 0, 0],
    ...       {"n": 20, "ts": 1184})
    [20, 1184, 20]
    >>> infer("SELECT $1::int, CAST($2 AS double precision), e.x IN ($3, $4)", [0, 25, 0, 0],
    ...       {"x": 701})
    [23, 25, 701, 701]
    """
    code = _STRING.sub("''", sql)
    found: dict[int, int] = {}

    def note(number: str, oid: int | None) -> None:
        if oid is not None:
            found.setdefault(int(number), oid)

    for match in _CAST.finditer(code):
        name = " ".join((match.group("type") or match.group("type2")).lower().split())
        name = re.sub(r"\s*\[\s*\]", "[]", name)
        note(match.group("n") or match.group("m"), _NAMES.get(name) or _ARRAYS.get(name))
    for pattern in (_LEFT, _RIGHT):
        for match in pattern.finditer(code):
            note(match.group("n"), _column(match.group("col"), columns))
    for match in _IN.finditer(code):
        for number in re.findall(r"\d+", match.group("list")):
            note(number, _column(match.group("col"), columns))
    for match in _BETWEEN.finditer(code):
        for number in (match.group("a"), match.group("b")):
            note(number, _column(match.group("col"), columns))
    for match in _LIMIT.finditer(code):
        note(match.group("n"), t.INT8)
    return [oid or found.get(i, t.TEXT) for i, oid in enumerate(declared, start=1)]


def _column(reference: str, columns: Mapping[str, int]) -> int | None:
    name = reference.rsplit(".", 1)[-1].strip().strip('"').lower()
    return columns.get(name)
