"""Cutting input into statements at the ``;`` outside quotes and comments."""

from __future__ import annotations


def split(text: str) -> tuple[list[str], str]:
    """The complete statements in ``text`` (without their ``;``) and the unfinished rest.

    >>> split("SELECT ';'; SELECT 2;\\nSELECT")
    (["SELECT ';'", 'SELECT 2'], '\\nSELECT')
    """
    statements: list[str] = []
    start = i = 0
    quote: str | None = None
    while i < len(text):
        c = text[i]
        if quote == "--":
            if c == "\n":
                quote = None
        elif quote == "/*":
            if text.startswith("*/", i):
                quote, i = None, i + 1
        elif quote is not None:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif text.startswith("--", i) or text.startswith("/*", i):
            quote, i = text[i : i + 2], i + 1
        elif c == ";":
            if text[start:i].strip():
                statements.append(text[start:i].strip())
            start = i + 1
        i += 1
    return statements, text[start:]
