"""Which relations a statement may change the rows of: not a view, and not the table that
holds a materialized view's rows (only its upkeep and REFRESH change those)."""

from __future__ import annotations

from kyma.engine.catalog import Catalog
from kyma.engine.errors import UnsupportedStatementError, WrongObjectTypeError


def refuse_view(catalog: Catalog, name: str) -> None:
    """WrongObjectTypeError (42809) when ``name`` is a view: its rows are not a table's."""
    view = catalog.get_views([name]).get(name)
    if view is not None and view.materialized:
        raise WrongObjectTypeError(f'cannot change materialized view "{name}"')
    if view is not None:
        raise UnsupportedStatementError(f'cannot change view "{name}": kyma\'s views are read-only')


STORAGE_PREFIX = "_matview_"
"""How the tables holding materialized views' rows are named (``_matviews``)."""


def refuse_storage(catalog: Catalog, name: str) -> None:
    """WrongObjectTypeError (42809) when ``name`` holds a materialized view's rows: only its
    upkeep and REFRESH change them."""
    if not name.startswith(STORAGE_PREFIX):
        return
    for view in catalog.list_views():
        if view.storage == name:
            raise WrongObjectTypeError(
                f'cannot change "{name}": it holds the rows of materialized view "{view.name}"'
            )
