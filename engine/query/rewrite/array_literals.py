"""Postgres array literals: ``'{a,"b c",NULL}'::text[]`` is an ARRAY of typed elements.

DataFusion reads a text cast to a list as a one-element list of that text; Postgres parses the
text (``array_in``): braces nest, elements are separated by commas, double quotes and
backslashes escape, an unquoted ``NULL`` is a null, whitespace around an element is dropped.
The constant is parsed here, at plan time, into ``CAST(ARRAY[CAST('a' AS T), …] AS T[])``;
malformed text is ``InvalidTextError`` (22P02) as in Postgres. Then ``x = ANY(ARRAY[…])``
and ``x <> ALL(ARRAY[…])`` over a constant array become ``x IN (…)`` / ``x NOT IN (…)``, whose
NULL semantics are Postgres's (DataFusion's ``array_has`` answers false where Postgres
answers NULL); ``x = ANY('{…}')`` without a cast reads the text as an array of ``x``'s type.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT s = ANY('{a, \\"b,c\\"}'::text[]), '{{1},{NULL}}'::int[]",
...     read="postgres")
>>> rule(stmt).sql("postgres")
"SELECT s IN (CAST('a' AS TEXT), CAST('b,c' AS TEXT)), \
CAST(ARRAY[ARRAY[CAST('1' AS INT)], ARRAY[CAST(NULL AS INT)]] AS INT[][])"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import InvalidTextError, UnsupportedStatementError

Parsed = list["Parsed | str | None"]

_ARRAY = exp.DataType.Type.ARRAY
ARRAY_TEXT = "array_text"
"""The ``meta`` key set on a cast this rule built (output names name it by its type)."""


def rule(expression: exp.Expression) -> exp.Expression:
    for cast in list(expression.find_all(exp.Cast)):
        if _text_to_array(cast):
            cast.replace(_array(cast.this.this, cast.to))
    for node in list(expression.find_all(exp.EQ, exp.NEQ)):
        _to_in_list(node)
    return expression


def _text_to_array(cast: exp.Cast) -> bool:
    return cast.to.this == _ARRAY and isinstance(cast.this, exp.Literal) and cast.this.is_string


def _element_type(dtype: exp.DataType) -> exp.DataType:
    while dtype.this == _ARRAY and dtype.expressions:
        dtype = dtype.expressions[0]
    return dtype


def _array(text: str, dtype: exp.DataType) -> exp.Expression:
    """``CAST(ARRAY[…] AS T[]…)`` with as many ``[]`` as the text nests."""
    parsed = parse(text)
    element = _element_type(dtype)
    depth, node = 1, parsed
    while node and isinstance(node[0], list):
        depth, node = depth + 1, node[0]
    target = element.copy()
    for _ in range(depth):
        target = exp.DataType(this=_ARRAY, expressions=[target], nested=True)
    cast = exp.Cast(this=_values(parsed, element), to=target)
    cast.meta[ARRAY_TEXT] = True
    return cast


def _values(parsed: Parsed, element: exp.DataType) -> exp.Array:
    items: list[exp.Expression] = []
    for item in parsed:
        if isinstance(item, list):
            items.append(_values(item, element))
        else:
            value = exp.null() if item is None else exp.Literal.string(item)
            items.append(exp.Cast(this=value, to=element.copy()))
    return exp.Array(expressions=items)


def _to_in_list(node: exp.EQ | exp.NEQ) -> None:
    """``x = ANY(ARRAY[…])`` → ``x IN (…)``; ``x <> ALL(ARRAY[…])`` → ``x NOT IN (…)``."""
    quantified = node.expression
    wanted = "ANY" if isinstance(node, exp.EQ) else "ALL"
    if isinstance(quantified, exp.Any if wanted == "ANY" else exp.All):
        operand = quantified.this
    elif isinstance(quantified, exp.Anonymous) and quantified.name.upper() == wanted:
        operand = quantified.expressions[0] if len(quantified.expressions) == 1 else None
    else:
        return
    while isinstance(operand, exp.Paren):
        operand = operand.this
    if isinstance(operand, exp.Literal) and operand.is_string:  # typed by x, as in Postgres
        operand = _untyped(parse(operand.this))
    if isinstance(operand, exp.Cast) and isinstance(operand.this, exp.Array):
        operand = operand.this
    if not isinstance(operand, exp.Array) or any(
        isinstance(e, exp.Array) for e in operand.expressions
    ):
        return
    if not operand.expressions:  # ANY of nothing is false, ALL of nothing true, even for NULL
        node.replace(exp.false() if wanted == "ANY" else exp.true())
        return
    listed = exp.In(this=node.this.copy(), expressions=[e.copy() for e in operand.expressions])
    node.replace(listed if wanted == "ANY" else exp.Not(this=listed))


def _untyped(parsed: Parsed) -> exp.Array:
    """An array literal compared with ``x`` without a cast: its elements are text literals
    (or NULL) that take ``x``'s type."""
    items = [
        _untyped(i) if isinstance(i, list) else exp.null() if i is None else exp.Literal.string(i)
        for i in parsed
    ]
    return exp.Array(expressions=items)


def parse(text: str) -> Parsed:
    """Postgres's array text as nested lists of element texts (None: NULL).

    >>> parse('{a, "b\\\\"c" ,NULL,"NULL"}'), parse("{{1,2},{3,4}}"), parse(" {} ")
    (['a', 'b"c', None, 'NULL'], [['1', '2'], ['3', '4']], [])
    """
    reader = _Reader(text)
    reader.skip_space()
    if reader.peek() == "[":
        raise UnsupportedStatementError(
            f"array literal {text!r}: dimension decorations ([1:2]=…) are not supported"
        )
    if reader.peek() != "{":
        raise reader.malformed('Array value must start with "{" or dimension information.')
    parsed = reader.array()
    reader.skip_space()
    if not reader.done():
        raise reader.malformed("Junk after closing right brace.")
    _check_dimensions(parsed, text)
    return parsed


def _check_dimensions(parsed: Parsed, text: str) -> None:
    """Sub-arrays of one level all have the same length and depth, as Postgres requires."""
    nested = [isinstance(item, list) for item in parsed]
    if any(nested) and not all(nested):
        raise _malformed(text, "Unexpected array element.")
    if not any(nested):
        return
    lists = [item for item in parsed if isinstance(item, list)]
    shapes = {_shape(item) for item in lists}
    if len(shapes) > 1:
        raise _malformed(
            text, "Multidimensional arrays must have sub-arrays with matching dimensions."
        )
    for item in lists:
        _check_dimensions(item, text)


def _shape(parsed: Parsed) -> tuple[int, ...]:
    first = parsed[0] if parsed else None
    return (len(parsed), *(_shape(first) if isinstance(first, list) else ()))


def _malformed(text: str, detail: str) -> InvalidTextError:
    return InvalidTextError(f"malformed array literal: {text!r} ({detail})")


class _Reader:
    """One pass over an array literal's characters (a constant's, at plan time)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def done(self) -> bool:
        return self.at >= len(self.text)

    def peek(self) -> str:
        return self.text[self.at] if not self.done() else ""

    def take(self) -> str:
        if self.done():
            raise self.malformed("Unexpected end of input.")
        char = self.text[self.at]
        self.at += 1
        return char

    def skip_space(self) -> None:
        while not self.done() and self.text[self.at].isspace():
            self.at += 1

    def malformed(self, detail: str) -> InvalidTextError:
        return _malformed(self.text, detail)

    def array(self) -> Parsed:
        self.take()  # "{"
        items: Parsed = []
        self.skip_space()
        if self.peek() == "}":
            self.take()
            return items
        while True:
            self.skip_space()
            items.append(self.array() if self.peek() == "{" else self.element())
            self.skip_space()
            char = self.take()
            if char == "}":
                return items
            if char != ",":
                raise self.malformed(f"Unexpected {char!r} character.")

    def element(self) -> str | None:
        """One element up to ``,`` or ``}``: quoted parts and unquoted parts may alternate;
        unquoted whitespace at either end is dropped; a bare ``NULL`` is a null."""
        chars: list[str] = []
        kept = 0  # chars that trailing whitespace may not eat (quoted or escaped)
        quoted = False
        while True:
            char = self.peek()
            if char in (",", "}") or char == "":
                break
            self.take()
            if char == '"':
                quoted = True
                while (inner := self.take()) != '"':
                    chars.append(self.take() if inner == "\\" else inner)
                kept = len(chars)
            elif char == "\\":
                chars.append(self.take())
                kept = len(chars)
            elif char in "{":
                raise self.malformed(f"Unexpected {char!r} character.")
            else:
                chars.append(char)
        while len(chars) > kept and chars[-1].isspace():
            chars.pop()
        value = "".join(chars)
        if not quoted and not value:
            raise self.malformed(f"Unexpected {self.peek() or 'end of input'!r} character.")
        if not quoted and kept == 0 and value.upper() == "NULL":
            return None
        return value
