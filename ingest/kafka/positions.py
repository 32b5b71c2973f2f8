"""Source positions: per-partition read positions with writer epochs, for exactly-once.

A worker ``claim``s the partitions it was given (their epochs go up) and reads from the
positions returned. Each batch commits its extents with an ``advance`` payload: in the same
transaction, every partition's position moves forward, but only while the worker's epoch is
still the current one. A fenced or backwards move raises, and the whole commit rolls back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import psycopg

from kyma.engine.catalog import Migrations, Payload, Store, Transaction
from kyma.engine.errors import FencedWriterError

MIGRATIONS = Migrations("kyma.ingest.kafka")


@dataclass(frozen=True)
class Claim:
    """A partition's owner epoch and the position to read from."""

    partition: int
    epoch: int
    position: int


@dataclass(frozen=True)
class SourcePosition:
    stream: str
    partition: int
    position: int
    epoch: int


def claim(
    conn: psycopg.Connection, source: str, stream: str, partitions: list[int], start: int = 0
) -> dict[int, Claim]:
    """Bump the epoch of each partition (``start`` for a partition never read before)."""
    claims = {}
    with conn.transaction():
        for partition in sorted(partitions):
            row = conn.execute(
                "INSERT INTO kyma.source_positions AS p"
                " (source, stream, partition, position, epoch) VALUES (%s, %s, %s, %s, 1)"
                " ON CONFLICT (source, stream, partition)"
                " DO UPDATE SET epoch = p.epoch + 1, updated_at = now()"
                " RETURNING epoch, position",
                (source, stream, partition, start),
            ).fetchone()
            claims[partition] = Claim(partition, *row)  # type: ignore[misc]
    return claims


def advance(source: str, stream: str, moves: Mapping[int, tuple[int, int]]) -> Payload:
    """A commit payload moving each partition to ``(epoch, position)``'s position.

    Raises FencedWriterError, aborting the commit, if a partition's epoch is no longer
    ``epoch`` or its stored position is already past ``position``.
    """

    def payload(cur: Transaction, _snapshot_id: int) -> None:
        for partition, (epoch, position) in sorted(moves.items()):
            row = cur.execute(
                "SELECT epoch, position FROM kyma.source_positions"
                " WHERE source = %s AND stream = %s AND partition = %s FOR UPDATE",
                (source, stream, partition),
            ).fetchone()
            where = f"source {source!r} {stream}[{partition}]"
            if row is None:
                raise FencedWriterError(f"{where}: never claimed")
            if row[0] != epoch:
                raise FencedWriterError(
                    f"{where}: writer epoch {epoch} was superseded by {row[0]};"
                    " another worker owns the partition"
                )
            if position < row[1]:
                raise FencedWriterError(
                    f"{where}: position {position} is behind the stored {row[1]};"
                    " positions never go back"
                )
            cur.execute(
                "UPDATE kyma.source_positions SET position = %s, updated_at = now()"
                " WHERE source = %s AND stream = %s AND partition = %s",
                (position, source, stream, partition),
            )

    return payload


def positions(conn: psycopg.Connection, source: str) -> list[SourcePosition]:
    rows = conn.execute(
        "SELECT stream, partition, position, epoch FROM kyma.source_positions"
        " WHERE source = %s ORDER BY stream, partition",
        (source,),
    ).fetchall()
    return [SourcePosition(*row) for row in rows]


class PositionStore(Store):
    """Partition positions and writer epochs (``kyma.source_positions``)."""

    migrations = (MIGRATIONS,)

    def claim(
        self, source: str, stream: str, partitions: list[int], start: int = 0
    ) -> dict[int, Claim]:
        """Take ownership of partitions: new epochs, and the positions to read from."""
        with self.db.connection() as conn:
            return claim(conn, source, stream, partitions, start)

    def positions(self, source: str) -> list[SourcePosition]:
        with self.db.connection() as conn:
            return positions(conn, source)

    def forget(self, conn: psycopg.Connection, source: str) -> None:
        """Drop ``source``'s positions, in the caller's transaction."""
        conn.execute("DELETE FROM kyma.source_positions WHERE source = %s", (source,))
