"""Replacing many nodes of a tree in linear time.

sqlglot's ``replace`` of one element of a list re-parents every element of that list, so
replacing each of n subqueries in one SELECT list is quadratic (seconds at a few thousand).
``replace_all`` sets each list once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlglot import exp


def replace_all(pairs: Iterable[tuple[exp.Expr, exp.Expr | None]]) -> None:
    """Each node of ``pairs`` replaced by its new node, or taken out for None (a root node
    is left as it is).

    >>> select = exp.select("a", "b", "c")
    >>> replace_all((column, exp.null()) for column in list(select.find_all(exp.Column))[:2])
    >>> select.sql()
    'SELECT NULL, NULL, c'
    """
    lists: dict[tuple[int, str], tuple[Any, str, dict[int, exp.Expr | None]]] = {}
    for node, new in pairs:
        parent, key = node.parent, node.arg_key
        if parent is None or key is None:
            continue
        if node.index is None:
            node.replace(new) if new is not None else node.pop()
            continue
        lists.setdefault((id(parent), key), (parent, key, {}))[2][node.index] = new
    for parent, key, news in lists.values():
        items: list[exp.Expr | None] = list(parent.args.get(key) or [])
        for index, new in news.items():
            items[index].parent = None  # type: ignore[union-attr]
            items[index] = new
        parent.set(key, [item for item in items if item is not None])
