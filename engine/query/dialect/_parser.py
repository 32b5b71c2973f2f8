"""The Postgres parser plus kyma's syntax: EXPLAIN, kyma's statements, ``AS OF SNAPSHOT``
and ``SET RETENTION``. Everything else (``live(...)`` table functions, dynamic paths such as
``attributes['a']['b']``) is Postgres syntax already; kyma's rewrite rules give it meaning.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

from kyma.engine.errors import SqlError
from kyma.engine.query.dialect import _cursors, _intervals, _session_statements
from kyma.engine.query.dialect._statements import STATEMENTS
from kyma.engine.query.dialect.expressions import SNAPSHOT, Explain
from kyma.engine.query.rewrite.time_fields import DATE_PART

VERBS = {**_session_statements.VERBS, **_cursors.VERBS}
# what may follow a column label: a reserved word there is the label (``SELECT 1 AS select``)
_AFTER_LABEL = {TokenType.COMMA, TokenType.FROM, TokenType.R_PAREN, TokenType.SEMICOLON}


class KymaParser(Postgres.Parser):
    # Postgres has no lambdas: ``f(a -> 'x')`` is the JSON operator, not ``x`` mapped by ``a``.
    LAMBDAS = {k: v for k, v in Postgres.Parser.LAMBDAS.items() if k != TokenType.ARROW}
    # to_char's template as written: sqlglot would translate it to strftime (rewrite.to_char).
    # log10(x) is not log(10, x): that one is numeric in Postgres (rewrite.numeric_math).
    FUNCTIONS = {
        **Postgres.Parser.FUNCTIONS,
        "TO_CHAR": lambda args: exp.Anonymous(this="TO_CHAR", expressions=args),
        "LOG10": lambda args: exp.Anonymous(this="LOG10", expressions=args),
    }

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
        verb = VERBS.get(self._curr.text.upper()) if self._curr else None
        if verb is not None and self._curr and self._curr.token_type != TokenType.IDENTIFIER:
            stmt = verb(self._curr.text.upper(), self._tokens[self._index + 1 :])
            self._advance(len(self._tokens) - self._index)
            return stmt
        if self._curr and self._next:
            words = (self._curr.text.upper(), self._next.text.upper())
            rest = self._tokens[self._index + 2 :]
            if self._curr.token_type in self.dialect.tokenizer_class.COMMANDS and not rest:
                # ``SHOW PATHS FROM t.c``: the tokenizer kept the rest as one string
                tokens = self.dialect.tokenize(self._next.text)
                words, rest = (words[0], tokens[0].text.upper()), tokens[1:]
            parse = STATEMENTS.get(words)
            if parse is not None:
                stmt = parse(*words, rest)
                if stmt is not None:
                    self._advance(len(self._tokens) - self._index)
                    return stmt
        return super()._parse_statement()

    def _parse_alias(self, this: exp.Expr | None, explicit: bool = False) -> exp.Expr | None:
        """Postgres takes any keyword as a column label after AS (Metabase's ``… AS select``).

        >>> from kyma.engine.query._parse import parse
        >>> parse("SELECT 1 AS select, 2 AS from FROM t").sql("postgres")
        'SELECT 1 AS "select", 2 AS "from" FROM t'
        """
        label = self._next
        after = self._tokens[self._index + 2] if self._index + 2 < len(self._tokens) else None
        if (
            self._curr is not None
            and self._curr.token_type == TokenType.ALIAS
            and label is not None
            and label.token_type in self.RESERVED_TOKENS | {TokenType.SELECT, TokenType.FROM}
            and (after is None or after.token_type in _AFTER_LABEL)
        ):
            self._advance(2)
            name = exp.to_identifier(label.text.lower(), quoted=True)
            return self.expression(exp.Alias(this=this, alias=name))
        return super()._parse_alias(this, explicit)

    def _parse_interval(
        self, require_interval: bool = True, parse_function_unit: bool = True
    ) -> exp.Add | exp.Interval | None:
        following = self._next
        at_literal = self._curr and self._curr.token_type == TokenType.INTERVAL
        if at_literal and following is not None and following.token_type == TokenType.STRING:
            following.text = _intervals.in_words(following.text)
        return super()._parse_interval(require_interval, parse_function_unit)

    def _parse_date_part(self) -> exp.Expr:
        # Postgres's date_part is double precision, its extract numeric: mark which was written.
        node = super()._parse_date_part()
        node.set(DATE_PART, True)
        return node

    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        """Postgres' types, and arrays of OID alias types (``regtype[]``, which pgcli casts
        to), where sqlglot's parser stops."""
        parsed = super()._parse_types(check_func, schema, allow_identifiers, with_collation)
        if isinstance(parsed, exp.ObjectIdentifier) and self._match_pair(
            TokenType.L_BRACKET, TokenType.R_BRACKET
        ):
            element = exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=parsed.name.lower())
            return exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[element], nested=True)
        return parsed

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
