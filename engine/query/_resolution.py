"""How a SELECT's names become what it reads: kyma tables (by snapshot), views expanded,
catalog relations built over the tables a caller may read."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import pyarrow as pa
from datafusion import SessionContext
from sqlglot import exp

from kyma.engine.catalog import Catalog, TableInfo, ViewInfo
from kyma.engine.errors import NotFoundError, PermissionDeniedError, UnsupportedStatementError
from kyma.engine.query import _relation_refs, _views
from kyma.engine.query._access import federated_tables
from kyma.engine.query._answers import empty_batch
from kyma.engine.query._sources import Source
from kyma.engine.query.federation import Federation
from kyma.engine.query.relations import Relations, relation_of, split
from kyma.engine.query.rewrite import current_state
from kyma.engine.query.rewrite.time_travel import split_versioned


class TableResolution:
    """The name-resolution half of ``SelectPlanner`` (its base): the planner sets these."""

    catalog: Catalog
    relations: Relations | None
    federation: Federation | None
    keep_up: Callable[[ViewInfo], None] | None

    def _resolve_relations(
        self, stmt: exp.Expression, looked: dict[str, TableInfo | None]
    ) -> tuple[exp.Expression, set[str]]:
        """``stmt`` with its references to catalog relations renamed to their session names
        and the relations' rules applied; the session names it still reads. ``looked`` gets
        the bare names looked up as kyma tables (a table of that name is the table)."""
        if self.relations is None:
            return stmt, set()
        refs = _relation_refs.references(stmt, self.relations)
        bare = _relation_refs.bare_names(refs)
        if bare:
            found = self.catalog.get_tables(bare)
            looked.update({name: found.get(name) for name in bare})
        _relation_refs.resolve(refs, self.relations, lambda name: looked.get(name) is not None)
        stmt = self.relations.rewrite(stmt)
        named = {t.name for t in stmt.find_all(exp.Table) if relation_of(t) is not None}
        return stmt, named

    def _expand_views(
        self,
        stmt: exp.Expression,
        looked: dict[str, TableInfo | None],
        visible: Callable[[str], bool] | None,
    ) -> bool:
        """Replace the views ``stmt`` names by their queries (in place); whether it named any.
        Views are looked up only under names no table has (``looked`` gets the tables read);
        a table or connector table a view reads that the caller may not read is refused (of a
        materialized view: those its definition reads, not the table holding its rows)."""
        storage: set[str] = set()
        defined: set[str] = set()

        def views_of(names: set[str]) -> dict[str, ViewInfo]:
            new = names - set(looked)
            if new:
                found = self.catalog.get_tables(new)
                looked.update({name: found.get(name) for name in new})
            missing = {name for name in names if looked.get(name) is None}
            views = self.catalog.get_views(missing) if missing else {}
            for view in views.values():
                if view.storage is not None:
                    storage.add(view.storage)
                    defined.update(set(view.reads) - {view.storage})
                    if self.keep_up is not None:
                        self.keep_up(view)
            return views

        _, views = _views.expand(stmt, views_of, self.local_tables)
        if views and visible is not None:
            read = {split_versioned(raw)[0] for raw, _ in self.local_tables(stmt)}
            for table in sorted((read - storage) | defined | federated_tables(stmt)):
                if not visible(table):
                    raise PermissionDeniedError(
                        f"view {sorted(views)[0]!r} reads table {table!r}, which this token"
                        " may not read",
                        scope="read",
                        table=table,
                    )
        return bool(views)

    def _relation(self, name: str, tables: Callable[[], list[TableInfo | ViewInfo]]) -> pa.Table:
        found = split(name)
        assert found is not None and self.relations is not None
        return self.relations.build(*found, tables)

    def _register_relations(
        self, ctx: SessionContext, names: Sequence[str], visible: Callable[[str], bool] | None
    ) -> None:
        """The rows of each catalog relation a plan reads, over the tables the caller may
        read (listed once, and only if a relation needs them)."""
        listed: list[list[TableInfo | ViewInfo]] = []

        def tables() -> list[TableInfo | ViewInfo]:
            if not listed:
                views = self.catalog.list_views()
                hidden = {v.storage for v in views}  # a materialized view's rows: its own
                every: list[TableInfo | ViewInfo] = [
                    t for t in self.catalog.list_tables() if t.name not in hidden
                ]
                every += views
                listed.append([i for i in every if visible is None or visible(i.name)])
            return listed[0]

        for name in names:
            built = self._relation(name, tables)
            ctx.register_record_batches(name, [built.to_batches() or [empty_batch(built)]])

    def local_tables(
        self, stmt: exp.Expression, skip: Collection[str] = ()
    ) -> list[tuple[str, exp.Table]]:
        """(name as written, node) for each reference to a kyma table (not a CTE, source or
        catalog relation; a bare catalog relation name is here: it may be a kyma table)."""
        ctes = {cte.alias_or_name for cte in stmt.find_all(exp.CTE)}
        schemas = self.relations.schemas if self.relations is not None else frozenset()
        found = []
        for table in list(stmt.find_all(exp.Table)):
            ident = table.this
            if table.args.get("catalog") or not isinstance(ident, exp.Identifier):
                continue
            if relation_of(table) is not None or table.text("db").lower() in schemas:
                continue
            if table.args.get("db"):
                where = table.sql("postgres")
                raise UnsupportedStatementError(
                    f"{where!r}: name a source table as <connector>.<schema>.<table>"
                )
            raw = ident.name if ident.quoted else ident.name.lower()
            if raw not in ctes and raw not in skip:
                found.append((raw, table))
        return found

    def bare_relations(self, names: Collection[str]) -> set[str]:
        """The ``names`` (bare, as ``local_tables`` finds them) that name a catalog relation
        rather than a kyma table."""
        if self.relations is None:
            return set()
        candidates = {n for n in names if self.relations.relation(None, n)}
        return candidates - set(self.catalog.get_tables(candidates)) if candidates else set()

    def _resolve(
        self,
        stmt: exp.Expression,
        snapshot: int | None,
        skip: set[str],
        looked: dict[str, TableInfo | None],
    ) -> dict[str, Source]:
        """Find kyma table references; rename each to its session name ("logs" or "logs@42").
        The tables are read from the catalog together; ``looked`` gets every name looked up
        and what it found (None: no table)."""
        refs = self.local_tables(stmt, skip)
        wanted = {split_versioned(raw)[0] for raw, _ in refs} - set(looked)
        found = self.catalog.get_tables(wanted) if wanted else {}
        looked.update({name: found.get(name) for name in wanted})
        sources: dict[str, Source] = {}
        for raw, table in refs:
            name, at = split_versioned(raw)
            info, current = self._table_info(name, looked)
            at = at if at is not None else (snapshot if self._owns(info, snapshot) else None)
            session_name = info.name if at is None else f"{info.name}@{at}"
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
            table.set("this", exp.to_identifier(session_name, quoted=True))
            sources.setdefault(session_name, Source(info, at, [], set()))
            if current:  # a CDC change log read by name: its current state
                table.replace(current_state.view(table, table.alias_or_name, info.columns))
        if snapshot is not None and all(s.snapshot != snapshot for s in sources.values()):
            raise NotFoundError(f"no table in the query has snapshot {snapshot}")
        return sources

    def _table_info(self, name: str, looked: dict[str, TableInfo | None]) -> tuple[TableInfo, bool]:
        """A kyma table, and whether reading it by ``name`` means a CDC table's current state
        (a name the federation maps to the table's change log reads the log itself).
        ``looked``: tables already read by name (None: no table), and those read here."""
        if name not in looked:
            looked[name] = self.catalog.get_tables([name]).get(name)
        info = looked[name]
        if info is not None:
            return info, current_state.is_cdc(info.options)
        base = None if self.federation is None else self.federation.change_log_of(name)
        if base is None:
            info = self.catalog.get_table(name)  # its error: NotFoundError, or a bad name
            return info, current_state.is_cdc(info.options)
        if base not in looked:
            looked[base] = self.catalog.get_tables([base]).get(base)
        info = looked[base]
        if info is None:
            raise NotFoundError(f"table {base!r} does not exist")
        if not current_state.is_cdc(info.options):
            raise NotFoundError(f"table {name!r} does not exist") from None
        return info, False

    def _owns(self, info: TableInfo, snapshot: int | None) -> bool:
        return snapshot is not None and any(
            s.snapshot_id == snapshot for s in self.catalog.snapshots(info.name)
        )
