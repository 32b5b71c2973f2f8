"""Statement shape limits, checked on the text before anything parses or plans it.

sqlglot and DataFusion both recurse over the expression tree: a few thousand chained
operators or nested parentheses exhaust Python's recursion limit or overflow DataFusion's
stack (a segfault of the whole server). So the statement's size and an estimate of its
expression depth are bounded first, from tokens alone (the tokenizer does not recurse).

The depth estimate bounds the tree a parser builds: an operand (the text between commas
of one group: ``(``, ``[`` or ``CASE``) is at most as deep as its operators plus its
deepest group, and a group one more than its deepest operand.
"""

from __future__ import annotations

import re

from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from kyma.engine.errors import SqlError, StatementLimitError

_OPEN = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.CASE}
_CLOSE = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.END}
_SYMBOLS = frozenset("+-*/%<>=!~^&|#@:?")
_WORDS = ("AND", "OR", "NOT", "IS", "LIKE", "ILIKE", "BETWEEN", "IN", "XOR")
_WORD_TOKENS = {TokenType[word] for word in _WORDS if word in TokenType.__members__}
# Every group opener and operator token holds one of these: their count bounds the estimate.
_COUNTED = re.compile(
    r"[(\[+\-*/%<>=!~^&|#@:?]|\b(?:CASE|" + "|".join(_WORDS) + r")\b", re.IGNORECASE
)


def check_statement(sql: str, max_bytes: int, max_depth: int) -> None:
    """LimitExceededError if ``sql`` is longer than ``max_bytes`` (UTF-8) or its expression
    depth estimate passes ``max_depth``; 0 turns a limit off."""
    # A character is at most 4 bytes in UTF-8: short statements need no encoding.
    if max_bytes and len(sql) * 4 > max_bytes and (size := len(sql.encode())) > max_bytes:
        raise StatementLimitError(
            f"statement of {size} bytes exceeds the limit {max_bytes} (KYMA_MAX_STATEMENT_BYTES)",
            "max_statement_bytes",
        )
    if not max_depth or _upper_bound(sql, max_depth) <= max_depth:
        return
    depth = expression_depth(sql)
    if depth > max_depth:
        raise StatementLimitError(
            f"expression nesting depth {depth} exceeds the"
            f" limit {max_depth} (KYMA_MAX_EXPRESSION_DEPTH); nest fewer parentheses, or use"
            " IN (...) or an array instead of a long chain of operators",
            "max_expression_depth",
        )


# What an IN list's values are counted over: quoted text and comments (skipped whole),
# ``IN (`` and the parentheses and commas between them.
_LIST_TOKENS = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\bIN\s*\(|[(),]",
    re.IGNORECASE | re.DOTALL,
)


def check_in_lists(sql: str, max_values: int) -> None:
    """StatementLimitError if an ``IN (...)`` list holds more than ``max_values`` values.

    Tens of thousands of values take sqlglot seconds per pass (tokenizing, parsing,
    copying, writing back) and DataFusion as long again: refused first, from one regex
    pass, and only when the statement has that many commas at all. 0 turns it off.
    """
    if not max_values or sql.count(",") < max_values:
        return
    counts: list[int | None] = []  # per open parenthesis: values so far, None if not IN's
    for match in _LIST_TOKENS.finditer(sql):
        text = match.group()
        if text == ",":
            if counts and counts[-1] is not None:
                counts[-1] += 1
        elif text == ")":
            values = counts.pop() if counts else None
            if values is not None and values + 1 > max_values:
                raise StatementLimitError(
                    f"an IN list of {values + 1} values exceeds the limit {max_values}"
                    " (KYMA_MAX_IN_LIST_VALUES); put the values in a table and join it,"
                    " or split the statement",
                    "max_in_list_values",
                )
        elif text == "(":
            counts.append(None)
        elif text[0] not in "'\"-/":  # IN (
            counts.append(0)


def _upper_bound(sql: str, limit: int) -> int:
    """At least the depth estimate: every opener and operator, counting quoted text too."""
    count = 0
    for _ in _COUNTED.finditer(sql):
        count += 1
        if count > limit:
            break
    return count


def too_deep() -> StatementLimitError:
    """A RecursionError of the parser or planner as the user's error it is."""
    return StatementLimitError(
        "the statement nests too deeply to plan (Python's recursion limit); nest fewer"
        " parentheses, subqueries or function calls",
        "max_expression_depth",
    )


def expression_depth(sql: str) -> int:
    """The depth estimate of ``sql`` (see the module's docstring)."""
    try:
        tokens = Postgres().tokenize(sql)
    except TokenError as e:
        raise SqlError(f"syntax error: {e}") from None
    # Per open group: [operators of the current operand, deepest group closed in it,
    # deepest operand so far]. An operand's tree is at most its operators plus its
    # deepest group; a group is one more than its deepest operand.
    groups = [[0, 0, 0]]
    open_depth = deepest = 0  # running: open groups plus their operators (unclosed text)
    for token in tokens:
        kind = token.token_type
        current = groups[-1]
        if kind in _OPEN:
            groups.append([0, 0, 0])
            open_depth += 1
        elif kind in _CLOSE and len(groups) > 1:
            ops, inner, best = groups.pop()
            open_depth -= 1 + ops
            parent = groups[-1]
            parent[1] = max(parent[1], 1 + max(best, ops + inner))
        elif kind is TokenType.COMMA:
            open_depth -= current[0]
            current[2] = max(current[2], current[0] + current[1])
            current[0] = current[1] = 0
        elif kind in _WORD_TOKENS or (token.text and _SYMBOLS.issuperset(token.text)):
            current[0] += 1
            open_depth += 1
        top = groups[0]
        deepest = max(deepest, open_depth, top[0] + top[1], top[2])
    return deepest
