"""Materialized views: CREATE MATERIALIZED VIEW, REFRESH MATERIALIZED VIEW, and the upkeep
that keeps time-bucketed ones current as their table changes.

A materialized view's rows live in a kyma table of its own (``_matview_<hex>``, its
*storage*, hidden from listings); the view itself is a view whose query reads that table,
so a query that names it is planned as any view's. Its definition is kept to rebuild it:
REFRESH runs it at the base table's current snapshot and replaces every stored row in one
commit, as Postgres does.

A definition of the shape ``SELECT date_trunc('<unit>', _timestamp) …, <keys>, <aggregates>
FROM t [WHERE …] GROUP BY …`` (one kyma table, no LIMIT, no window) is *kept up*: before a
query reads the view (and in each maintenance round), the extents that changed in ``t``
since the snapshot the rows were computed at (added by ingest, marked by DELETE or UPDATE,
removed by TRUNCATE or compaction) give the time range touched; the buckets of that range
are computed again from ``t`` at its current snapshot and replace the stored ones in one
commit, which also moves the view's base snapshot (``advance_matview``: a compare-and-swap,
so two upkeeps never both apply one change). Any aggregate is exact this way (a bucket is
always computed from all its rows), and running it twice changes nothing. Other definitions
keep the rows of their last REFRESH, as in Postgres.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pyarrow as pa
from sqlglot import exp

from kyma.engine import deletes
from kyma.engine.catalog import Catalog, DeletionVector, ViewInfo, advance_matview
from kyma.engine.catalog._views import pg_type_name
from kyma.engine.errors import (
    DuplicateRelationError,
    NotFoundError,
    SchemaError,
    StaleCommitError,
    UnsupportedStatementError,
    WrongObjectTypeError,
)
from kyma.engine.query import _dml, _insert, _writable
from kyma.engine.query._answers import Sink
from kyma.engine.query._insert import InsertWriter
from kyma.engine.query._output_names import output_names
from kyma.engine.query._parse import identifier, parse, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._views import LocalTables
from kyma.engine.query.dialect import Kyma
from kyma.engine.query.rewrite.time_travel import split_versioned
from kyma.engine.types import Column

ATTEMPTS = 20
"""Upkeeps tried while other commits move the view's base snapshot or its storage."""
STORAGE_PREFIX = _writable.STORAGE_PREFIX

Run = Callable[[exp.Query, int | None, Sink], int]
"""Runs a query (at a snapshot of the table that owns it, None: current), its answer to a
sink; the rows it took."""


def is_materialized(stmt: exp.Create) -> bool:
    """Whether a CREATE is of a materialized view."""
    properties = stmt.args.get("properties")
    return properties is not None and properties.find(exp.MaterializedProperty) is not None


class Matviews:
    def __init__(
        self,
        catalog: Catalog,
        writer: InsertWriter | None,
        run: Run,
        rows_of: _dml.Select,
        local_tables: LocalTables,
    ) -> None:
        """``rows_of``: a query's answer with the row columns of a table's scan (DELETE's)."""
        self.catalog = catalog
        self.writer = writer
        self.run = run
        self.rows_of = rows_of
        self.local_tables = local_tables

    def create(self, stmt: exp.Create) -> QueryResult:
        """CREATE MATERIALIZED VIEW [IF NOT EXISTS] m [(columns)] AS query; the status is
        Postgres's ``SELECT <rows>``."""
        writer = self._writer("CREATE MATERIALIZED VIEW")
        target = stmt.this
        table = target.this if isinstance(target, exp.Schema) else target
        name = table_name(table, creating=True)
        if self.catalog.get_tables([name]) or self.catalog.get_views([name]):
            if stmt.args.get("exists"):
                return QueryResult.status_only("CREATE MATERIALIZED VIEW")
            raise DuplicateRelationError(f'relation "{name}" already exists')
        query = stmt.expression
        properties = stmt.args["properties"].expressions
        if not isinstance(query, exp.Query) or len(properties) != 1 or stmt.args.get("replace"):
            raise UnsupportedStatementError(
                "CREATE MATERIALIZED VIEW: only [IF NOT EXISTS] name [(columns)] AS query"
            )
        definition = query.sql(dialect=Kyma)
        body = parse(definition)
        reads = sorted({split_versioned(raw)[0] for raw, _ in self.local_tables(body)})
        base = _bucketed(body, self.local_tables)
        at = self.catalog.get_table(base).current_snapshot_id if base else None
        storage = STORAGE_PREFIX + uuid.uuid4().hex[:16]
        figured = output_names(body)
        written = [identifier(c) for c in target.expressions] if target is not table else []
        made: list[pa.Schema] = []
        stars: list[str] = []

        def store(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
            if isinstance(body, exp.Select) and [type(e) for e in body.expressions] == [exp.Star]:
                # ``SELECT *`` stands for the columns it had, as a view's does: REFRESH
                # after the table gains one gives the same columns
                spelled = query.copy()
                spelled.set("expressions", [exp.column(n, quoted=True) for n in schema.names])
                stars.append(spelled.sql(dialect=Kyma))
            made.append(_insert.named(schema, figured, written))
            kept = _stored(made[0])
            columns = [_stored_column(f, n) for f, n in zip(kept, made[0].names, strict=True)]
            self.catalog.create_table(storage, columns)
            rows = (pa.RecordBatch.from_arrays(b.columns, schema=kept) for b in batches)
            return writer.insert_batches(storage, kept, rows)

        try:
            count = self.run(_query(definition), at, store)
            info = self.catalog.get_table(storage)
            types = {c.name: c for c in info.columns}
            schema = pa.schema(
                [
                    types[f.name].to_arrow().with_name(n)
                    for f, n in zip(_stored(made[0]), made[0].names, strict=True)
                ]
            )
            select = exp.select(
                *(
                    exp.alias_(exp.column(f"c{i}", quoted=True), n, quoted=True)
                    for i, n in enumerate(schema.names, 1)
                )
            )
            text = select.from_(exp.to_table(storage)).sql(dialect=Kyma)
            definition = stars[0] if stars else definition
            kept = ViewInfo(
                0, name, text, schema, (), info.created_at, definition, storage, base, at
            )
            self.catalog.create_view(name, text, schema, [*reads, storage], materialized=kept)
        except BaseException:
            self.catalog.drop_table(storage, if_exists=True)
            raise
        return QueryResult(pa.table({}), f"SELECT {count}", rowcount=count)

    def refresh(self, stmt: exp.Refresh) -> QueryResult:
        """REFRESH MATERIALIZED VIEW m: every row computed again, replaced in one commit."""
        target = stmt.this
        if not isinstance(target, exp.Table) or target.alias:
            raise UnsupportedStatementError(
                "REFRESH MATERIALIZED VIEW: only REFRESH MATERIALIZED VIEW name (kyma refreshes"
                " in one commit: readers never wait)"
            )
        name = table_name(target)
        for _ in range(ATTEMPTS):
            view = self._view(name)
            try:
                self._rebuild(view)
            except StaleCommitError:
                continue
            return QueryResult.status_only("REFRESH MATERIALIZED VIEW")
        raise StaleCommitError(f"REFRESH MATERIALIZED VIEW {name}: it kept changing; try again")

    def catch_up(self, view: ViewInfo) -> None:
        """Bring a kept-up materialized view's rows to its table's current snapshot (nothing
        for the others)."""
        for _ in range(ATTEMPTS):
            if view.base is None or self.writer is None:
                return
            try:
                self._catch_up(view)
                return
            except StaleCommitError:
                found = self.catalog.get_views([view.name]).get(view.name)
                if found is None:
                    return
                view = found
        raise StaleCommitError(f"materialized view {view.name!r}: its table kept changing")

    def catch_up_all(self) -> int:
        """Every kept-up materialized view brought up to date (the maintenance round's); how
        many there are."""
        kept = [v for v in self.catalog.list_views() if v.base is not None]
        for view in kept:
            self.catch_up(view)
        return len(kept)

    def _writer(self, verb: str) -> InsertWriter:
        if self.writer is None:
            raise UnsupportedStatementError(f"{verb}: this engine has no write path")
        return self.writer

    def _view(self, name: str) -> ViewInfo:
        view = self.catalog.get_views([name]).get(name)
        if view is None and not self.catalog.get_tables([name]):
            raise NotFoundError(f'relation "{name}" does not exist')
        if view is None:  # a table: Postgres's SQLSTATE is 0A000, of a view 42809
            raise UnsupportedStatementError(f'"{name}" is not a materialized view')
        if not view.materialized:
            raise WrongObjectTypeError(f'"{name}" is not a table or materialized view')
        return view

    def _rebuild(self, view: ViewInfo) -> None:
        """Every row computed at the base's current snapshot, replacing the stored ones."""
        writer = self._writer("REFRESH MATERIALIZED VIEW")
        assert view.definition is not None and view.storage is not None
        storage = view.storage
        at = self.catalog.get_table(view.base).current_snapshot_id if view.base else None
        advance = advance_matview(view.name, view.base_snapshot, at)
        named = _stored(view.schema)

        def replace(_schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
            rows = (b.rename_columns(named.names).cast(named) for b in batches if b.num_rows)
            first = next(rows, None)
            if first is None:  # no rows: the stored ones go all the same
                live = [e.extent_id for e in self.catalog.live_extents(storage)]
                summary = {"source": "matview", "operation": "refresh"}
                self.catalog.commit(storage, [], live, summary=summary, payload=advance)
                return 0
            return writer.insert_batches(
                storage, named, itertools.chain([first], rows), replace=True, payload=advance
            )

        self.run(_query(view.definition), at, replace)

    def _catch_up(self, view: ViewInfo) -> None:
        assert view.base is not None and view.definition is not None
        writer = self._writer("materialized view upkeep")
        head = self.catalog.get_table(view.base).current_snapshot_id
        if head == view.base_snapshot:
            return
        try:
            span = self._changed_span(view.base, view.base_snapshot, head)
        except NotFoundError:  # the snapshot it was computed at has expired
            self._rebuild(view)
            return
        advance = advance_matview(view.name, view.base_snapshot, head)
        storage = view.storage
        assert storage is not None
        if span is None:
            self.catalog.commit(storage, [], summary={"source": "matview"}, payload=advance)
            return
        body = _query(view.definition)
        assert isinstance(body, exp.Select)
        position, bucket = _bucket(body)
        column = f"c{position + 1}"
        low, high = _at_time(bucket, span[0], up=False), _at_time(bucket, span[1], up=True)
        fresh = body.copy().where(exp.Between(this=bucket.copy(), low=low, high=high))
        found: list[pa.Table] = []

        def keep(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
            found.append(pa.Table.from_batches(list(batches), schema))
            return found[-1].num_rows

        self.run(fresh, head, keep)
        stale = exp.select(*(exp.column(n, quoted=True) for n in deletes.ROW_COLUMNS))
        stale = stale.from_(exp.to_table(storage)).where(
            exp.Between(this=exp.column(column, quoted=True), low=low.copy(), high=high.copy())
        )
        at = self.catalog.get_table(storage).current_snapshot_id
        vectors: list[DeletionVector] = []
        if at is not None:
            vectors, _ = _dml.deletion_vectors(
                self.catalog, storage, self.rows_of(stale, at, storage)
            )
        stored = _stored(view.schema)
        data = found[0].rename_columns(stored.names).cast(stored)
        if data.num_rows == 0 and not vectors:
            self.catalog.commit(storage, [], summary={"source": "matview"}, payload=advance)
            return
        writer.update_arrow(storage, data, vectors, payload=advance)

    def _changed_span(self, base: str, was: int | None, now: int | None) -> tuple[int, int] | None:
        """The least and greatest ``_timestamp`` (ns) of the extents live at one of the
        snapshots ``was`` and ``now`` but not both (None: no extent changed); NotFoundError
        when ``was`` has expired. An extent without times stands for all time."""
        before = {e.extent_id: e for e in self.catalog.live_extents(base, was)} if was else {}
        after = {e.extent_id: e for e in self.catalog.live_extents(base, now)} if now else {}
        changed = [e for i, e in {**before, **after}.items() if (i in before) != (i in after)]
        if not changed:
            return None
        lows = [e.min_ts for e in changed if e.min_ts is not None]
        highs = [e.max_ts for e in changed if e.max_ts is not None]
        if len(lows) < len(changed) or len(highs) < len(changed):
            return (_MIN_NS, _MAX_NS)
        return min(lows), max(highs)


_MIN_NS, _MAX_NS = -(2**62), 2**62


def _stored(schema: pa.Schema) -> pa.Schema:
    """A materialized view's columns as its storage table names them: ``c1``, ``c2``… (any
    name Postgres gives a column, ``?column?`` too, is a view's)."""
    return pa.schema([f.with_name(f"c{i}") for i, f in enumerate(schema, 1)])


def _stored_column(field: pa.Field, name: str) -> Column:
    """The storage column of the view's column ``name``; SchemaError (42804) naming it when
    kyma stores no such type."""
    try:
        return _insert.column_of(field)
    except SchemaError:
        raise SchemaError(
            f"CREATE MATERIALIZED VIEW: column {name!r} is of type {pg_type_name(field)}, which"
            " kyma does not store; cast it (sum(n)::bigint, avg(x)::double precision…)"
        ) from None


def _query(text: str) -> exp.Query:
    query = parse(text)
    assert isinstance(query, exp.Query)
    return query


def _bucketed(body: exp.Expression, local_tables: LocalTables) -> str | None:
    """The one kyma table a kept-up definition reads, or None when it is not of that shape."""
    if not isinstance(body, exp.Select) or not body.args.get("group"):
        return None
    if any(body.args.get(k) for k in ("limit", "offset", "joins", "with_", "distinct")):
        return None
    if body.find(exp.Window) or any(s is not body for s in body.find_all(exp.Select)):
        return None
    refs = local_tables(body)
    if len(refs) != 1 or refs[0][0] != split_versioned(refs[0][0])[0]:
        return None
    try:
        _bucket(body)
    except LookupError:
        return None
    return refs[0][0]


def _bucket(body: exp.Select) -> tuple[int, exp.Expression]:
    """The position and expression of the output column ``date_trunc('<unit>', _timestamp)``
    the query groups by; LookupError when it has none."""
    grouped = body.args["group"].expressions
    for position, item in enumerate(body.expressions):
        node = item.this if isinstance(item, exp.Alias) else item
        if not (
            isinstance(node, exp.TimestampTrunc)
            and isinstance(node.this, exp.Column)
            and identifier(node.this.this) == "_timestamp"
            and not node.this.table
        ):
            continue
        for key in grouped:
            by_position = key.is_int and int(key.name) == position + 1
            by_alias = isinstance(key, exp.Column) and item.alias and key.name == item.alias
            if by_position or by_alias or key == node:
                return position, node
    raise LookupError("no date_trunc(unit, _timestamp) column grouped by")


def _at_time(bucket: exp.Expression, nanos: int, *, up: bool) -> exp.Expression:
    """``bucket`` of the instant ``nanos`` rounded to a microsecond (``up``: to the next), so
    the buckets between the floored least and the ceiled greatest hold every changed row."""
    nanos = max(min(nanos, _MAX_NS), _MIN_NS)
    micros = -(-nanos // 1000) if up else nanos // 1000
    instant = _EPOCH + timedelta(microseconds=micros)
    timestamptz = exp.DataType.build("timestamptz")
    found = bucket.copy()
    found.set("this", exp.cast(exp.Literal.string(instant.isoformat()), timestamptz))
    return found


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
