"""Schema evolution mid-batch: which unknown fields become columns, go to props, or drop.

The seed's rule: identifier-safe names (``[a-z0-9_]``, not starting with a digit, not a
default column) become new ``string`` columns, at most 32 per request in order of first
appearance; other unknown fields go into ``props``. With evolution off they are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column

MAX_NEW_COLUMNS = 32
_SAFE = re.compile(r"[a-z_][a-z0-9_]{0,127}")


@dataclass(frozen=True)
class EvolutionPlan:
    new_columns: list[str] = field(default_factory=list)
    props_fields: list[str] = field(default_factory=list)
    dropped_fields: list[str] = field(default_factory=list)


def is_safe_name(name: str) -> bool:
    """Whether an unknown field may become a column.

    >>> [is_safe_name(n) for n in ("http_status", "2xx", "User", "a.b", "props")]
    [True, False, False, False, False]
    """
    return bool(_SAFE.fullmatch(name)) and name not in DEFAULT_COLUMN_NAMES


def plan_evolution(
    keys: Sequence[str], columns: Sequence[Column], *, evolve: bool
) -> EvolutionPlan:
    """Decide the fate of every key not already a column."""
    known = {c.name for c in columns}
    unknown = [k for k in keys if k not in known]
    if not evolve:
        return EvolutionPlan(dropped_fields=unknown)
    new: list[str] = []
    props: list[str] = []
    for key in unknown:
        if is_safe_name(key) and len(new) < MAX_NEW_COLUMNS:
            new.append(key)
        else:
            props.append(key)
    return EvolutionPlan(new_columns=new, props_fields=props)
