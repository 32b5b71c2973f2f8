"""A statement's shape: its tokens with the literals a plan can take as parameters lifted out.

``SELECT name FROM t WHERE id = 5`` and ``… WHERE id = 7`` have one shape, so they can share
one plan (``_templates``). Only literals whose value cannot change how kyma plans are lifted:
an unsigned integer or a plain string right after a comparison operator (``=``, ``<>``,
``<``…), or the value of ``CAST((…) AS type)`` (what a prepared statement's EXECUTE binds),
and ending its operand (followed by AND, OR, ``)``, ORDER BY… — not ``::``, ``+`` or ``||``).
Each lifted literal keeps its class in the shape: an integer that is Postgres's ``integer``
and one that is ``bigint`` have different shapes, as do a string and a number. Other
literals (decimals, ``LIMIT 10``, function arguments, ``E'…'``) stay part of the shape.
Read with kyma's tokenizer: no regular expression reads the statement.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from kyma.engine.query.dialect import Kyma

INT4, INT8, TEXT = "int4", "int8", "text"
_COMPARISONS = {TokenType.EQ, TokenType.NEQ, TokenType.LT, TokenType.LTE, TokenType.GT}
_COMPARISONS |= {TokenType.GTE}
_ENDS = {
    TokenType.AND,
    TokenType.OR,
    TokenType.R_PAREN,
    TokenType.SEMICOLON,
    TokenType.ORDER_BY,
    TokenType.GROUP_BY,
    TokenType.LIMIT,
    TokenType.OFFSET,
    TokenType.HAVING,
    TokenType.UNION,
    TokenType.EXCEPT,
    TokenType.INTERSECT,
}
_OPENS = [TokenType.L_PAREN, TokenType.L_PAREN]
_QUERIES = {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN}
_KYMA = Kyma()


@dataclass(frozen=True)
class Shape:
    """``key``: the tokens, each lifted literal as its class; ``literals``: the lifted
    literals' values as written (a string's without its quotes); ``spans``: where each
    stands in ``text``."""

    key: tuple[tuple[str, str], ...]
    text: str
    literals: tuple[str, ...]
    classes: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

    def render(self, values: list[str]) -> str:
        """The statement with each lifted literal replaced by the SQL text in ``values``."""
        parts, at = [], 0
        for (start, end), value in zip(self.spans, values, strict=True):
            parts += [self.text[at:start], value]
            at = end + 1
        return "".join(parts) + self.text[at:]

    def values(self) -> tuple[int | str, ...]:
        """The lifted literals as the planner's lowering reads them (ints, strings)."""
        return tuple(value_of(c, v) for c, v in zip(self.classes, self.literals, strict=True))


def shape_of(sql: str) -> Shape | None:
    """The shape of a query with at least one literal to lift; None for anything else.

    >>> a, b = shape_of("SELECT n FROM t WHERE id = 5"), shape_of("select n from t where id = 70")
    >>> a.key == b.key, a.literals, b.literals
    (True, ('5',), ('70',))
    >>> shape_of("SELECT n FROM t WHERE id = 5000000000").key == a.key
    False
    >>> shape_of("SELECT n FROM t LIMIT 5") is None, shape_of("SELECT n FROM t WHERE s = 'a' || s")
    (True, None)
    >>> shape_of("SELECT n FROM t WHERE s = CAST(('a') AS text)").literals
    ('a',)
    """
    try:
        tokens = _KYMA.tokenize(sql)
    except TokenError:
        return None
    if not tokens or tokens[0].token_type not in _QUERIES:
        return None
    key: list[tuple[str, str]] = []
    literals, classes, spans = [], [], []
    for i, token in enumerate(tokens):
        kind = _lifted(tokens, i, sql)
        if kind is None:
            key.append((token.token_type.name, _word(token)))
            continue
        key.append(("?", kind))
        literals.append(token.text)
        classes.append(kind)
        spans.append((token.start, token.end))
    if not literals:
        return None
    return Shape(tuple(key), sql, tuple(literals), tuple(classes), tuple(spans))


def _word(token: Token) -> str:
    """Keywords and unquoted names compare without case, as the parser reads them."""
    if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER, TokenType.NUMBER):
        return token.text
    return token.text.lower()


def _lifted(tokens: list[Token], i: int, sql: str) -> str | None:
    """The class of ``tokens[i]`` when it is a literal to lift, else None."""
    token = tokens[i]
    kind = _class(token, sql)
    if kind is None or i < 1:
        return None
    before = [t.token_type for t in tokens[max(0, i - 3) : i]]
    after = [t.token_type for t in tokens[i + 1 : i + 3]]
    if before[-1] in _COMPARISONS:
        return kind if not after or after[0] in _ENDS else None
    cast = i >= 3 and tokens[i - 3].token_type == TokenType.VAR
    if cast and tokens[i - 3].text.upper() == "CAST" and before[1:] == _OPENS:
        return kind if after == [TokenType.R_PAREN, TokenType.ALIAS] else None
    return None


def _class(token: Token, sql: str) -> str | None:
    if token.token_type == TokenType.STRING:
        quoted = sql[token.start : token.end + 1]
        return TEXT if quoted[:1] == "'" and quoted[-1:] == "'" else None
    if token.token_type != TokenType.NUMBER or not token.text.isdigit():
        return None
    if len(token.text.lstrip("0")) > 19:  # past int8 (and Python's int parsing limit)
        return None
    number = int(token.text)
    return INT4 if number < 1 << 31 else INT8 if number < 1 << 63 else None


def value_of(kind: str, literal: str) -> int | str:
    return literal if kind == TEXT else int(literal)


def sql_text(kind: str, literal: str) -> str:
    """A lifted literal as kyma writes it in the SQL it hands DataFusion.

    >>> sql_text(TEXT, "it's"), sql_text(INT4, "007")
    ("'it''s'", '007')
    """
    node = exp.Literal.string(literal) if kind == TEXT else exp.Literal.number(literal)
    return node.sql(dialect="postgres")


def sentinels(classes: tuple[str, ...]) -> list[str]:
    """A distinct stand-in literal of each class, as written (no quotes): planned once,
    where each lands in the plan shows where a literal goes."""
    first = {INT4: 1_987_654_301, INT8: 8_987_654_321_012_301}
    return [
        f"kymaparam{i}zq" if kind == TEXT else str(first[kind] + i)
        for i, kind in enumerate(classes)
    ]
