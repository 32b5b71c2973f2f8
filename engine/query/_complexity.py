"""How big a plan a statement makes: set-operation branches, query blocks, table references.

DataFusion plans a chain of ``UNION ALL`` branches, CTEs or joins as a tree as deep as the
chain, and walks it recursively: 4 000 ``SELECT 1`` branches overflow the 8 MiB stack of the
thread planning them (a segfault of the whole server), and its optimizer takes time growing
with the square of the branches well before that (1 000 branches: 3.5 s). Parentheses do not
show these chains, so the expression-depth limit (``_guard``) does not see them.

So the *relations* of a statement are counted and bounded (``KYMA_MAX_PLAN_RELATIONS``): each
SELECT (every branch of a set operation, every subquery and CTE body), each VALUES list and
each table reference. Set operations are counted on the text first, before sqlglot spends
seconds parsing a 20 000-branch chain; everything on the parsed tree after.
"""

from __future__ import annotations

import re

from sqlglot import exp

from kyma.engine.errors import StatementTooComplexError

# Set-operation words outside quoted text and comments (skipped whole). A lexer's count would
# be exact, but tokenizing a 20 000-branch chain takes sqlglot seconds; an odd quoting this
# misses (an escaped quote) only lets the statement on to the parsed tree's count.
_SET_WORDS = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\b(?:UNION|INTERSECT|EXCEPT)\b",
    re.IGNORECASE | re.DOTALL,
)
_RELATIONS = (exp.Select, exp.Values, exp.Table)
SETTING = "KYMA_MAX_PLAN_RELATIONS"


def check_set_operations(sql: str, limit: int) -> None:
    """StatementTooComplexError if ``sql`` has more set-operation branches than ``limit``
    relations allow (each branch is at least one), counted before anything parses.

    >>> check_set_operations("SELECT 'union' UNION SELECT 2 -- UNION", 2)
    >>> check_set_operations("SELECT 1 UNION SELECT 2 EXCEPT SELECT 3", 2)
    Traceback (most recent call last):
    ...
    kyma.engine.errors.StatementTooComplexError: statement too complex: 3 set-operation \
branches (UNION, INTERSECT, EXCEPT) exceed the limit 2 (KYMA_MAX_PLAN_RELATIONS); split it \
into smaller statements or put the rows in a table
    """
    if not limit or len(sql) < 5 * (limit - 1):
        return  # too short to hold that many set-operation words
    branches = 1
    for match in _SET_WORDS.finditer(sql):
        if match.group()[0] not in "'\"-/":
            branches += 1
    if branches > limit:
        raise _too_complex(f"{branches} set-operation branches (UNION, INTERSECT, EXCEPT)", limit)


def check_plan_size(stmt: exp.Expression, limit: int) -> None:
    """StatementTooComplexError if the parsed ``stmt`` has more relations than ``limit``.

    >>> import sqlglot
    >>> check_plan_size(sqlglot.parse_one("SELECT * FROM a JOIN b ON true"), 3)
    >>> check_plan_size(sqlglot.parse_one("SELECT 1 UNION SELECT * FROM a"), 2)
    Traceback (most recent call last):
    ...
    kyma.engine.errors.StatementTooComplexError: statement too complex: 3 query blocks and \
table references exceed the limit 2 (KYMA_MAX_PLAN_RELATIONS); split it into smaller \
statements or put the rows in a table
    """
    if not limit:
        return
    count = 0
    for _ in stmt.find_all(*_RELATIONS):
        count += 1
        if count > limit:
            break
    if count > limit:
        relations = sum(1 for _ in stmt.find_all(*_RELATIONS))
        raise _too_complex(f"{relations} query blocks and table references", limit)


def _too_complex(what: str, limit: int) -> StatementTooComplexError:
    return StatementTooComplexError(
        f"statement too complex: {what} exceed the limit {limit} ({SETTING}); split it into"
        " smaller statements or put the rows in a table",
        SETTING.removeprefix("KYMA_").lower(),
    )
