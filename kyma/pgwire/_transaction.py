"""A connection's transaction block: BEGIN … COMMIT/ROLLBACK, savepoints, and the settings a
block changes (``SET`` is undone by ROLLBACK, ``SET LOCAL`` ends with the block).

kyma commits each write when it runs, so a savepoint is honoured only while nothing was
written in the block: SAVEPOINT after a write, and ROLLBACK TO over one, are refused (0A000)
rather than pretending to undo it. A ROLLBACK (or the COMMIT of a failed block) after a write
ends the block and answers 0A000 saying the writes stay: Postgres would have undone them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kyma.engine.errors import (
    NoTransactionError,
    SavepointError,
    TransactionAbortedError,
    UnsupportedStatementError,
)

Settings = dict[str, str]


@dataclass
class _Mark:
    name: str
    settings: Settings
    hidden: Settings


class Transaction:
    """``restore(settings)`` puts a session's settings back (ROLLBACK, ROLLBACK TO, the end
    of SET LOCAL)."""

    def __init__(self, settings: Settings, restore: Callable[[Settings], None]) -> None:
        self.settings, self.restore = settings, restore
        self.active = False
        self.failed = False  # an error in the block: only its end or ROLLBACK TO run
        self.wrote = False
        self._begun: Settings = {}
        self._hidden: Settings = {}  # session values a SET LOCAL hides until the block ends
        self._marks: list[_Mark] = []

    def begin(self) -> None:
        if not self.active:
            self.active, self._begun = True, dict(self.settings)

    def end(self, commit: bool) -> str:
        """COMMIT or ROLLBACK; the tag Postgres answers (ROLLBACK for a failed COMMIT). A
        rollback of a block that wrote ends it and raises: its writes are committed."""
        tag = "COMMIT" if commit and not self.failed else "ROLLBACK"
        wrote = self.active and self.wrote
        if self.active:
            self.restore(self._begun if tag == "ROLLBACK" else {**self.settings, **self._hidden})
        self.active = self.failed = self.wrote = False
        self._hidden, self._marks = {}, []
        if tag == "ROLLBACK" and wrote:
            raise UnsupportedStatementError(
                "ROLLBACK cannot undo this transaction's writes: kyma committed each one when"
                " it ran, and they stay; the transaction is ended"
            )
        return tag

    def set_local(self, name: str) -> bool:
        """A SET LOCAL of ``name``: False outside a block (Postgres warns, nothing changes)."""
        if self.active:
            self._hidden.setdefault(name, self.settings.get(name, ""))
        return self.active

    def set_session(self, name: str, value: str) -> None:
        """A plain SET: inside a block it is also what COMMIT keeps after a SET LOCAL."""
        if name in self._hidden:
            self._hidden[name] = value

    def ran(self, wrote: bool) -> None:
        """A statement ran in the block; ``wrote``: it changed data or definitions."""
        self.wrote = self.wrote or (self.active and wrote)

    def savepoint(self, name: str) -> None:
        self._in_block("SAVEPOINT")
        if self.wrote:
            raise UnsupportedStatementError(
                f"SAVEPOINT {name} after a write in this transaction is not supported:"
                " kyma commits each write when it runs and could not roll back to it"
            )
        self._marks.append(_Mark(name, dict(self.settings), dict(self._hidden)))

    def release(self, name: str) -> None:
        """RELEASE: the savepoint and every later one go; nothing is undone."""
        self._in_block("RELEASE SAVEPOINT")
        del self._marks[self._find(name) :]

    def rollback_to(self, name: str) -> None:
        """ROLLBACK TO: back to the savepoint (kept), its settings, and out of a failed
        state; refused when a write came after it."""
        if not self.active:
            raise NoTransactionError("ROLLBACK TO SAVEPOINT can only be used in transaction blocks")
        at = self._find(name)
        if self.wrote:
            raise UnsupportedStatementError(
                f"ROLLBACK TO SAVEPOINT {name} over a write is not supported: kyma commits"
                " each write when it runs and cannot undo it; ROLLBACK ends the transaction"
            )
        mark = self._marks[at]
        del self._marks[at + 1 :]
        self.failed = False
        self._hidden = dict(mark.hidden)
        self.restore(mark.settings)

    def _in_block(self, verb: str) -> None:
        if not self.active:
            raise NoTransactionError(f"{verb} can only be used in transaction blocks")
        if self.failed:
            raise TransactionAbortedError(
                "current transaction is aborted, commands ignored until end of transaction block"
            )

    def _find(self, name: str) -> int:
        """The latest savepoint named ``name`` (Postgres allows repeats); 3B001 if none."""
        for at in range(len(self._marks) - 1, -1, -1):
            if self._marks[at].name == name:
                return at
        raise SavepointError(f'savepoint "{name}" does not exist')
