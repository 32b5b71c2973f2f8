"""Tab completion: SQL keywords, backslash commands, and the names kyma reports."""

from __future__ import annotations

import re
from collections.abc import Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from kyma.repl.client import Client, QueryError
from kyma.repl.commands import COMMANDS

_KEYWORD_TEXT = """
SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET JOIN LEFT RIGHT FULL INNER OUTER CROSS ON
USING AS AND OR NOT IN IS NULL LIKE ILIKE BETWEEN CASE WHEN THEN ELSE END DISTINCT UNION ALL
WITH ASC DESC COUNT SUM AVG MIN MAX CAST EXPLAIN CREATE TABLE DROP ALTER ADD COLUMN IF EXISTS
SHOW TABLES DESCRIBE CONNECTOR CONNECTORS REFRESH SNAPSHOT OF TRUE FALSE
has_token cosine_distance live
"""
KEYWORDS = _KEYWORD_TEXT.split()
_WORD = re.compile(r"([A-Za-z_][\w]*\.)?([A-Za-z_][\w]*)?$")
_MAX_DESCRIBED = 100  # tables whose columns are fetched; more would slow the start


class SqlCompleter(Completer):
    """Completes the word before the cursor; ``t.`` completes the columns of table ``t``."""

    def __init__(self) -> None:
        self.tables: dict[str, list[str]] = {}
        self.connectors: list[str] = []

    def refresh(self, client: Client) -> None:
        """Read the table, column and connector names; unreachable names stay unknown."""
        try:
            tables = client.execute("SHOW TABLES").table.column("name").to_pylist()
            self.tables = {t: self._columns(client, t) for t in tables[:_MAX_DESCRIBED]}
            names = client.execute("SHOW CONNECTORS").table.column("name").to_pylist()
            self.connectors = [str(n) for n in names]
        except (QueryError, KeyError):
            pass

    @staticmethod
    def _columns(client: Client, table: str) -> list[str]:
        return client.execute(f'DESCRIBE "{table}"').table.column("name").to_pylist()

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        if re.fullmatch(r"\s*\\\w*", before):
            word = before.lstrip()
            yield from _matching(word, [f"\\{name}" for name in COMMANDS])
            return
        match = _WORD.search(before)
        qualifier, word = (match.group(1), match.group(2) or "") if match else (None, "")
        if qualifier:
            yield from _matching(word, self.tables.get(qualifier[:-1], []))
            return
        if not word:
            return
        columns = sorted({c for cols in self.tables.values() for c in cols})
        keywords = KEYWORDS if word[0].isupper() else [k.lower() for k in KEYWORDS]
        yield from _matching(word, [*self.tables, *self.connectors, *columns, *keywords])


def _matching(word: str, candidates: Iterable[str]) -> Iterable[Completion]:
    seen = set()
    for candidate in candidates:
        if candidate.lower().startswith(word.lower()) and candidate not in seen:
            seen.add(candidate)
            yield Completion(candidate, start_position=-len(word))
