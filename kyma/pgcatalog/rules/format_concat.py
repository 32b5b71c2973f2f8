"""``format('%s.%I', a, b)`` (Metabase's type and table names) as ``concat(a, '.',
quote_ident(b))``: ``%s`` an argument, ``%I`` it quoted, ``%%`` a percent sign. A format
with other specifiers is left as it is.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT format('<%s>.%I', a.x, b)")).sql("postgres")
"SELECT CONCAT('<', a.x, '>.', QUOTE_IDENT(b))"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for call in list(stmt.find_all(exp.Format)):
        text = call.this
        if isinstance(text, exp.Literal) and text.is_string:
            parts = _parts(text.name, list(call.expressions))
            if parts is not None:
                concat = exp.Anonymous(this="concat", expressions=parts or [exp.null()])
                pairs.append((call, concat))
    replace_all(pairs)
    return stmt


def _parts(text: str, arguments: list[exp.Expression]) -> list[exp.Expression] | None:
    parts: list[exp.Expression] = []
    literal, position = "", 0
    while position < len(text):
        char = text[position]
        if char != "%":
            literal += char
            position += 1
            continue
        spec = text[position + 1 : position + 2]
        position += 2
        if spec == "%":
            literal += "%"
            continue
        if spec not in ("s", "I"):
            return None
        if literal:
            parts.append(exp.Literal.string(literal))
            literal = ""
        argument = arguments.pop(0) if arguments else exp.null()
        quoted = exp.Anonymous(this="quote_ident", expressions=[argument])
        parts.append(argument if spec == "s" else quoted)
    if literal:
        parts.append(exp.Literal.string(literal))
    return parts
