"""``LIKE … ESCAPE 'c'`` as the backslash-escaped pattern DataFusion accepts.

DataFusion's LIKE knows only the backslash as its escape character. A literal pattern with
another escape (or ``ESCAPE ''``, no escape at all) is rewritten into the same pattern
escaped with backslashes, and the ESCAPE clause dropped; Postgres matches the two alike, so
the rewritten statement may still be pushed down.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT a LIKE 'x!%' ESCAPE '!', a ILIKE '5%' ESCAPE '' FROM t")
>>> print(rule(stmt).sql("postgres"))
SELECT a LIKE 'x\\%', a ILIKE '5%' FROM t
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    for escape in list(stmt.find_all(exp.Escape)):
        match, character = escape.this, escape.expression
        pattern = match.expression if isinstance(match, exp.Like | exp.ILike) else None
        literal = isinstance(character, exp.Literal) and character.is_string
        if not (literal and isinstance(pattern, exp.Literal) and pattern.is_string):
            continue  # a computed pattern or escape: left for the engine to judge
        if character.name == "\\":
            escape.replace(match)
            continue
        pattern.replace(exp.Literal.string(backslashed(pattern.name, character.name)))
        escape.replace(match)
    return stmt


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
