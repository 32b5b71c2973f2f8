"""Plan templates: one plan for every statement of a shape (``_shapes``), its lifted literals
put in place per statement.

A template is made from two plans of the shape: the statement's own, and one of the same
shape with a distinct stand-in for each literal (``_shapes.sentinels``). It is kept only if
the second, with the statement's literals put where its stand-ins landed, *is* the first:
the same SQL for DataFusion, the same pruning predicates, the same everything else. So a
literal that a rewrite reads (folds, converts, spells anew) or that pruning converts (a
timestamp, a ``>`` bound) makes no template: such a shape is planned by its text, as before.
A plan that answers from statistics or reads extents in time order has none either.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from typing import Any

from kyma.engine.query._plans import Plan
from kyma.engine.query._shapes import Shape, sql_text, value_of


@dataclass(frozen=True)
class Template:
    """``parts``: the SQL around each literal (one more than ``slots``); ``slots``: which
    literal goes between two parts; ``plan``: the stand-ins' plan (its predicates hold
    ``stand_ins``)."""

    plan: Plan
    parts: tuple[str, ...]
    slots: tuple[int, ...]
    stand_ins: tuple[int | str, ...]

    def bind(self, shape: Shape) -> Plan:
        """The plan of a statement of this shape."""
        texts = [sql_text(c, v) for c, v in zip(shape.classes, shape.literals, strict=True)]
        sql = [self.parts[0]]
        for slot, part in zip(self.slots, self.parts[1:], strict=True):
            sql += [texts[slot], part]
        swap = dict(zip(self.stand_ins, shape.values(), strict=True))
        sources = {
            name: replace(s, predicates=[_swapped(p, swap) for p in s.predicates])
            for name, s in self.plan.sources.items()
        }
        return replace(self.plan, sql="".join(sql), sources=sources)


def derive(stand_in: Plan, own: Plan, shape: Shape, sentinels: list[str]) -> Template | None:
    """The template of ``shape`` from the stand-ins' plan and the statement's own, or None
    when the statement's plan is not the stand-ins' with its literals in place."""
    if stand_in.statistics is not None or stand_in.time_order is not None:
        return None
    if own.statistics is not None or own.time_order is not None or own.relations:
        return None
    written = [sql_text(c, s) for c, s in zip(shape.classes, sentinels, strict=True)]
    parts, slots = _split(stand_in.sql, written)
    if sorted(set(slots)) != list(range(len(written))):
        return None  # a literal the plan does not hand DataFusion as written
    stand_ins = tuple(value_of(c, s) for c, s in zip(shape.classes, sentinels, strict=True))
    template = Template(stand_in, tuple(parts), tuple(slots), stand_ins)
    if len(set(stand_ins)) != len(stand_ins) or template.bind(shape) != own:
        return None
    return template


def _split(sql: str, written: list[str]) -> tuple[list[str], list[int]]:
    """``sql`` cut at every occurrence of the stand-ins in ``written``."""
    parts, slots, at, start = [], [], 0, 0
    while at < len(sql):
        found = next(
            (i for i, w in enumerate(written) if sql.startswith(w, at) and _alone(sql, at, w)),
            None,
        )
        if found is None:
            at += 1
            continue
        parts.append(sql[start:at])
        slots.append(found)
        at = start = at + len(written[found])
    parts.append(sql[start:])
    return parts, slots


def _alone(sql: str, at: int, written: str) -> bool:
    """A number stand-in not inside a longer number or name (``x1987654301``)."""
    if written.startswith("'"):
        return True
    end = at + len(written)
    before = sql[at - 1] if at else " "
    after = sql[end] if end < len(sql) else " "
    return not (before.isalnum() or before in "_.") and not (after.isalnum() or after in "_.")


def _swapped(value: Any, swap: dict[Any, Any]) -> Any:
    """``value`` (a pruning predicate) with each stand-in value replaced by its literal's."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        found = swap.get(value, value)
        return found if type(found) is type(value) else value
    if isinstance(value, tuple):
        return tuple(_swapped(v, swap) for v in value)
    if isinstance(value, frozenset):
        return frozenset(_swapped(v, swap) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _swapped(getattr(value, f.name), swap) for f in dataclasses.fields(value)
        }
        return replace(value, **changes)
    return value
