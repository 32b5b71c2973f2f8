"""The Postgres parser plus kyma's syntax: EXPLAIN, kyma's statements, ``AS OF SNAPSHOT``
and ``SET RETENTION``. Everything else (``live(...)`` table functions, dynamic paths such as
``attributes['a']['b']``) is Postgres syntax already; kyma's rewrite rules give it meaning.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

from kyma.engine.errors import SqlError
from kyma.engine.query.dialect._statements import STATEMENTS
from kyma.engine.query.dialect.expressions import SNAPSHOT, Explain


class KymaParser(Postgres.Parser):
    def _parse_statement(self) -> exp.Expression | None:
        if self._curr and self._curr.text.upper() == "EXPLAIN":
            self._advance()
            analyze = self._match_text_seq("ANALYZE") or self._match_text_seq("ANALYSE")
            if not self._curr:
                self.raise_error("EXPLAIN needs the statement to explain after it")
            if self._curr.token_type in self.dialect.tokenizer_class.COMMANDS:  # SHOW …
                start = self._curr
                self._advance()
                command = self._parse_as_command(start)
                return self.expression(Explain(this=command, analyze=analyze))
            return self.expression(Explain(this=self._parse_statement(), analyze=analyze))
        if self._curr and self._next:
            words = (self._curr.text.upper(), self._next.text.upper())
            parse = STATEMENTS.get(words)
            if parse is not None:
                stmt = parse(*words, self._tokens[self._index + 2 :])
                if stmt is not None:
                    self._advance(len(self._tokens) - self._index)
                    return stmt
        return super()._parse_statement()

    def _parse_version(self) -> exp.Version | None:
        """``AS OF SNAPSHOT 42`` after a table name (before its alias)."""
        if not self._match_text_seq("AS", "OF", SNAPSHOT):
            return super()._parse_version()
        number = self._curr
        if not number or number.token_type != TokenType.NUMBER:
            got = f", got {number.text!r}" if number else ""
            self.raise_error(f"AS OF SNAPSHOT expects a snapshot id{got}")
            return None
        if not number.text.isdigit():
            raise SqlError(f"AS OF SNAPSHOT expects a snapshot id, got {number.text!r}")
        self._advance()
        snapshot = exp.Literal.number(number.text)
        return self.expression(exp.Version(this=SNAPSHOT, kind="AS OF", expression=snapshot))

    def _parse_alter_table_set(self) -> exp.AlterSet:
        """``SET RETENTION '30 days'``: the option form ``SET (retention = '30 days')``."""
        if self._match_text_seq("RETENTION"):
            value = self._parse_string()
            if value is None:
                self.raise_error("SET RETENTION expects a duration in quotes, e.g. '30 days'")
            option = exp.EQ(this=exp.column("retention"), expression=value)
            return self.expression(exp.AlterSet(expressions=[option]))
        return super()._parse_alter_table_set()
