"""The server functions clients call in catalog statements, as DataFusion UDFs: psql's
(pg_get_userbyid, pg_table_is_visible, format_type, pg_get_expr, pg_encoding_to_char),
Grafana's (quote_ident, parse_ident, current_setting) and the session functions (version,
current_schema, current_database). Registered in every statement's session.
"""

from __future__ import annotations

from collections.abc import Callable

import datafusion
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.errors import UnsupportedStatementError
from kyma.pgcatalog._information_schema import DATABASE, SCHEMA
from kyma.pgcatalog._relations import DATABASE_OWNER_OID, OWNER, TYPE_NAMES, formatted_type
from kyma.pgwire._session import DEFAULTS, SERVER_VERSION, VERSION

_PLAIN_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_$")


def quote_ident(name: str) -> str:
    """A name as SQL spells it: quoted unless plain lower-case.

    >>> quote_ident("events"), quote_ident("Events"), quote_ident('a"b')
    ('events', '"Events"', '"a""b"')
    """
    if name and not name[0].isdigit() and set(name) <= _PLAIN_NAME:
        return name
    return '"' + name.replace('"', '""') + '"'


def _constant(value: str) -> Callable[[], pa.Array]:
    return lambda: pa.array([value], pa.string())


def _each(fn: Callable[[object], object], output: pa.DataType) -> Callable[..., pa.Array]:
    """A UDF applying ``fn`` to each value of its first argument (NULL stays NULL)."""

    def apply(values: pa.Array, *_: pa.Array) -> pa.Array:
        return pa.array([None if v is None else fn(v) for v in values.to_pylist()], output)

    return apply


def _format_type(oids: pa.Array, _mods: pa.Array) -> pa.Array:
    names = [TYPE_NAMES.get(o) for o in pc.cast(oids, pa.int64()).to_pylist()]
    return pa.array([formatted_type(n) if n else None for n in names], pa.string())


def _alone(name: str) -> Callable[..., pa.Array]:
    """``pg_cancel_backend`` and ``pg_terminate_backend`` anywhere but a statement of their
    own (``_signal``): planned (a prepared statement's columns), refused when evaluated."""

    def refuse(values: pa.Array, *_: pa.Array) -> pa.Array:
        raise UnsupportedStatementError(
            f"{name}(pid) runs in a statement of its own in kyma: SELECT {name}(12345)"
            " (the pid from pg_stat_activity)"
        )

    return refuse


_TYPE_OIDS = {name: oid for oid, name in TYPE_NAMES.items()}
_TYPE_OIDS.update({formatted_type(name): oid for oid, name in TYPE_NAMES.items()})
_TYPE_OIDS.update({"int": _TYPE_OIDS["int4"], "timestamptz": _TYPE_OIDS["timestamptz"]})


def to_regtype(name: str) -> int | None:
    """The OID of the type ``name`` names, or None (Postgres' ``to_regtype``, read as OID).

    >>> to_regtype("bigint"), to_regtype("pg_catalog.jsonb"), to_regtype("_float4")
    (20, 3802, 1021)
    >>> to_regtype("real[]"), to_regtype("hstore")
    (1021, None)
    """
    plain = name.strip().lower().removeprefix("pg_catalog.")
    return _TYPE_OIDS.get(plain)


def _role_name(oid: object) -> str:
    return "pg_database_owner" if oid == DATABASE_OWNER_OID else OWNER


def _nulls(values: pa.Array, *_: pa.Array) -> pa.Array:
    return pa.nulls(len(values), pa.string())


_SETTINGS = {**DEFAULTS, "server_version_num": SERVER_VERSION.replace(".", "0") + "00"}
_TEXT, _INT, _BOOL, _NAMES = pa.string(), pa.int64(), pa.bool_(), pa.list_(pa.string())
# name → (function, argument types, result type)
FUNCTIONS: dict[str, tuple[Callable[..., pa.Array], list[pa.DataType], pa.DataType]] = {
    "version": (_constant(VERSION), [], _TEXT),
    "current_schema": (_constant(SCHEMA), [], _TEXT),
    "current_database": (_constant(DATABASE), [], _TEXT),
    "current_schemas": (_each(lambda _: ["pg_catalog", SCHEMA], _NAMES), [_BOOL], _NAMES),
    "current_setting": (_each(lambda n: _SETTINGS.get(str(n)), _TEXT), [_TEXT], _TEXT),
    "pg_get_userbyid": (_each(_role_name, _TEXT), [_INT], _TEXT),
    "pg_table_is_visible": (_each(lambda _: True, _BOOL), [_INT], _BOOL),
    "pg_collation_is_visible": (_each(lambda _: True, _BOOL), [_INT], _BOOL),
    "pg_type_is_visible": (_each(lambda _: True, _BOOL), [_INT], _BOOL),
    "format_type": (_format_type, [_INT, _INT], _TEXT),
    "pg_get_expr": (_nulls, [_TEXT, _INT], _TEXT),
    "to_regtype": (_each(lambda n: to_regtype(str(n)), _INT), [_TEXT], _INT),
    "pg_encoding_to_char": (_each(lambda _: "UTF8", _TEXT), [_INT], _TEXT),
    "quote_ident": (_each(lambda n: quote_ident(str(n)), _TEXT), [_TEXT], _TEXT),
    "parse_ident": (_each(lambda n: str(n).split("."), _NAMES), [_TEXT], _NAMES),
    "pg_cancel_backend": (_alone("pg_cancel_backend"), [_INT], _BOOL),
    "pg_terminate_backend": (_alone("pg_terminate_backend"), [_INT], _BOOL),
}


def udfs() -> list[datafusion.ScalarUDF]:
    """Every function of ``FUNCTIONS`` as a UDF (built once, registered per session)."""
    return [
        datafusion.udf(fn, inputs, output, "stable", name)
        for name, (fn, inputs, output) in FUNCTIONS.items()
    ]
