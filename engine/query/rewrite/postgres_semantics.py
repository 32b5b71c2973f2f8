"""Postgres's answers for operations that DataFusion computes differently, by operand type.

- A quotient of decimals (or of a decimal and an integer) calls ``kyma_numeric_div``
  (``pg_numeric``), which rounds as Postgres does, and an average of decimals or integers is
  ``sum / count`` divided so; DataFusion's own operators truncate at a fixed scale or use
  floats. Where the quotient becomes text or a result column it is written with its own
  scale (``quotient_text``, ``quotient_columns``).
- MIN and MAX of floats treat NaN as Postgres does, greater than every number (DataFusion
  skips it, and its grouped MIN mixes NaN into wrong answers).
- A literal such as ``0.06`` compared with, or computed against, a decimal is that exact
  decimal, as in Postgres (DataFusion reads it as a float: ``0.06 - 0.01`` is not ``0.05``);
  so is one added to, subtracted from or multiplied by an integer (``n + 0.10`` is numeric,
  ``'1.10'`` as text). Next to a float it stays a float, so a float column is never cast to
  a decimal.
- ``sqrt``, ``power``, ``ln``, ``exp`` and ``log`` of a numeric are refused (``numeric_math``).
- ``date + n`` and ``date - n`` add or subtract ``n`` days (DataFusion has no timestamp
  plus integer).
- Integer ``+ - *``, unary minus and ``abs`` compute in Postgres's result type (int2, int4,
  int8: the wider operand's; a literal is int4 when it fits): wider (bigint for int2 and
  int4, decimal(38, 0) for int8, where no result overflows), then cast back, and that cast
  fails out of range (22003) where DataFusion would wrap. ``sum`` of int8 is numeric.
  ``sum(x + c)`` of an integer column checks once per group (``shifted_sum``).
- A float converted to text is written as Postgres writes it (``float_text``).
- ``real`` (Float32) is typed as Postgres types float4: ``real op integer`` is double
  precision, ``sum`` accumulates in float4, a cast to real checks its range
  (``float4_typing``).
- ``to_char`` reads Postgres's templates (``to_char``).
- ``ceil``, ``floor`` and ``trunc`` of a numeric have Postgres's scale (``numeric_scale``).
- ``extract(epoch FROM x)`` of an interval or of a timestamp difference is Postgres's exact
  numeric (``pg_interval``; DataFusion drops the fraction of a duration and counts a year
  as 360 days); ``date_part('epoch', x)`` is that as double precision. The seconds of a
  timestamp or an interval keep their fraction (``time_fields``).
- ``interval * n``, ``n * interval`` and ``interval / n`` (``interval_arithmetic``).
- A cast to an integer type rounds: half away from zero from numeric (``2.5::int`` is 3),
  half to even from a float (``2.5::float8::int`` is 2); DataFusion truncates. ``round``
  of a float rounds half to even too (``float_round``).

Operand types come from sqlglot's type annotation over ``schema`` (``{table: {column: SQL
type}}``); a statement sqlglot cannot annotate is left as it is.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT avg(x), sum(x) / count(*), avg(f) FROM t", read="postgres")
>>> rule(stmt, {"t": {"x": "DECIMAL(15,2)", "f": "DOUBLE"}}).sql("postgres")
'SELECT KYMA_NUMERIC_DIV_COLUMN(CAST(SUM(x) AS DECIMAL(38, 10)), \
CAST(COUNT(x) AS DECIMAL(38, 10)), ARROW_TYPEOF(SUM(x)), ARROW_TYPEOF(COUNT(x))), \
KYMA_NUMERIC_DIV_COLUMN(CAST(SUM(x) AS DECIMAL(38, 10)), CAST(COUNT(*) AS DECIMAL(38, 10)), \
ARROW_TYPEOF(SUM(x)), ARROW_TYPEOF(COUNT(*))), AVG(f) FROM t'
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import sqlglot.errors
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query import pg_interval, pg_numeric
from kyma.engine.query.rewrite import (
    float4_typing,
    float_division,
    float_round,
    float_text,
    integer_overflow,
    interval_arithmetic,
    late_quotients,
    numeric_math,
    numeric_scale,
    quotient_columns,
    quotient_text,
    shifted_sum,
    time_fields,
    to_char,
)

_DECIMAL = exp.DataType.Type.DECIMAL
_REAL = exp.DataType.Type.FLOAT
_FLOATS = {exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE}
_ARGUMENT = exp.DataType.build("DECIMAL(38, 10)")


def rule(
    stmt: exp.Expression, schema: dict[str, dict[str, str]], *, federated: bool = True
) -> exp.Expression:
    """``federated``: the statement reads rows fetched from a source (dates arrive as
    timestamps only then; a statement over kyma's own tables skips the date arithmetic)."""
    if not _worth_typing(stmt, schema, federated):
        return stmt
    try:
        typed = annotate_types(
            qualify(stmt.copy(), schema=schema, dialect="postgres", quote_identifiers=False),
            schema=schema,
            dialect="postgres",
        )
    except (sqlglot.errors.SqlglotError, KeyError, ValueError):
        to_char.refuse_untyped(stmt)
        return stmt
    exact = {_key(node) for node in typed.find_all(*_MIXED) if _meets_decimal(node)}
    found = [
        (node, build) for node in typed.find_all(*_REWRITES) if (build := _applies(node, federated))
    ]
    chosen = {_key(node): build for node, build in found}
    # Match on the statement as written (its output names stay) before changing any of it,
    # then rewrite innermost nodes first.
    mixed = [node for node in stmt.find_all(*_MIXED) if _key(node) in exact] if exact else []
    kinds = tuple({type(node) for node, _ in found})
    rewrites = [
        (node, typed_node, chosen[key])
        for node, typed_node, key in _pairs(stmt, typed, kinds, chosen)
    ]
    for node in mixed:
        _exact_literals(node)
    for node, typed_node, build in rewrites:
        (shifted_sum.replaced(node) if build is shifted_sum.rule else averaged(node)).replace(
            build(node, typed_node)
        )
    quotient_text.rule(stmt)
    quotient_columns.rule(stmt)
    stmt = late_quotients.rule(stmt)
    to_char.refuse_untyped(stmt)
    return stmt


def _pairs(
    stmt: exp.Expression,
    typed: exp.Expression,
    kinds: tuple[type[exp.Expression], ...],
    chosen: dict[str, object],
) -> list[tuple[exp.Expression, exp.Expression, str]]:
    """Each node of ``kinds`` whose key is ``chosen``, with its typed twin (found by key) and
    the key, innermost first (keys are computed for those node types only: they cost)."""
    if not kinds:
        return []
    twins = {key: node for node in typed.find_all(*kinds) if (key := _key(node)) in chosen}
    return [
        (node, twins[key], key)
        for node in reversed(list(stmt.find_all(*kinds)))
        if (key := _key(node)) in twins
    ]


_MIXED = (exp.Binary, exp.Between, exp.In)
_LITERAL_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Paren, exp.Neg)


def _operands(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, exp.In):
        return [node.this, *node.expressions]
    return [node.left, node.right]


def _literal_only(node: exp.Expression) -> bool:
    """A number literal, or arithmetic over number literals only (``0.06 - 0.01``)."""
    if isinstance(node, exp.Literal):
        return node.is_number
    return isinstance(node, _LITERAL_ARITHMETIC) and all(
        _literal_only(child) for child in node.iter_expressions()
    )


def _meets_decimal(node: exp.Expression) -> bool:
    """An operator with a decimal-typed operand (or, for ``+ - *``, an integer-typed one: an
    integer and a numeric make a numeric in Postgres) and a literal-only one holding a
    fraction."""
    operands = _operands(node)
    exact = _typed_decimal if not isinstance(node, _EXACT_WITH_INTEGERS) else _typed_exact
    return any(exact(o) for o in operands) and any(
        _literal_only(o) and any(_fraction(lit) for lit in o.find_all(exp.Literal))
        for o in operands
    )


def _typed_decimal(node: exp.Expression) -> bool:
    if isinstance(node, exp.Avg):  # kyma_numeric_avg answers a decimal
        return _is_decimal(node.this)
    return not _literal_only(node) and node.type is not None and node.type.this == _DECIMAL


_EXACT_WITH_INTEGERS = (exp.Add, exp.Sub, exp.Mul)


def _typed_exact(node: exp.Expression) -> bool:
    return _typed_decimal(node) or (not _literal_only(node) and _is_integer(node))


def _fraction(literal: exp.Literal) -> bool:
    digits = literal.name.replace(".", "", 1)
    return literal.is_number and digits != literal.name and digits.isdigit()


def _exact_literals(node: exp.Expression) -> None:
    """Every fractional literal of ``node``'s literal-only operands as its exact decimal."""
    for operand in _operands(node):
        if not _literal_only(operand):
            continue
        for literal in list(operand.find_all(exp.Literal)):
            if _fraction(literal):
                exact = exp.Literal.string(literal.name)
                literal.replace(exp.Cast(this=exact, to=_decimal_type(literal.name)))


def _decimal_type(text: str) -> exp.DataType:
    """The narrowest DECIMAL(p, s) holding ``text`` exactly: ``0.06`` is DECIMAL(2, 2)."""
    whole, _, fraction = text.partition(".")
    scale = len(fraction)
    precision = max(len(whole.lstrip("0")) + scale, 1)
    return exp.DataType.build(f"DECIMAL({precision}, {scale})")


def _applies(node: exp.Expression, federated: bool) -> Callable[..., exp.Expression] | None:
    """The rewrite of ``node`` (typed), if one applies."""
    for rewrite in _REWRITES[type(node)]:
        if (federated or rewrite not in _FETCHED_ONLY) and rewrite[0](node):
            return rewrite[1]
    return None


def _key(node: exp.Expression) -> str:
    """The node's SQL with column qualifiers dropped: the same before and after qualify."""
    bare = node.copy()
    for column in bare.find_all(exp.Column):
        column.set("table", None)
    return bare.sql("postgres")


def _nan_free(value: exp.Expression) -> exp.Expression:
    isnan = exp.Anonymous(this="ISNAN", expressions=[value.copy()])
    return exp.case().when(isnan, exp.null()).else_(value.copy())


def _any_nan(value: exp.Expression) -> exp.Expression:
    isnan = exp.Anonymous(this="ISNAN", expressions=[value.copy()])
    return exp.Anonymous(this="BOOL_OR", expressions=[isnan])


def _nan(typed: exp.Expression) -> exp.Expression:
    """NaN of ``typed``'s float type (a real's NaN stays a real)."""
    kind = "REAL" if float_text.float_kind(typed) == "float4" else "DOUBLE"
    return exp.cast(exp.Literal.string("NaN"), exp.DataType.build(kind))


def _float_max(node: exp.Max, typed: exp.Max) -> exp.Expression:
    """NaN when any value is NaN, else the greatest number."""
    largest = exp.Max(this=_nan_free(node.this))
    return exp.case().when(_any_nan(node.this), _nan(typed.this)).else_(largest)


def _float_min(node: exp.Min, typed: exp.Min) -> exp.Expression:
    """The least number; NaN only when every value is NaN."""
    least = exp.Min(this=_nan_free(node.this))
    return exp.Coalesce(
        this=least, expressions=[exp.case().when(_any_nan(node.this), _nan(typed.this))]
    )


def _call(name: str, *operands: exp.Expression) -> exp.Expression:
    casts = [exp.Cast(this=o.copy(), to=_ARGUMENT.copy()) for o in operands]
    kinds = [exp.Anonymous(this="ARROW_TYPEOF", expressions=[o.copy()]) for o in operands]
    return exp.Anonymous(this=name, expressions=[*casts, *kinds])


def _worth_typing(stmt: exp.Expression, schema: dict[str, dict[str, str]], federated: bool) -> bool:
    """Whether some rewrite could apply (typing a statement costs a few milliseconds)."""
    types = {t.upper().split("(")[0] for columns in schema.values() for t in columns.values()}
    if types & {"DECIMAL", "NUMERIC", "DOUBLE"}:
        return True
    if any(_decimal_cast(c) for c in stmt.find_all(exp.Cast)):
        return True
    calls = (*numeric_math.CALLS, exp.Avg, exp.Round, exp.Ceil, exp.Floor, exp.Trunc)
    if stmt.find(*_ARITHMETIC, *calls):
        return True
    if stmt.find(exp.Div) is not None and any(_fraction(n) for n in stmt.find_all(exp.Literal)):
        return True  # a decimal literal divides as numeric
    casts = (exp.DataType.Type.ARRAY, *exp.DataType.INTEGER_TYPES)
    if any(c.to.this in casts for c in stmt.find_all(exp.Cast)):
        return True
    if any(to_char.is_to_char(node) for node in stmt.find_all(exp.Anonymous)):
        return True
    if float_text.may_apply(stmt) or stmt.find(exp.Extract) is not None:
        return True
    if "REAL" in types or any(c.to.this == _REAL for c in stmt.find_all(exp.Cast)):
        return True  # a real computes as Postgres's float4 (float4_typing)
    if stmt.find(exp.Div) is not None and stmt.find(exp.Interval) is not None:
        return True
    if stmt.find(exp.Div) is not None and (stmt.find(exp.Rand, exp.Pi) or _float_cast(stmt)):
        return True  # a float division by zero is 22012 (float_division)
    return federated and "TIMESTAMPTZ" in types and stmt.find(exp.Add, exp.Sub) is not None


def _float_cast(stmt: exp.Expression) -> bool:
    return any(c.to.this in (exp.DataType.Type.DOUBLE, _REAL) for c in stmt.find_all(exp.Cast))


def _decimal_cast(cast: exp.Cast) -> bool:
    return cast.to.this == _DECIMAL


def _is_decimal(node: exp.Expression) -> bool:
    """Decimal-typed, or a literal such as ``7.0`` or ``-7.0`` (a decimal in Postgres; sqlglot
    types it DOUBLE)."""
    while isinstance(node, exp.Paren | exp.Neg) and isinstance(node.this, exp.Literal | exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_number:
        return "." in node.name and "e" not in node.name.lower()
    return node.type is not None and node.type.this == _DECIMAL


def _divides_decimals(div: exp.Div) -> bool:
    """Postgres divides as numeric when one side is numeric and the other numeric or integer."""
    sides = (div.this, div.expression)
    if not any(_is_decimal(s) for s in sides):
        return False
    return all(
        _is_decimal(s) or (s.type is not None and s.type.this in exp.DataType.INTEGER_TYPES)
        for s in sides
    )


def _numeric_quotient(node: exp.Div) -> exp.Expression:
    """``kyma_numeric_div`` (``quotient_text`` writes it with each value's scale), or for two
    number literals the quotient itself, with the scale Postgres gives it (``14836.00 / 572`` is
    ``25.9370629370629371``)."""
    constants = [_constant(side) for side in (node.this, node.expression)]
    if None in constants or not constants[1]:
        return _call(pg_numeric.DIV.upper(), node.this, node.expression)
    quotient = format(pg_numeric.divide(*constants), "f")  # type: ignore[arg-type]
    return exp.Cast(this=exp.Literal.string(quotient), to=_decimal_type(quotient.lstrip("-")))


def _constant(node: exp.Expression) -> Decimal | None:
    """A number literal's exact value (with the minus signs before it), else None."""
    negative = False
    while isinstance(node, exp.Paren | exp.Neg):
        negative ^= isinstance(node, exp.Neg)
        node = node.this
    if not (isinstance(node, exp.Literal) and node.is_number):
        return None
    value = Decimal(node.name)
    return -value if negative else value


def _is_float(node: exp.Expression) -> bool:
    return node.type is not None and node.type.this in _FLOATS


def _is_integer(node: exp.Expression) -> bool:
    return node.type is not None and node.type.this in exp.DataType.INTEGER_TYPES


def _shifts_days(node: exp.Add | exp.Sub) -> bool:
    """``date + n`` or ``date - n`` (``n + date``): Postgres's date arithmetic in days (a
    fetched date is a timestamp at midnight in kyma; Postgres has no timestamp + integer)."""
    if _is_instant(node.left) and _is_integer(node.right):
        return True
    return isinstance(node, exp.Add) and _is_integer(node.left) and _is_instant(node.right)


def _is_instant(node: exp.Expression) -> bool:
    """A timestamp (DataFusion adds days to a DATE itself)."""
    temporal = node.type is not None and node.type.this in exp.DataType.TEMPORAL_TYPES
    return temporal and node.type.this != exp.DataType.Type.DATE  # type: ignore[union-attr]


_DAY_NANOSECONDS = exp.Literal.number(86_400_000_000_000)


def _plus_days(node: exp.Add | exp.Sub, typed: exp.Add | exp.Sub) -> exp.Expression:
    instant, days = (node.left, node.right) if _is_instant(typed.left) else (node.right, node.left)
    nanoseconds = exp.Mul(this=exp.cast(days.copy(), "BIGINT"), expression=_DAY_NANOSECONDS)
    span = exp.Anonymous(
        this="ARROW_CAST", expressions=[nanoseconds, exp.Literal.string("Duration(Nanosecond)")]
    )
    return type(node)(this=instant.copy(), expression=span)


_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Abs, exp.Sum)


def _rounds_to_integer(cast: exp.Cast) -> bool:
    """A cast to an integer type of a numeric or float operand (not of text or integers)."""
    return cast.to.this in exp.DataType.INTEGER_TYPES and (
        _is_decimal(cast.this) or _is_float(cast.this)
    )


def _rounded(node: exp.Cast, typed: exp.Cast) -> exp.Expression:
    """``ROUND(x)`` (half away from zero) from numeric; from a float half to even (rint):
    a value halfway between two integers goes to ``2 * ROUND(x / 2)``."""
    if _is_decimal(typed.this):
        rounded: exp.Expression = exp.Round(this=node.this.copy())
    else:
        rounded = float_round.half_to_even(exp.cast(node.this.copy(), "DOUBLE"))
    return exp.Cast(this=rounded, to=node.to.copy())


def _sums_int8(node: exp.Sum) -> bool:
    return integer_overflow.integer_kind(node.this) == "int8"


def _numeric_sum(node: exp.Sum, _typed: exp.Sum) -> exp.Expression:
    return exp.Sum(this=exp.cast(node.this.copy(), "DECIMAL(38, 0)"))


def _reads_text_as_array(cast: exp.Cast) -> bool:
    """A cast of a text value (not a constant: ``array_literals`` reads those) to an array."""
    return cast.to.this == exp.DataType.Type.ARRAY and (
        cast.this.type is not None and cast.this.type.this in exp.DataType.TEXT_TYPES
    )


def _refuse_text_as_array(node: exp.Cast, _typed: exp.Cast) -> exp.Expression:
    """DataFusion would make a one-element array of the text; Postgres parses it."""
    raise UnsupportedStatementError(
        f"{node.sql('postgres')!r}: casting a text column to an array is not supported;"
        " cast constants ('{1,2}'::int[]) or use string_to_array"
    )


def _average(node: exp.Avg, typed: exp.Avg) -> exp.Expression:
    """``sum(x) / count(x)`` divided as Postgres's ``numeric_avg`` does (the sum keeps the
    values' scale; integers are summed exactly, never overflowing). An average under
    ``OVER`` or ``FILTER`` gives each aggregate that clause (``averaged`` replaces the
    clause)."""
    value = node.this.copy()
    argument = typed.this.expressions[0] if isinstance(typed.this, exp.Distinct) else typed.this
    # int2 and int4 are summed as bigint (no overflow), int8 exactly: as numeric, or without
    # DISTINCT as two bigint sums of its high and low 32 bits (a decimal sum is slower)
    wide = _is_integer(argument) and integer_overflow.integer_kind(argument) == "int8"
    if wide and isinstance(value, exp.Distinct):
        value.expressions[0].replace(exp.cast(value.expressions[0].copy(), "DECIMAL(38, 0)"))
    sums = [exp.Sum(this=value)]
    if wide and not isinstance(value, exp.Distinct):
        high = exp.BitwiseRightShift(this=value.copy(), expression=exp.Literal.number(32))
        low = exp.BitwiseAnd(this=value.copy(), expression=exp.Literal.number(_LOW_BITS))
        sums = [exp.Sum(this=high), exp.Sum(this=low)]
    count: exp.Expression = exp.Count(this=node.this.copy())
    for clause in _clauses(node):
        sums = [_in_clause(clause, a) for a in sums]
        count = _in_clause(clause, count)
    total = sums[0]
    if len(sums) == 2:
        high, low = (exp.cast(s, "DECIMAL(38, 0)") for s in sums)
        total = exp.Add(
            this=exp.Mul(this=high, expression=exp.Literal.number(_LOW_BITS + 1)), expression=low
        )
    return _call(pg_numeric.DIV.upper(), total, count)


_LOW_BITS = 2**32 - 1


def _clauses(node: exp.Expression) -> list[exp.Expression]:
    """The ``FILTER`` and ``OVER`` clauses around an aggregate, innermost first."""
    clauses = []
    while isinstance(node.parent, exp.Filter | exp.Window) and node.arg_key == "this":
        node = node.parent
        clauses.append(node)
    return clauses


def _in_clause(clause: exp.Expression, aggregate: exp.Expression) -> exp.Expression:
    wrapped = clause.copy()
    wrapped.set("this", aggregate)
    return wrapped


def averaged(node: exp.Expression) -> exp.Expression:
    """What an average's rewrite replaces: the average, or its outermost clause."""
    clauses = _clauses(node) if isinstance(node, exp.Avg) else []
    return clauses[-1] if clauses else node


Rewrite = tuple[Callable[..., bool], Callable[..., exp.Expression]]
_CHECKED: Rewrite = (integer_overflow.applies, integer_overflow.rule)
_INTEGER_AVG: Rewrite = (lambda node: _is_integer(node.this), _average)


def _holds_quotient(node: exp.Expression) -> bool:
    """Whether typed ``node`` holds a numeric quotient or average (not under a cast)."""
    for inner in node.find_all(exp.Avg, exp.Div):
        quotient = (
            _divides_decimals(inner)
            if isinstance(inner, exp.Div)
            else (_is_decimal(inner.this) or _is_integer(inner.this))
        )
        path = inner
        while quotient and path is not node and not isinstance(path, exp.Cast):
            path = path.parent
        if quotient and not isinstance(path, exp.Cast):
            return True
    return False


def _refuse_requotient(node: exp.Expression, _typed: exp.Expression) -> exp.Expression:
    raise UnsupportedStatementError(
        f"{node.sql('postgres')!r}: a numeric quotient or average divided (or averaged) again"
        " keeps its own scale in Postgres (avg(x) / 3 rounds at avg(x)'s 16 decimals); not"
        " supported: cast it first (avg(x)::double precision, avg(x)::numeric(20, 6))"
    )


_REQUOTIENT: Rewrite = (
    lambda node: (
        _holds_quotient(node.this)
        or (isinstance(node, exp.Div) and _holds_quotient(node.expression))
    ),
    _refuse_requotient,
)
_DAYS: Rewrite = (_shifts_days, _plus_days)
_FLOAT_MAX: Rewrite = (lambda node: _is_float(node.this), _float_max)
_FLOAT_MIN: Rewrite = (lambda node: _is_float(node.this), _float_min)


def _is_epoch(node: exp.Extract) -> bool:
    return node.this.name.upper() == "EPOCH"


def _epoch_of_interval(node: exp.Extract) -> bool:
    """``extract(epoch FROM x)`` of an interval, or of a difference of two timestamps."""
    if not _is_epoch(node):
        return False
    operand = node.expression
    while isinstance(operand, exp.Paren):
        operand = operand.this
    if isinstance(operand, exp.Sub):
        return _is_instant(operand.left) and _is_instant(operand.right)
    return interval_arithmetic.is_interval(operand)


def _interval_epoch(node: exp.Extract, _typed: exp.Extract) -> exp.Expression:
    kind = exp.Literal.string("Interval(MonthDayNano)")
    interval = exp.Anonymous(this="ARROW_CAST", expressions=[node.expression.copy(), kind])
    epoch = exp.Anonymous(this=pg_interval.FUNCTION.upper(), expressions=[interval])
    return exp.cast(epoch, "DOUBLE") if node.args.get(time_fields.DATE_PART) else epoch


_FLOAT_TEXT: Rewrite = (float_text.applies, float_text.rule)
_FLOAT4: Rewrite = (float4_typing.applies, float4_typing.rule)
_INTERVAL: Rewrite = (interval_arithmetic.applies, interval_arithmetic.rule)
_SCALE: Rewrite = (numeric_scale.applies, numeric_scale.rule)
_MATH: Rewrite = (numeric_math.applies, numeric_math.rule)
_FETCHED_ONLY = {_DAYS, _FLOAT_MAX, _FLOAT_MIN}
"""Applied to statements that read fetched rows only: over kyma's own tables they would
put a CASE on hot paths (MIN and MAX of floats skip NaN there), and kyma's timestamps are
never dates."""
_REWRITES: dict[type[exp.Expression], tuple[Rewrite, ...]] = {
    exp.Avg: (  # Postgres averages integers as numeric too
        _REQUOTIENT,
        (lambda node: _is_decimal(node.this), _average),
        _INTEGER_AVG,
    ),
    exp.Div: (
        _INTERVAL,
        _REQUOTIENT,
        (_divides_decimals, lambda node, _typed: _numeric_quotient(node)),
        (float_division.applies, float_division.rule),  # before float4_typing's
    ),
    exp.Add: (_DAYS, _CHECKED),
    exp.Sub: (_DAYS, _CHECKED),
    exp.Mul: (_INTERVAL, _CHECKED),
    exp.Neg: (_CHECKED,),
    exp.Abs: (_CHECKED,),
    exp.Sum: ((shifted_sum.applies, shifted_sum.rule), (_sums_int8, _numeric_sum)),
    exp.Cast: (
        (integer_overflow.is_int4_constant, integer_overflow.int4_constant),
        (_rounds_to_integer, _rounded),
        (_reads_text_as_array, _refuse_text_as_array),
        _FLOAT_TEXT,
    ),
    exp.DPipe: (_FLOAT_TEXT,),
    exp.Concat: (_FLOAT_TEXT,),
    exp.ConcatWs: (_FLOAT_TEXT,),
    exp.Extract: ((_epoch_of_interval, _interval_epoch), (time_fields.applies, time_fields.rule)),
    exp.Round: ((float_round.applies, float_round.rule),),
    exp.Anonymous: ((to_char.applies, to_char.rule),),
    exp.Ceil: (_SCALE,),
    exp.Floor: (_SCALE,),
    exp.Trunc: (_SCALE,),
    exp.Max: (_FLOAT_MAX,),
    exp.Min: (_FLOAT_MIN,),
    **{call: (_MATH,) for call in numeric_math.CALLS},
}
for _call_type in float4_typing.CALLS:  # after the others: ``round`` of a real is float_round's
    _REWRITES[_call_type] = (*_REWRITES.get(_call_type, ()), _FLOAT4)
