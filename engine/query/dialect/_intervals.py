"""An interval literal's ``hh:mm[:ss[.f]]`` part in words, before sqlglot reads the literal.

sqlglot reads ``INTERVAL '1 day 02:03:04.5'`` as ``INTERVAL '1 DAY'``, dropping the time
(a wrong answer), and DataFusion reads no ``hh:mm:ss`` at all; both read
``'1 day 2 hours 3 minutes 4.5 seconds'``, which is what Postgres means by it. Applied to
the string token after ``INTERVAL`` by the kyma parser.

>>> in_words("1 day 02:03:04.567891"), in_words("-1 day -02:30"), in_words("1 minute")
('1 day 2 hours 3 minutes 4.567891 seconds', '-1 day -2 hours -30 minutes', '1 minute')
"""

from __future__ import annotations

_UNITS = ("hours", "minutes", "seconds")


def in_words(text: str) -> str:
    """``text`` with each ``[-]hh:mm[:ss[.f]]`` word as hours, minutes and seconds; a word
    this does not read (``1:02.5``) stays as it is, for DataFusion to refuse."""
    return " ".join(_word(word) for word in text.split())


def _word(word: str) -> str:
    if ":" not in word:
        return word
    sign = word[0] if word[0] in "+-" else ""
    fields = word.lstrip("+-").split(":")
    whole = fields[:2]
    if len(fields) not in (2, 3) or not all(f.isdigit() for f in whole):
        return word
    if len(fields) == 3:
        seconds = fields[2]
        number = seconds.replace(".", "", 1)
        if not number.isdigit() or seconds.startswith("."):
            return word
    elif "." in word:
        return word
    values = [str(int(f)) for f in whole]
    if len(fields) == 3:
        integer, point, fraction = fields[2].partition(".")
        values.append(f"{int(integer)}{point}{fraction}")
    sign = "-" if sign == "-" else ""
    return " ".join(f"{sign}{value} {unit}" for value, unit in zip(values, _UNITS, strict=False))
