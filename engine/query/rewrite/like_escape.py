"""``LIKE … ESCAPE 'c'`` as the backslash-escaped pattern DataFusion accepts.

DataFusion's LIKE knows only the backslash as its escape character. A literal pattern with
another escape (or ``ESCAPE ''``, no escape at all) is rewritten into the same pattern
escaped with backslashes, and the ESCAPE clause dropped; Postgres matches the two alike, so
the rewritten statement may still be pushed down. A pattern built of literals (SQLAlchemy's
``$1::VARCHAR || '%'``, its parameter bound) counts as a literal.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT a LIKE 'x!%' ESCAPE '!', a ILIKE '5%' ESCAPE '' FROM t")
>>> print(rule(stmt).sql("postgres"))
SELECT a LIKE 'x\\%', a ILIKE '5%' FROM t
>>> stmt = sqlglot.parse_one("SELECT a NOT LIKE CAST('pg/_' AS TEXT) || '%' ESCAPE '/' FROM t")
>>> print(rule(stmt).sql("postgres"))
SELECT a NOT LIKE 'pg\\_%' FROM t
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    for escape in list(stmt.find_all(exp.Escape)):
        match, character = escape.this, escape.expression
        pattern = match.expression if isinstance(match, exp.Like | exp.ILike) else None
        literal = isinstance(character, exp.Literal) and character.is_string
        text = constant_text(pattern) if pattern is not None else None
        if not literal or text is None:
            continue  # a computed pattern or escape: left for the engine to judge
        escaped = text if character.name == "\\" else backslashed(text, character.name)
        pattern.replace(exp.Literal.string(escaped))
        escape.replace(match)
    return stmt


_TEXT = {exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR}


def constant_text(node: exp.Expression) -> str | None:
    """The string a tree of string literals, their casts to text and ``||`` spells, else None.

    >>> constant_text(exp.DPipe(this=exp.Literal.string("a"), expression=exp.Literal.string("%")))
    'a%'
    >>> constant_text(exp.column("x")) is None
    True
    """
    if isinstance(node, exp.Literal):
        return node.name if node.is_string else None
    if isinstance(node, exp.Paren):
        return constant_text(node.this)
    if isinstance(node, exp.Cast) and isinstance(node.to, exp.DataType) and node.to.this in _TEXT:
        return constant_text(node.this)
    if isinstance(node, exp.DPipe):
        left, right = constant_text(node.this), constant_text(node.expression)
        return None if left is None or right is None else left + right
    return None


def backslashed(pattern: str, escape: str) -> str:
    r"""``pattern`` with ``escape`` (one character, or '' for none) as its escape, rewritten
    to escape with a backslash.

    >>> backslashed("50!% off!!", "!"), backslashed(r"C:\dir_%", "")
    ('50\\% off!', 'C:\\\\dir_%')
    """
    out: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if escape and char == escape:
            following = next(chars, "")
            out.append("\\" + following if following in ("%", "_", "\\") else following)
        elif char == "\\":
            out.append("\\\\")
        else:
            out.append(char)
    return "".join(out)
