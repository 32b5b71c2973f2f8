"""Per-table scans for a query block that cannot run whole at one source.

Each source table in such a block becomes its own scan: the columns the block reads, the
WHERE and ON conjuncts that touch only that table (where moving them below the join is
sound), and ORDER BY / LIMIT when the block is a plain filter over that one table.
Everything else stays in the block, which DataFusion runs over the scans' answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from kyma.connectors.base import SourceTable
from kyma.connectors.capabilities import Capabilities, first_blocker
from kyma.connectors.pushdown._scan import ORDINAL


@dataclass
class TableSplit:
    """What one table's scan takes out of its block, and what it leaves behind."""

    columns: list[str]
    filters: list[exp.Expression] = field(default_factory=list)
    order: list[exp.Ordered] = field(default_factory=list)
    limit: int | None = None
    residual: list[dict[str, str]] = field(default_factory=list)

    @property
    def ordinal(self) -> bool:
        return bool(self.order)


def split_table(
    scope: Scope, alias: str, table: SourceTable, capabilities: Capabilities, *, pushdown: bool
) -> TableSplit:
    """Plan the scan of ``table`` (named ``alias`` in ``scope``) and edit the block to match."""
    select = scope.expression
    split = TableSplit(columns=[])
    if not pushdown:
        split.columns = _columns(select, alias, table)
        split.residual.append({"expression": "*", "reason": "pushdown_disabled"})
        return split
    where = select.args.get("where")
    conjuncts = conjuncts_of(where.this) if where is not None else []
    kept = []
    null_side = alias in _null_supplying(select)
    for conjunct in conjuncts:
        reason = (
            "null_supplying_side" if null_side else _conjunct_blocker(conjunct, alias, capabilities)
        )
        if reason is None:
            split.filters.append(conjunct)
        else:
            kept.append(conjunct)
            if reason != "other_table":
                split.residual.append({"expression": conjunct.sql("postgres"), "reason": reason})
    _set_where(select, kept)
    join = _own_join(select, alias)
    if join is not None and join.side in ("", "LEFT") and join.args.get("on") is not None:
        _split_on(join, alias, capabilities, split)
    _push_order_and_limit(select, alias, capabilities, split, kept_filters=bool(kept))
    split.columns = _columns(select, alias, table)
    return split


def conjuncts_of(condition: exp.Expression) -> list[exp.Expression]:
    """The top-level AND operands of a condition (the condition itself if it is no AND)."""
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def _columns(select: exp.Select, alias: str, table: SourceTable) -> list[str]:
    """Columns of ``table`` the block (and its correlated subqueries) reads, in table order."""
    used = {c.name for c in select.find_all(exp.Column) if c.table == alias}
    return [c.name for c in table.columns if c.name in used]


def _conjunct_blocker(
    conjunct: exp.Expression, alias: str, capabilities: Capabilities
) -> str | None:
    tables = {c.table for c in conjunct.find_all(exp.Column)}
    if alias not in tables:
        return "other_table"
    if any(isinstance(n, exp.Query) for n in conjunct.walk()):
        return "subquery"
    if tables != {alias}:
        return "cross_table"
    blocked = first_blocker(conjunct, capabilities)
    return blocked[1] if blocked else None


def _null_supplying(select: exp.Select) -> set[str]:
    """Aliases whose rows an outer join may replace by NULLs (a WHERE on them stays above)."""
    seen = (
        {s.alias_or_name for s in [select.args["from_"].this]}
        if select.args.get("from_")
        else set()
    )
    nullable: set[str] = set()
    for join in select.args.get("joins") or []:
        name = join.this.alias_or_name
        if join.side in ("RIGHT", "FULL"):
            nullable |= seen
        if join.side in ("LEFT", "FULL"):
            nullable.add(name)
        seen.add(name)
    return nullable


def _own_join(select: exp.Select, alias: str) -> exp.Join | None:
    return next((j for j in select.args.get("joins") or [] if j.this.alias_or_name == alias), None)


def _split_on(join: exp.Join, alias: str, capabilities: Capabilities, split: TableSplit) -> None:
    """ON conjuncts on the joined table alone filter it before an inner or left join."""
    kept = []
    for conjunct in conjuncts_of(join.args["on"]):
        if _conjunct_blocker(conjunct, alias, capabilities) is None:
            split.filters.append(conjunct)
        else:
            kept.append(conjunct)
    join.set("on", exp.and_(*kept) if kept else exp.true())


def _set_where(select: exp.Select, conjuncts: list[exp.Expression]) -> None:
    select.set("where", exp.Where(this=exp.and_(*conjuncts)) if conjuncts else None)


def _push_order_and_limit(
    select: exp.Select, alias: str, capabilities: Capabilities, split: TableSplit, *,
    kept_filters: bool,
) -> None:  # fmt: skip
    """ORDER BY and LIMIT go down only when the block is a plain filter over this table."""
    limit = select.args.get("limit")
    order = select.args.get("order")
    if limit is None and order is None:
        return
    reason = _order_limit_blocker(select, capabilities, kept_filters)
    keys = [_order_key(o, select, alias, capabilities) for o in order.expressions] if order else []
    if reason is None and None in keys:
        reason = "order_key_not_pushable"
    if reason is not None:
        shown = " ".join(n.sql("postgres") for n in (order, limit) if n is not None)
        split.residual.append({"expression": shown, "reason": reason})
        return
    split.order = keys  # type: ignore[assignment]
    if order is not None:
        ordinal = exp.column(ORDINAL, table=alias)
        order.set("expressions", [exp.Ordered(this=ordinal, desc=False, nulls_first=False)])
    if limit is not None:
        offset = select.args.get("offset")
        split.limit = _integer(limit.expression) + (_integer(offset.expression) if offset else 0)


def _order_limit_blocker(
    select: exp.Select, capabilities: Capabilities, kept_filters: bool
) -> str | None:
    if select.args.get("joins"):
        return "join"  # a LIMIT above a join never limits one of its inputs
    if kept_filters:
        return "above_residual_filter"
    if select.args.get("group") or select.args.get("having") or select.args.get("distinct"):
        return "above_aggregate"
    for node in select.walk(prune=lambda n: n is not select and isinstance(n, exp.Query)):
        if isinstance(node, exp.Window):
            return "above_window_function"
        if isinstance(node, exp.AggFunc):
            return "above_aggregate"
        if isinstance(node, exp.Func) and capabilities.blocker(node) == "function_not_pushable":
            # Only kyma's own functions are known to keep one row per row (unnest does not).
            return "above_unknown_function"
    for part in ("limit", "offset"):
        node = select.args.get(part)
        if node is not None and _integer(node.expression) is None:
            return "limit_not_constant"
    return None


def _order_key(
    ordered: exp.Ordered, select: exp.Select, alias: str, capabilities: Capabilities
) -> exp.Ordered | None:
    """The ORDER BY key as the source can evaluate it (output names resolved), or None."""
    key = ordered.this
    if isinstance(key, exp.Column) and not key.table:
        named = next((p for p in select.expressions if p.alias_or_name == key.name), None)
        key = named.unalias() if named is not None else key
    if _conjunct_blocker(key, alias, capabilities) is not None:
        return None
    pushed = ordered.copy()
    pushed.set("this", key.copy())
    return pushed


def _integer(node: exp.Expression | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return int(node.name)
    return None
