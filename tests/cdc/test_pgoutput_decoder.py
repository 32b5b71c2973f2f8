"""The pgoutput decoder on real messages captured from the test Postgres."""

from __future__ import annotations

import psycopg
import pytest

from kyma.connectors.postgres.cdc.pgoutput import (
    UNCHANGED,
    Begin,
    Commit,
    Decoder,
    Delete,
    Insert,
    Relation,
    Truncate,
    Update,
    decode,
)
from kyma.engine.errors import FormatError


def _capture(source, statements: list[str], proto: str = "1") -> list[bytes]:  # type: ignore[no-untyped-def]
    with psycopg.connect(source.url, password=source.password, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE t (id int PRIMARY KEY, v text, big text);"
            "ALTER TABLE t ALTER big SET STORAGE EXTERNAL;"
            "ALTER TABLE t REPLICA IDENTITY DEFAULT;"
            "CREATE PUBLICATION p FOR TABLE t"
        )
        conn.execute("SELECT pg_create_logical_replication_slot('dec', 'pgoutput')")
        for sql in statements:
            conn.execute(sql)
        rows = conn.execute(
            "SELECT data FROM pg_logical_slot_get_binary_changes('dec', NULL, NULL,"
            " 'proto_version', %s, 'publication_names', 'p')",
            (proto,),
        ).fetchall()
    return [bytes(r[0]) for r in rows]


@pytest.mark.parametrize("proto", ["1", "2"])
def test_decodes_a_real_transaction_stream(cdc_source, proto: str) -> None:
    raw = _capture(
        cdc_source,
        [
            "INSERT INTO t VALUES (1, 'a', repeat('x', 9000)), (2, NULL, 'b')",
            "UPDATE t SET v = 'a2' WHERE id = 1",  # big is TOASTed and unchanged
            "UPDATE t SET id = 3 WHERE id = 2",  # the key changes: the old key is sent
            "DELETE FROM t WHERE id = 1",
            "TRUNCATE t",
        ],
        proto,
    )
    decoder = Decoder()
    messages = [decoder.decode(m) for m in raw]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == [
        "Begin", "Relation", "Insert", "Insert", "Commit",
        "Begin", "Update", "Commit",
        "Begin", "Update", "Commit",
        "Begin", "Delete", "Commit",
        "Begin", "Relation", "Truncate", "Commit",  # a truncate re-sends the relation
    ]  # fmt: skip
    begin, rel, first, second, commit = messages[:5]
    assert isinstance(begin, Begin) and isinstance(commit, Commit)
    assert begin.final_lsn == commit.commit_lsn < commit.end_lsn
    assert begin.commit_ts_us == commit.commit_ts_us > 1_600_000_000_000_000
    assert isinstance(rel, Relation) and (rel.namespace, rel.name) == ("public", "t")
    assert [c.name for c in rel.columns] == ["id", "v", "big"] and rel.key_columns == ("id",)
    assert [c.type_oid for c in rel.columns] == [23, 25, 25] and rel.replica_identity == "d"
    assert isinstance(first, Insert) and first.new == ("1", "a", "x" * 9000)
    assert isinstance(second, Insert) and second.new == ("2", None, "b")
    update = messages[6]
    assert isinstance(update, Update) and update.new == ("1", "a2", UNCHANGED)
    assert update.old is None
    moved = messages[9]
    assert isinstance(moved, Update) and moved.old_kind == "K"
    assert moved.old == ("2", None, None) and moved.new == ("3", None, "b")
    delete = messages[12]
    assert isinstance(delete, Delete) and delete.old == ("1", None, None)
    truncate = messages[16]
    assert isinstance(truncate, Truncate) and truncate.relids == (rel.relid,)
    commits = [m for m in messages if isinstance(m, Commit)]
    assert [c.end_lsn for c in commits] == sorted(c.end_lsn for c in commits)


def test_truncated_and_unknown_messages_are_format_errors() -> None:
    with pytest.raises(FormatError, match="bytes wanted"):
        decode(b"B\x00\x00")
    with pytest.raises(FormatError, match="unknown message type"):
        decode(b"Z")
    with pytest.raises(FormatError, match="unknown column kind"):
        decode(b"I\x00\x00\x40\x01N\x00\x01x")


def test_streamed_blocks_carry_their_transaction_id() -> None:
    decoder = Decoder()
    start = decoder.decode(b"S" + (7).to_bytes(4, "big") + b"\x01")
    insert = decoder.decode(b"I" + (7).to_bytes(4, "big") + (99).to_bytes(4, "big") + b"N\x00\x01n")
    decoder.decode(b"E")
    after = decoder.decode(b"I" + (99).to_bytes(4, "big") + b"N\x00\x01u")
    assert start.xid == 7 and start.first_segment  # type: ignore[union-attr]
    assert insert == Insert(99, (None,), 7)
    assert after == Insert(99, (UNCHANGED,), None)
