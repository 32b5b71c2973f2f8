"""``to_char(value, template)`` with Postgres's templates, by the value's type.

DataFusion's ``to_char`` reads strftime patterns, so a Postgres template came back as written
(``to_char(ts, 'YYYY')`` was ``'YYYY'``). The kyma dialect parses ``to_char`` as a plain call
(sqlglot would translate the template to strftime, losing ``FM``, ``Month``'s padding and
more); here a timestamp or date goes to ``kyma_to_char_timestamp`` (``pg_to_char``) with the
template as written, and a number to ``kyma_to_char_numeric`` (``pg_to_char_number``). Any
other ``to_char`` is refused (0A000): an interval, a template that is not a constant, a
template pattern kyma does not write. Applied by ``postgres_semantics`` (it types the
statement): ``rule(node, typed)`` rewrites one call whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> from kyma.engine.query.dialect import Kyma
>>> stmt = sqlglot.parse_one("SELECT to_char(CAST('2026-03-04' AS DATE), 'FMDD Mon')", read=Kyma)
>>> node, typed = stmt.expressions[0], annotate_types(stmt.copy()).expressions[0]
>>> applies(typed), rule(node, typed).sql("postgres")
(True, "KYMA_TO_CHAR_TIMESTAMP(ARROW_CAST(CAST('2026-03-04' AS DATE), \
'Timestamp(Nanosecond, None)'), 'FMDD Mon', TRUE)")
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query import pg_to_char, pg_to_char_number
from kyma.engine.query.rewrite import numeric_literals

NAME = "TO_CHAR"
_T = exp.DataType.Type
_TIMES = {_T.DATE, _T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMP_NS, _T.DATETIME}
_NUMBERS = {*exp.DataType.INTEGER_TYPES, *exp.DataType.REAL_TYPES}


def is_to_char(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.upper() == NAME


def applies(typed: exp.Anonymous) -> bool:
    return is_to_char(typed)


def rule(node: exp.Anonymous, typed: exp.Anonymous) -> exp.Expression:
    """The kyma function for the typed value, or UnsupportedStatementError."""
    if len(node.expressions) != 2:
        raise UnsupportedStatementError(f"{node.sql('postgres')!r}: to_char takes two arguments")
    value, template = node.expressions
    kind = typed.expressions[0].type
    if not (isinstance(template, exp.Literal) and template.is_string):
        raise UnsupportedStatementError(
            f"{node.sql('postgres')!r}: to_char needs a constant template"
        )
    if kind is not None and kind.this in _TIMES:
        pg_to_char.parse(template.name)  # a template kyma cannot write is refused now
        stamp = exp.Anonymous(
            this="ARROW_CAST",
            expressions=[value.copy(), exp.Literal.string("Timestamp(Nanosecond, None)")],
        )
        # to_char(date) reads the date as a timestamp with time zone
        zoned = exp.Boolean(this=kind.this not in (_T.TIMESTAMP, _T.TIMESTAMP_NS, _T.DATETIME))
        return exp.Anonymous(
            this=pg_to_char.FUNCTION.upper(), expressions=[stamp, template.copy(), zoned]
        )
    if _number_literal(value):  # numeric in Postgres, exactly (sqlglot types 1.5 DOUBLE)
        kind = exp.DataType.build("DECIMAL")
        value = _exact(value)
    if kind is not None and kind.this in _NUMBERS:
        return pg_to_char_number.call(value, template.name, kind)
    written = kind.sql("postgres").lower() if kind is not None else "an unknown type"
    raise UnsupportedStatementError(f"to_char of {written} is not supported")


def _exact(node: exp.Expression) -> exp.Expression:
    """A number literal (under minus signs) as its exact decimal."""
    node = node.copy()
    for literal in list(node.find_all(exp.Literal)):
        literal.replace(numeric_literals.exact(literal.name))
    return node


def _number_literal(node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and node.is_number


def refuse_untyped(stmt: exp.Expression) -> None:
    """UnsupportedStatementError if ``stmt`` still calls ``to_char`` (it could not be typed)."""
    for node in stmt.find_all(exp.Anonymous):
        if is_to_char(node):
            raise UnsupportedStatementError(
                f"{node.sql('postgres')!r}: to_char of a value of unknown type is not supported"
            )
