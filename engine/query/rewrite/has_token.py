"""``has_token(text, 'word')`` as DataFusion's own string search, not the Python function.

``has_token`` is true where the ASCII-lowercased text holds the word between two characters
that are not ASCII letters or digits (or the text's ends). For a literal word of ASCII
letters and digits that is a regular expression with each letter as its two ASCII cases
(no case-insensitive flag: that would also fold the Kelvin sign and the long s). An
``ILIKE '%word%'`` in front made it slower (bench/explorer.py: 780 against 613 ms of CPU).
Any other call (a computed word, one with other characters, whose answer is false) stays
the function. Applied by the SELECT planner after its scans are pruned (stage 3 reads
``has_token`` itself).

>>> import sqlglot
>>> print(rule(sqlglot.parse_one("SELECT * FROM t WHERE has_token(m, 'Db2')")).sql("postgres"))
SELECT * FROM t WHERE m ~ '(^|[^0-9A-Za-z])[dD][bB]2([^0-9A-Za-z]|$)'
>>> print(rule(sqlglot.parse_one("SELECT has_token(m, 'a-b'), has_token(m, w)")).sql())
SELECT HAS_TOKEN(m, 'a-b'), HAS_TOKEN(m, w)
"""

from __future__ import annotations

from sqlglot import exp

_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_EDGE = "[^0-9A-Za-z]"


def rule(stmt: exp.Expression) -> exp.Expression:
    for call in list(stmt.find_all(exp.Anonymous)):
        if call.name.lower() != "has_token" or len(call.expressions) != 2:
            continue
        text, token = call.expressions
        if not (isinstance(token, exp.Literal) and token.is_string):
            continue
        word = token.name.lower()  # as the function lowers it (``udfs.has_token``)
        if not word or not set(word) <= _WORD:
            continue
        cased = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in word)
        pattern = f"(^|{_EDGE}){cased}({_EDGE}|$)"
        call.replace(exp.RegexpLike(this=text.copy(), expression=exp.Literal.string(pattern)))
    return stmt
