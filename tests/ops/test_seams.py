"""The pluggable seams stay generic: the code around a connector or source type names no
type, and reaches a type only through its registry line and its base class's public methods.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kyma.connectors import spec
from kyma.connectors.base import Connector
from kyma.connectors.types import CONNECTOR_TYPES, connector_type
from kyma.ingest import sources
from kyma.ingest.source import Source
from kyma.ingest.source_types import SOURCE_TYPES

ROOT = Path(__file__).resolve().parents[2]
GENERIC_CONNECTORS = ["connectors/registry.py", "connectors/sync.py", "connectors/base.py"]
GENERIC_SOURCES = ["ingest/sources.py", "ingest/source_statements.py", "ingest/source.py"]


def _strings(path: str) -> set[str]:
    """String constants in ``path``, but sqlglot dialect names (``e.sql("postgres")``,
    ``dialect="postgres"``)."""
    tree = ast.parse((ROOT / path).read_text())
    dialects: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr == "sql":
                dialects.update(id(a) for a in n.args)
            dialects.update(id(k.value) for k in n.keywords if k.arg == "dialect")
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in dialects
    }


def _imports(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    found = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return found | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_every_connector_type_is_a_connector() -> None:
    assert tuple(CONNECTOR_TYPES) == spec.TYPES
    for name in CONNECTOR_TYPES:
        assert issubclass(connector_type(name), Connector)


def test_generic_connector_code_names_no_type() -> None:
    for path in GENERIC_CONNECTORS:
        assert not {m for m in _imports(path) if m.startswith("kyma.connectors.postgres")}, path
        assert not set(CONNECTOR_TYPES) & _strings(path), path


def test_cdc_uses_only_public_connector_methods() -> None:
    private = re.compile(r"\bconnector\._[a-z]")
    for path in sorted((ROOT / "connectors/postgres/cdc").glob("*.py")):
        assert not private.search(path.read_text()), path.name


def test_every_source_type_is_a_source() -> None:
    assert tuple(SOURCE_TYPES) == sources.TYPES
    for name, source in SOURCE_TYPES.items():
        assert isinstance(source, Source) and source.type_name == name


def test_generic_source_code_names_no_type() -> None:
    for path in GENERIC_SOURCES:
        assert not set(SOURCE_TYPES) & _strings(path), path
        assert not {m for m in _imports(path) if m.split(".")[2:3] in (["kafka"], ["filedrop"])}
