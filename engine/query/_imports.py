"""Table functions over files: ``read_parquet('<path>')``, ``read_csv('<path>')`` (a header
line, types inferred) and ``read_ndjson('<path>')`` (one JSON object a line; also
``read_json``), a file or a folder of them, in any query (so in INSERT … SELECT and CREATE
TABLE AS too). DataFusion reads them, streaming, as it reads any table.

Only folders an admin allowed (``KYMA_IMPORT_DIRS``) are read: the path, with its symbolic
links resolved, must lie inside one of them; anything else is 42501, so a query can never
read an arbitrary host path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from datafusion import SessionContext
from sqlglot import exp

from kyma.engine.errors import NotFoundError, PermissionDeniedError, UnsupportedStatementError

FUNCTIONS = {
    "read_parquet": "parquet",
    "read_csv": "csv",
    "read_ndjson": "json",
    "read_json": "json",
}
_NODES = {exp.ReadParquet: "read_parquet", exp.ReadCSV: "read_csv"}


@dataclass(frozen=True)
class Import:
    """A file (or folder) a query reads, under the name its session table has."""

    name: str
    kind: str
    path: Path

    def register(self, ctx: SessionContext) -> pa.Schema:
        """Register it with DataFusion; its columns."""
        path = str(self.path)
        ext = self.path.suffix if self.path.is_file() else f".{self.kind}"
        if self.kind == "parquet":
            ctx.register_parquet(self.name, path, file_extension=ext)
        elif self.kind == "csv":
            ctx.register_csv(self.name, path, file_extension=ext)
        else:
            ctx.register_json(self.name, path, file_extension=ext)
        return ctx.table(self.name).schema()


def resolve(stmt: exp.Expression, allowed: Sequence[Path]) -> list[Import]:
    """Replace each table function call in ``stmt`` by a table reference (in place; its alias
    is the function's name unless it has one); the files they read, each checked against
    the ``allowed`` folders."""
    found: list[Import] = []
    for table in list(stmt.find_all(exp.Table)):
        function = _function(table.this)
        if function is None:
            continue
        name = f"import:{len(found)}"
        found.append(Import(name, FUNCTIONS[function], _allowed(_path(table.this), allowed)))
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(function)))
        table.set("this", exp.to_identifier(name, quoted=True))
    return found


def _function(node: exp.Expression) -> str | None:
    for kind, name in _NODES.items():
        if isinstance(node, kind):
            return name
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in FUNCTIONS:
        return str(node.this).lower()
    return None


def _path(call: exp.Expression) -> str:
    """The one string literal a table function takes."""
    args = [a for a in (call.this, *call.expressions) if isinstance(a, exp.Expression)]
    if len(args) != 1 or not isinstance(args[0], exp.Literal) or not args[0].is_string:
        raise UnsupportedStatementError(
            f"{call.sql('postgres')}: expected one string, the path of a file or folder"
        )
    return args[0].this


def _allowed(path: str, allowed: Sequence[Path]) -> Path:
    """``path`` resolved (symbolic links too); 42501 unless inside an allowed folder."""
    if not allowed:
        raise PermissionDeniedError(
            f"read {path!r}: this kyma allows no import folder (set KYMA_IMPORT_DIRS)",
            scope="import",
        )
    real = Path(os.path.realpath(path))
    for folder in allowed:
        root = Path(os.path.realpath(folder))
        if real == root or root in real.parents:
            if not real.exists():
                raise NotFoundError(f"could not open file {path!r}: no such file or folder")
            return real
    raise PermissionDeniedError(
        f"read {path!r}: not inside a folder imports may read (KYMA_IMPORT_DIRS)",
        scope="import",
    )
