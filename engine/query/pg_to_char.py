"""Postgres's ``to_char(timestamp, template)``, vectorized over Arrow arrays.

DataFusion's ``to_char`` takes strftime patterns (``%Y``) and gives a Postgres template back
as written. Here a template is read as Postgres reads it (``formatting.c``): keywords such
as ``YYYY``, ``MM``, ``DD``, ``HH24``, ``MI``, ``SS``, ``MS``, ``US``, ``Mon``, ``Month``,
``Dy``, ``Day``, ``AM``, ``TZ`` (case-sensitive, the longest first), the ``FM`` and ``TM``
prefixes and the ``TH``/``th`` suffixes, ``"quoted text"`` and backslash escapes; any other
character is copied. Each keyword becomes one Arrow array of text (fields from Arrow's
temporal kernels, names by lookup), joined element-wise. Keywords Postgres knows that are not
here (``SP``, ``IDDD``) are refused by ``parse`` (0A000), never copied.

``kyma_to_char_timestamp(timestamp, template, zoned)``: ``zoned`` is whether the value was a
``timestamp with time zone`` (``TZ`` is then ``UTC``, kyma's only zone; else empty).

>>> ts = pa.array([1_772_600_767_123_456_000, None], pa.timestamp("ns"))
>>> to_char(ts, "YYYY-MM-DD HH24:MI:SS.US FMDD Mon Day", False).to_pylist()
['2026-03-04 05:06:07.123456 4 Mar Wednesday', None]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query.jsonb import constant

_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]
_UNSUPPORTED = ("IDDD", "iddd")
_NUMBERS = {
    # keyword: (field, width); width 0: never padded
    "YYYY": ("year", 4), "YYY": ("year1000", 3), "YY": ("year100", 2), "Y": ("year10", 1),
    "IYYY": ("iso_year", 4), "IYY": ("iso_year1000", 3), "IY": ("iso_year100", 2),
    "I": ("iso_year10", 1), "MM": ("month", 2), "DDD": ("day_of_year", 3), "DD": ("day", 2),
    "D": ("sunday_dow", 1), "ID": ("iso_dow", 1), "HH24": ("hour", 2), "HH12": ("hour12", 2),
    "HH": ("hour12", 2), "MI": ("minute", 2), "SS": ("second", 2), "MS": ("millis", 3),
    "US": ("micros", 6), "SSSSS": ("day_seconds", 0), "SSSS": ("day_seconds", 0),
    "WW": ("week_of_year", 2), "W": ("week_of_month", 1), "IW": ("iso_week", 2),
    "Q": ("quarter", 0), "J": ("julian", 0), "CC": ("century", 2),
    **{f"FF{n}": (f"fraction{n}", n) for n in range(1, 7)},
}  # fmt: skip
_NAMES = {"MONTH": (_MONTHS, 9), "MON": (_MONTHS, 3), "DAY": (_DAYS, 9), "DY": (_DAYS, 3)}
_MERIDIEM = {"AM", "PM", "A.M.", "P.M."}
_ERA = {"AD", "BC", "A.D.", "B.C."}
_ZONE = {"TZ": None, "OF": "+00", "TZH": "+00", "TZM": "00"}
_OTHER = {"RM", "Y,YYY", "FX"}


def _keywords() -> list[str]:
    """Every keyword in its spellings (as Postgres's table: upper, lower, and Capitalized
    for names), the longest first."""
    words: set[str] = set()
    for word in (*_NUMBERS, *_MERIDIEM, *_ERA, *_ZONE, *_OTHER, *_UNSUPPORTED):
        words |= {word, word.lower()}
    for word in _NAMES:
        words |= {word, word.lower(), word.capitalize()}
    return sorted(words, key=len, reverse=True)


_KEYWORDS = _keywords()


@dataclass(frozen=True)
class Part:
    """One piece of a template: a keyword (with its FM prefix and TH suffix) or text."""

    text: str
    keyword: bool = False
    fill: bool = False  # FM: no padding
    ordinal: str = ""  # "TH", "th" or ""


def parse(template: str) -> list[Part]:
    """``template`` as Postgres reads it; UnsupportedStatementError (0A000) for a keyword
    kyma does not write.

    >>> [p.text for p in parse('FMDD "of" MonthY')]
    ['DD', ' ', 'of', ' ', 'Month', 'Y']
    """
    parts: list[Part] = []
    at = 0
    while at < len(template):
        fill = False
        while template.startswith(("FM", "fm", "TM", "tm"), at):
            fill = fill or template[at : at + 2].upper() == "FM"
            at += 2
        if at >= len(template):
            break
        word = next((w for w in _KEYWORDS if template.startswith(w, at)), None)
        if word is not None:
            at += len(word)
            if word in _UNSUPPORTED:
                raise UnsupportedStatementError(
                    f"to_char: template pattern {word!r} is not supported"
                )
            ordinal = ""
            if template.startswith(("TH", "th"), at):
                ordinal = template[at : at + 2]
                at += 2
            if template.startswith(("SP", "sp"), at):
                raise UnsupportedStatementError("to_char: template suffix 'SP' is not supported")
            parts.append(Part(word, True, fill, ordinal))
        elif template[at] == '"':
            end = at + 1
            text = []
            while end < len(template) and template[end] != '"':
                if template[end] == "\\" and end + 1 < len(template):
                    end += 1
                text.append(template[end])
                end += 1
            parts.append(Part("".join(text)))
            at = end + 1
        elif template[at] == "\\" and at + 1 < len(template) and template[at + 1] == '"':
            parts.append(Part('"'))
            at += 2
        else:
            parts.append(Part(template[at]))
            at += 1
    return parts


def to_char(timestamps: pa.Array, template: str, zoned: bool) -> pa.Array:
    """Each timestamp (nanoseconds, UTC wall clock) written by ``template``."""
    fields = _Fields(timestamps)
    pieces = [_written(part, fields, zoned) for part in parse(template)]
    if all(isinstance(piece, str) for piece in pieces):  # text only: the same for each row
        return _null_where(fields, "".join(pieces))  # type: ignore[arg-type]
    return pc.binary_join_element_wise(*pieces, "")


class _Fields:
    """The timestamp fields a template reads, each computed once."""

    def __init__(self, timestamps: pa.Array) -> None:
        self.values = timestamps
        self.cache: dict[str, pa.Array] = {}

    def __getitem__(self, name: str) -> pa.Array:
        if name not in self.cache:
            self.cache[name] = _FIELD[name](self)
        return self.cache[name]


def _mod(array: pa.Array, n: int) -> pa.Array:
    return pc.subtract(array, pc.multiply(pc.divide(array, n), n))  # non-negative years


def _fraction(digits: int) -> Callable[[_Fields], pa.Array]:
    """The first ``digits`` digits of the second's fraction (``FF1`` … ``FF6``)."""
    return lambda f: pc.divide(f["micros"], 10 ** (6 - digits))


_FIELD: dict[str, Callable[[_Fields], pa.Array]] = {
    "year": lambda f: pc.year(f.values),
    "year1000": lambda f: _mod(f["year"], 1000),
    "year100": lambda f: _mod(f["year"], 100),
    "year10": lambda f: _mod(f["year"], 10),
    "iso_year": lambda f: pc.iso_year(f.values),
    "iso_year1000": lambda f: _mod(f["iso_year"], 1000),
    "iso_year100": lambda f: _mod(f["iso_year"], 100),
    "iso_year10": lambda f: _mod(f["iso_year"], 10),
    "month": lambda f: pc.month(f.values),
    "day": lambda f: pc.day(f.values),
    "day_of_year": lambda f: pc.day_of_year(f.values),
    "sunday_dow": lambda f: pc.day_of_week(f.values, count_from_zero=False, week_start=7),
    "iso_dow": lambda f: pc.day_of_week(f.values, count_from_zero=False, week_start=1),
    "hour": lambda f: pc.hour(f.values),
    "hour12": lambda f: pc.if_else(pc.equal(_mod(f["hour"], 12), 0), 12, _mod(f["hour"], 12)),
    "minute": lambda f: pc.minute(f.values),
    "second": lambda f: pc.second(f.values),
    "millis": lambda f: pc.millisecond(f.values),
    "micros": lambda f: pc.add(pc.multiply(f["millis"], 1000), pc.microsecond(f.values)),
    "day_seconds": lambda f: pc.add(
        pc.add(pc.multiply(f["hour"], 3600), pc.multiply(f["minute"], 60)), f["second"]
    ),
    "week_of_year": lambda f: pc.add(pc.divide(pc.subtract(f["day_of_year"], 1), 7), 1),
    "week_of_month": lambda f: pc.add(pc.divide(pc.subtract(f["day"], 1), 7), 1),
    "iso_week": lambda f: pc.iso_week(f.values),
    "quarter": lambda f: pc.quarter(f.values),
    "julian": lambda f: pc.add(
        pc.cast(pc.cast(f.values, pa.date32()), pa.int32()).cast(pa.int64()), 2_440_588
    ),
    "century": lambda f: pc.divide(pc.add(f["year"], 99), 100),
    **{f"fraction{n}": _fraction(n) for n in range(1, 7)},
}


def _written(part: Part, fields: _Fields, zoned: bool) -> pa.Array | str:
    if not part.keyword:
        return part.text
    word = part.text
    upper = word.upper()
    if upper in _NUMBERS:
        name, width = _NUMBERS[upper]
        values = fields[name]
        text = pc.cast(values, pa.string())
        if width and (not part.fill or name.startswith("fraction")):
            text = pc.utf8_lpad(text, width, "0")
        return _with_ordinal(text, values, part.ordinal)
    if upper in _NAMES:
        names, width = _NAMES[upper]
        index = fields["month"] if names is _MONTHS else fields["sunday_dow"]
        written = [_cased(name[:width] if width == 3 else name, word) for name in names]
        text = pc.take(pa.array(written), pc.subtract(index, 1))
        return text if part.fill or width == 3 else pc.utf8_rpad(text, 9, " ")
    if upper in _MERIDIEM:
        dots = "." in word
        morning, evening = ("A.M.", "P.M.") if dots else ("AM", "PM")
        if word.islower():
            morning, evening = morning.lower(), evening.lower()
        return pc.if_else(pc.less(fields["hour"], 12), morning, evening)
    if upper in _ERA:
        era = "A.D." if "." in word else "AD"
        return _null_where(fields, era.lower() if word.islower() else era)
    if upper in _ZONE:
        zone = _ZONE[upper] or ("UTC" if zoned else "")
        return _null_where(fields, zone.lower() if word.islower() else zone)
    if upper == "RM":
        roman = pc.take(pa.array([r if part.fill else r.ljust(4) for r in _ROMAN]),
                        pc.subtract(fields["month"], 1))  # fmt: skip
        return pc.utf8_lower(roman) if word.islower() else roman
    if upper == "Y,YYY":
        thousands = pc.cast(pc.divide(fields["year"], 1000), pa.string())
        rest = pc.utf8_lpad(pc.cast(fields["year1000"], pa.string()), 3, "0")
        return pc.binary_join_element_wise(thousands, rest, ",")
    return _null_where(fields, "")  # FX: no output


def _null_where(fields: _Fields, text: str) -> pa.Array:
    return pc.if_else(pc.is_null(fields.values), pa.scalar(None, pa.string()), text)


def _cased(name: str, word: str) -> str:
    if word.isupper():
        return name.upper()
    return name.lower() if word.islower() else name


def _with_ordinal(text: pa.Array, values: pa.Array, ordinal: str) -> pa.Array:
    """``text`` with English ordinal suffixes (``1st``, ``12th``), upper for ``TH``."""
    if not ordinal:
        return text
    last, tens = _mod(values, 10), _mod(values, 100)
    teen = pc.and_(pc.greater_equal(tens, 11), pc.less_equal(tens, 13))
    suffix = pc.if_else(
        teen,
        "th",
        pc.if_else(
            pc.equal(last, 1),
            "st",
            pc.if_else(pc.equal(last, 2), "nd", pc.if_else(pc.equal(last, 3), "rd", "th")),
        ),
    )
    if ordinal == "TH":
        suffix = pc.utf8_upper(suffix)
    return pc.binary_join_element_wise(text, suffix, "")


def _udf(timestamps: pa.Array, template: pa.Array, zoned: pa.Array) -> pa.Array:
    written = constant(template)
    if written is None:  # to_char(x, NULL) is NULL
        return pa.nulls(len(timestamps), pa.string())
    return to_char(timestamps, written, bool(constant(zoned)))


FUNCTION = "kyma_to_char_timestamp"
FUNCTIONS = (
    udf(
        _udf,
        [pa.timestamp("ns"), pa.string(), pa.bool_()],
        pa.string(),
        "immutable",
        name=FUNCTION,
    ),
)
