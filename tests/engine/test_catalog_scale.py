"""Stage 1 over indexed set keys and kept extent counts (sql/011_manifest_scale.sql): the
same extents survive as under the per-row JSON conditions it replaced, and every
snapshot's extent count is exact."""

from __future__ import annotations

import uuid
from importlib import resources

import psycopg

from kyma.engine.catalog import Catalog
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.predicate import (
    DynamicPathEquals,
    DynamicPathExists,
    Equals,
    InSet,
    StringHas,
    TimeRange,
)
from kyma.engine.types import Column, KymaType


def extent(stats: dict, paths: tuple[str, ...] = (), ts: int = 0) -> ExtentWriteResult:
    extent_id = str(uuid.uuid4())
    return ExtentWriteResult(
        extent_id=extent_id,
        object_path=f"tables/x/{extent_id}.parquet",
        byte_size=100,
        row_count=10,
        block_count=1,
        min_timestamp_nanos=ts,
        max_timestamp_nanos=ts + 9,
        present_paths=list(paths),
        column_stats=stats,
        format="parquet",
    )


def kept(catalog: Catalog, table: str, predicate: object) -> set[str]:
    _, survivors = catalog.prune_extents(table, None, predicate)  # type: ignore[arg-type]
    return {s.object_path for s in survivors}


def test_sets_prune_by_value_and_keep_what_they_cannot_decide(catalog: Catalog) -> None:
    catalog.create_table("t", [Column("s", KymaType("string")), Column("n", KymaType("long"))])
    svc = extent({"s": {"distinct": ["svc-1", 'žluť "q"'], "tokens": ["svc"]}})
    many = extent({"s": {"distinct": None, "tokens": None}, "n": {"distinct": [7, 2**62]}})
    bare = extent({})  # no stats at all (an old or foreign extent): never pruned by sets
    catalog.commit("t", [svc, many, bare])
    paths = {e.object_path: name for name, e in {"svc": svc, "many": many, "bare": bare}.items()}

    def names(predicate: object) -> set[str]:
        return {paths[p] for p in kept(catalog, "t", predicate)}

    assert names(Equals("s", "svc-1")) == {"svc", "many", "bare"}
    assert names(Equals("s", 'žluť "q"')) == {"svc", "many", "bare"}  # escapes, non-ASCII
    assert names(Equals("s", "svc-2")) == {"many", "bare"}
    assert names(StringHas("s", "svc")) == {"svc", "many", "bare"}
    assert names(StringHas("s", "nope")) == {"many", "bare"}
    assert names(Equals("n", 2**62)) == {"svc", "many", "bare"}  # svc has no stats for n
    assert names(InSet("n", frozenset([3, 4]))) == {"svc", "bare"}
    assert names(InSet("n", frozenset([3, 7]))) == {"svc", "many", "bare"}


def test_a_column_added_after_an_extent_prunes_it(catalog: Catalog) -> None:
    catalog.create_table("t", [Column("s", KymaType("string"))])
    old = extent({"s": {"distinct": ["a"], "tokens": ["a"]}})
    catalog.commit("t", [old])
    catalog.add_column("t", Column("later", KymaType("string")))
    new = extent({"s": {"distinct": ["a"], "tokens": ["a"]}, "later": {"distinct": ["x"]}})
    catalog.commit("t", [new])
    # The old extent holds no value of ``later``: it cannot match an equality on it.
    assert kept(catalog, "t", Equals("later", "x")) == {new.object_path}


def test_paths_and_time_windows(catalog: Catalog) -> None:
    catalog.create_table("t", [Column("attributes", KymaType("dynamic"))])
    user = extent({}, ("attributes/user",), ts=100)
    capped = extent({}, ("attributes",), ts=200)  # past the path cap: any path
    other = extent({}, ("attributes/http",), ts=300)
    catalog.commit("t", [user, capped, other])
    assert kept(catalog, "t", DynamicPathExists("attributes", ("user",))) == {
        user.object_path,
        capped.object_path,
    }
    assert kept(catalog, "t", TimeRange("_timestamp", 205, 305)) == {
        capped.object_path,
        other.object_path,
    }


def test_extent_counts_are_kept_with_each_snapshot(catalog: Catalog) -> None:
    catalog.create_table("t", [Column("s", KymaType("string"))])
    first = [extent({}) for _ in range(3)]
    catalog.commit("t", first)
    catalog.commit("t", [extent({})], removed=[first[0].extent_id, first[1].extent_id])
    total, survivors = catalog.prune_extents("t", None, None)
    assert total == len(survivors) == 2
    with psycopg.connect(catalog.url, autocommit=True) as conn:
        counts = conn.execute(
            "SELECT extent_count FROM kyma.snapshots ORDER BY snapshot_id"
        ).fetchall()
        assert counts == [(3,), (2,)]
        # A snapshot committed before counts were kept is counted on demand, and its
        # children carry the count on.
        conn.execute("UPDATE kyma.snapshots SET extent_count = NULL")
    assert catalog.prune_extents("t", None, None)[0] == 2
    catalog.commit("t", [extent({})])
    assert catalog.prune_extents("t", None, None)[0] == 3
    first_snapshot = catalog.snapshots("t")[0].snapshot_id
    assert catalog.prune_extents("t", first_snapshot, None)[0] == 3


def test_a_path_value_prunes_only_where_the_path_was_shredded(catalog: Catalog) -> None:
    catalog.create_table("t", [Column("attributes", KymaType("dynamic"))])
    shredded = extent({"attributes/code": {"distinct": ["200"]}}, ("attributes/code",))
    unshredded = extent({}, ("attributes/code",))  # an old extent: the path, no stats for it
    catalog.commit("t", [shredded, unshredded])
    assert kept(catalog, "t", DynamicPathEquals("attributes", ("code",), "500")) == {
        unshredded.object_path
    }
    assert kept(catalog, "t", DynamicPathEquals("attributes", ("code",), "200")) == {
        shredded.object_path,
        unshredded.object_path,
    }


def test_long_values_in_sets_commit_and_never_prune_wrongly(catalog: Catalog) -> None:
    """A distinct value too long for an index entry (Postgres caps them near 2.7 KB) marks its
    set unknown in the index instead of failing the commit; the set itself still decides."""
    catalog.create_table("t", [Column("s", KymaType("string"))])
    long_value = "".join(f"{i:x}{i * 7919 % 10007}" for i in range(9_000))  # compresses badly
    long = extent({"s": {"distinct": [long_value, "short"], "tokens": [long_value[:40_000]]}})
    other = extent({"s": {"distinct": ["other"], "tokens": ["other"]}})
    catalog.commit("t", [long, other])
    assert kept(catalog, "t", Equals("s", long_value)) == {long.object_path}
    assert kept(catalog, "t", Equals("s", "short")) == {long.object_path}
    assert kept(catalog, "t", Equals("s", "other")) == {other.object_path}
    assert kept(catalog, "t", StringHas("s", long_value[:40_000])) == {long.object_path}


def test_the_migration_rekeys_members_indexed_as_themselves(catalog: Catalog) -> None:
    """Members of 512 bytes up to the old cap were indexed as their own text before
    012_long_set_keys.sql; its update gives them the hashed key a query now looks for."""
    catalog.create_table("t", [Column("s", KymaType("string"))])
    medium = "m" * 1_000
    old = extent({"s": {"distinct": [medium], "tokens": ["m"]}})
    catalog.commit("t", [old])
    migration = (resources.files("kyma.migrations") / "012_long_set_keys.sql").read_text()
    rekey = migration[migration.index("UPDATE kyma.manifest") :]
    with catalog.db.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute(  # as the old stat_keys spelled it
            "UPDATE kyma.manifest SET set_keys = ARRAY['s/distinct=' || to_jsonb(%s::text)::text,"
            " 's/tokens=\"m\"'] WHERE object_path = %s",
            [medium, old.object_path],
        )
    assert kept(catalog, "t", Equals("s", medium)) == set()  # the key a query looks for
    with catalog.db.transaction() as conn:  # type: ignore[attr-defined]
        assert conn.execute(rekey).rowcount == 1
    assert kept(catalog, "t", Equals("s", medium)) == {old.object_path}


def test_a_large_set_is_keyed_once_and_still_prunes(catalog: Catalog) -> None:
    """A set of more than 1 000 members is one '~' key (sql/013_large_sets_unindexed.sql):
    the commit stays cheap, and stage 1 reads the set itself, so it prunes as before; rows
    keyed member by member (committed earlier) answer alike."""
    catalog.create_table("t", [Column("s", KymaType("string")), Column("n", KymaType("long"))])
    ids = [f"{i * 7919:016x}" for i in range(2_000)]
    large = extent({"s": {"distinct": None, "tokens": ids}, "n": {"distinct": [*range(1_500)]}})
    small = extent({"s": {"distinct": ["x"], "tokens": ["x", ids[5]]}, "n": {"distinct": [7]}})
    old = extent({"s": {"distinct": None, "tokens": ids[:1_001]}, "n": {"distinct": [9_999]}})
    catalog.commit("t", [large, small, old])
    with catalog.db.transaction() as conn:  # type: ignore[attr-defined]
        keys = dict(conn.execute("SELECT object_path, set_keys FROM kyma.manifest").fetchall())
        assert sorted(k for k in keys[large.object_path] if k[:2] in ("n/", "s/")) == [
            "n/distinct=~",
            "n/tokens=*",
            "s/distinct=*",
            "s/tokens=~",
        ]
        conn.execute(  # as stat_keys before 013 spelled it: every member
            "UPDATE kyma.manifest SET set_keys = ARRAY['s/distinct=*', 'n/tokens=*',"
            " 'n/distinct=9999'] || ARRAY(SELECT 's/tokens=' || to_jsonb(t)::text"
            " FROM unnest(%s::text[]) AS t) WHERE object_path = %s",
            [ids[:1_001], old.object_path],
        )
    paths = {
        e.object_path: name for name, e in {"large": large, "small": small, "old": old}.items()
    }

    def names(predicate: object) -> set[str]:
        return {paths[p] for p in kept(catalog, "t", predicate)}

    assert names(StringHas("s", ids[1_999])) == {"large"}
    assert names(StringHas("s", ids[5])) == {"large", "small", "old"}
    assert names(StringHas("s", ids[1_000])) == {"large", "old"}
    assert names(StringHas("s", "nope")) == set()
    assert names(Equals("n", 1_499)) == {"large"}
    assert names(Equals("n", 1_499.0)) == {"large"}  # the same number spelled otherwise
    assert names(InSet("n", frozenset([5_000, 9_999]))) == {"old"}
    assert names(InSet("n", frozenset([7, 9_999]))) == {"large", "small", "old"}
    assert names(InSet("n", frozenset([-1, 2_000]))) == set()
