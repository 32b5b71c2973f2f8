"""The kyma tables a SELECT reads, as the planner registers them, and what their columns
tell the rewrite rules: which a statement only counts, which are not text, which declared."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from kyma.engine.catalog import TableInfo
from kyma.engine.format.predicate import BlockPredicate, Or
from kyma.engine.query import _path_columns
from kyma.engine.types import DEFAULT_COLUMN_NAMES

_NOT_TEXT = {"bool", "int", "long", "real", "float4", "timestamp"}


@dataclass
class Source:
    """One kyma table at one snapshot, as registered in the DataFusion session."""

    info: TableInfo
    snapshot: int | None
    predicates: list[BlockPredicate | None]
    columns: set[str]
    paths: list[_path_columns.PathColumn] = field(default_factory=list)
    rows: bool = False  # its scan adds deletes.ROW_COLUMNS (a DELETE's)

    @property
    def predicate(self) -> BlockPredicate | None:
        if not self.predicates or None in self.predicates:
            return None
        unique = list(dict.fromkeys(self.predicates))
        return unique[0] if len(unique) == 1 else Or(tuple(unique))  # type: ignore[arg-type]


def filters_fewer_columns(stmt: exp.Expression, sources: dict[str, Source]) -> bool:
    """Whether ``stmt`` filters rows (a WHERE) and reads columns of its tables that no WHERE
    names: columns a filter inside the Parquet decoder spares decoding for rejected rows.
    Not with an aggregate: the decoder's smaller batches reach a parallel aggregate in
    another order, and a float sum computed twice in one statement (TPC-H's Q15 compares
    one with its max) must round alike."""
    if stmt.find(exp.AggFunc, exp.Group) is not None:
        return False
    filtered = {c.name for where in stmt.find_all(exp.Where) for c in where.find_all(exp.Column)}
    read = {name for source in sources.values() for name in source.columns}
    return bool(filtered) and bool(read - filtered)


def not_text(sources: dict[str, Source], fetched: dict[str, dict[str, str]]) -> set[str]:
    """The columns that are numbers, booleans or timestamps in every table that has them."""
    kinds: dict[str, set[bool]] = {}
    for source in sources.values():
        for column in source.info.columns:
            kinds.setdefault(column.name, set()).add(column.type.name in _NOT_TEXT)
    for columns in fetched.values():
        for name, declared in columns.items():
            kinds.setdefault(name, set()).add(declared != "TEXT")
    return {name for name, found in kinds.items() if found == {True}}


def declared(sources: dict[str, Source]) -> dict[str, list[str]]:
    """Each table's declared columns (its default columns left out), by session name."""
    return {
        name: [c.name for c in s.info.columns if c.name not in DEFAULT_COLUMN_NAMES]
        for name, s in sources.items()
    }
