"""Connector types by name: adding a connector type is its folder plus one line here.

A type is a :class:`~kyma.connectors.base.Connector` subclass, named by import path so that
a type's drivers load only when a connector of that type opens.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kyma.connectors.base import Connector

CONNECTOR_TYPES: dict[str, str] = {
    "postgres": "kyma.connectors.postgres:PostgresConnector",
}


def connector_type(name: str) -> type[Connector]:
    """The Connector subclass of type ``name`` (one of CONNECTOR_TYPES; specs check it)."""
    module, _, attribute = CONNECTOR_TYPES[name].partition(":")
    cls: type[Connector] = getattr(importlib.import_module(module), attribute)
    return cls
