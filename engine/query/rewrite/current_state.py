"""A CDC-synced table read by name answers the source's current rows: the latest version of
each ``_kyma_pk`` by ``_kyma_lsn``, tombstones (``_kyma_op = 'delete'``) removed, the
source's columns only. The change log itself (system columns and all) is read by the name
the federation maps to it (``Federation.change_log_of``: the connectors' ``<table>__changes``).
The planner applies ``view`` to each reference once the table is resolved.

>>> from kyma.engine.types import Column, KymaType
>>> cols = [Column("id", KymaType("int")), Column("_kyma_pk", KymaType("string"))]
>>> sql = view(exp.to_table("users"), "users", cols).sql("postgres")
>>> print(sql.split(" FROM ")[0], "...", sql.split(" WHERE ")[1])
(SELECT "id" ... "__kyma_rn" = 1 AND "_kyma_op" <> 'delete') AS "users"
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from kyma.engine.types import Column

OPTION = "cdc"
HIDDEN = ("_timestamp", "props", "_kyma_pk", "_kyma_op", "_kyma_lsn", "_kyma_event_at")


def is_cdc(options: dict) -> bool:  # type: ignore[type-arg]
    return OPTION in options


def view(table: exp.Table, alias: str, columns: Sequence[Column]) -> exp.Subquery:
    """The current-state subquery standing for ``table`` (already renamed for the session)."""
    shown = [exp.column(c.name, quoted=True) for c in columns if c.name not in HIDDEN]
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[exp.column("_kyma_pk", quoted=True)],
        order=exp.Order(
            expressions=[exp.Ordered(this=exp.column("_kyma_lsn", quoted=True), desc=True)]
        ),
    )
    inner_table = table.copy()
    inner_table.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
    versions = exp.select(
        *[c.copy() for c in shown],
        exp.column("_kyma_op", quoted=True),
        exp.alias_(rank, "__kyma_rn", quoted=True),
    ).from_(inner_table)
    current = (
        exp.select(*shown)
        .from_(versions.subquery("__kyma_versions", copy=False))
        .where(
            exp.and_(
                exp.EQ(this=exp.column("__kyma_rn", quoted=True), expression=exp.Literal.number(1)),
                exp.NEQ(
                    this=exp.column("_kyma_op", quoted=True),
                    expression=exp.Literal.string("delete"),
                ),
            )
        )
    )
    return current.subquery(exp.to_identifier(alias, quoted=True), copy=False)
