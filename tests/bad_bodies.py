"""A corpus of bad NDJSON bodies, shared by the coercion tests and the HTTP tests.

Bodies are generated from templates: a bad line sits at line 3, after a good line and a
blank one, and before another good line, so line counting over blank lines is checked too.
"""

from __future__ import annotations

from dataclasses import dataclass

from kyma.engine.types import DEFAULT_COLUMNS, Column, KymaType

COLUMNS = (
    *DEFAULT_COLUMNS,
    *(
        Column(name, KymaType.parse(kind))
        for name, kind in [
            ("b", "bool"),
            ("i", "int"),
            ("l", "long"),
            ("r", "real"),
            ("s", "string"),
            ("t", "timestamp"),
            ("v", "vector(3)"),
            ("d", "dynamic"),
        ]
    ),
    Column("nn", KymaType("long"), nullable=False),
)
PROPS_FIELDS = ["extra"]
GOOD = b'{"i": 1, "nn": 0, "s": "ok"}'


@dataclass(frozen=True)
class Bad:
    name: str
    body: bytes
    line: int | None
    field: str | None


def at_line_3(line: bytes) -> bytes:
    return GOOD + b"\n\n" + line + b"\n" + GOOD + b"\n"


def field_cases(field: str, *raw_values: str) -> list[Bad]:
    """One body per value of ``field`` that its column (or JSON itself) rejects."""
    return [
        Bad(f"{field}={raw}", at_line_3(f'{{"nn": 1, "{field}": {raw}}}'.encode()), 3, field)
        for raw in raw_values
    ]


def line_cases(*lines: bytes) -> list[Bad]:
    """One body per malformed line; no field is to blame."""
    return [Bad(repr(line), at_line_3(line), 3, None) for line in lines]


CASES = [
    *field_cases("b", "1", "0", '"true"', '"yes"', "[true]", '{"a": true}', "1.0"),
    *field_cases(
        "i",
        "2147483648",
        "-2147483649",
        "3000000000",
        "9223372036854775808",
        "1.5",
        "1e2",
        "1.0",
        '"7"',
        "true",
        "[1]",
        '{"v": 1}',
    ),
    *field_cases("l", "9223372036854775808", "-9223372036854775809", "1e19", "0.5", '"1"', "false"),
    *field_cases(
        "r",
        '"1.5"',
        "true",
        "[1.5]",
        '{"x": 1}',
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        "-Infinity",
        "1.7976931348623159e308",
        "1" + "0" * 400,
    ),
    *field_cases("s", '"\\ud800"', '"\\udc00"', '"a\\ud800b"', '["\\udbff"]', "NaN", "[Infinity]"),
    *field_cases(
        "t",
        '"yesterday"',
        '"2024-13-01T00:00:00Z"',
        '"2024-02-30T00:00:00Z"',
        '"2023-02-29"',
        '"2024-05-01T24:00:00Z"',
        '"2024-05-01T12:60:00Z"',
        '"2024-05-01T12:00:60Z"',
        '"2024-05-01T12:00:00+24:00"',
        '"2024-05-01T12:00:00+02:60"',
        '"2024-05-01T12:00:00.1234567890Z"',
        '" 2024-05-01T12:00:00Z"',
        '"2024-05-01T12:00:00Z "',
        '"2024-05-01T12:00:00 Z"',
        '"2024-05-01T12:00:00,5Z"',
        '"2024-05-01T12:00.5"',
        '"2024-05-01T1200"',
        '"20240501T120000Z"',
        '"2024-5-1"',
        '"2024-05-01Z"',
        '"\\u0661\\u0669\\u0667\\u0660-01-01"',
        '"0001-01-01T00:00:00Z"',
        '"2262-04-12T00:00:00Z"',
        '""',
        "1.5",
        "1e3",
        "true",
        "[1]",
        '{"a": 1}',
        "9223372036854775808",
        "-9223372036854775809",
    ),
    *field_cases(
        "v",
        "[1, 2]",
        "[1, 2, 3, 4]",
        "[]",
        '[1, "x", 3]',
        "[1, true, 3]",
        "[1, null, 3]",
        "[[1], 2, 3]",
        '"1,2,3"',
        "5",
        '{"a": 1}',
        "[1e39, 0, 0]",
        "[1, 2, 1e400]",
        "[NaN, 1, 2]",
        "[1, 2, " + "9" * 50 + "]",
    ),
    *field_cases(
        "d", "NaN", "[1, Infinity]", '{"a": {"b": 1, "b": 2}}', '{"a": 1e400}', '"\\ud800"'
    ),
    *field_cases("props", "[1]", '"x"', "5", "true", '{"a": NaN}', '{"a": 1, "a": 2}'),
    *field_cases("extra", "NaN", '{"k": [1, 2, {"x": 1, "x": 2}]}'),
    *field_cases("unknown", "NaN", "-Infinity", '[{"k": 1, "k": 2}]', '"\\udc00"'),
    Bad("props clash", at_line_3(b'{"nn": 1, "props": {"extra": 1}, "extra": 2}'), 3, "extra"),
    Bad("top-level duplicate", at_line_3(b'{"nn": 1, "i": 1, "i": 2}'), 3, "i"),
    Bad("escaped duplicate", at_line_3(b'{"nn": 1, "s": "a", "\\u0073": "b"}'), 3, "s"),
    Bad("duplicate unknown", at_line_3(b'{"nn": 1, "u": 1, "u": 1}'), 3, "u"),
    Bad("non-nullable missing", at_line_3(b'{"i": 1}'), 3, "nn"),
    Bad("non-nullable null", at_line_3(b'{"nn": null}'), 3, "nn"),
    *line_cases(
        b'{"i": 1',
        b'{"i": ',
        b'{"i"',
        b"{",
        b'{"s": "abc',
        b'{"i": 1,}',
        b"{i: 1}",
        b"{'i': 1}",
        b'{"i": 1} x',
        b'{"i": 1}{"i": 2}',
        b'{"i": 1} {"i": 2}',
        b'{"i": 1} null',
        b'{"i": 01}',
        b'{"i": +1}',
        b'{"i": .5}',
        b'{"i": 1.}',
        b'{"i": 0x10}',
        b'{"i": tru}',
        b'{"i": nan}',
        b'{"i": 1} // comment',
        b'{"s": "\\x41"}',
        b'{"s": "\\q"}',
        b'{"s": "a\tb"}',
        b'{"s": "a\x01b"}',
        b'{"i": 1' + b"0" * 5000 + b"}",
        b'{"d": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
        b"[1, 2]",
        b'[{"i": 1}]',
        b"[]",
        b'"x"',
        b"1",
        b"-0",
        b"null",
        b"true",
        b"\x0c",
        b'\xef\xbb\xbf{"i": 1}',
        b'{"s": "\xff"}',
        b'{"\xff": 1}',
        b'{"s": "\xc3"}',
        b'{"s": "\xc0\xaf"}',
        b'{"s": "\xed\xa0\x80"}',
        b'{"s": "\xf4\x90\x80\x80"}',
        b"\xff",
    ),
    Bad("object split over lines", GOOD + b"\n\n" + b'{"i":\n1}\n', 3, None),
    Bad("null first line", b"null\n" + GOOD + b"\n", 1, None),
    Bad("non-UTF-8 first line", b'{"s": "\xfe"}\n' + GOOD + b"\n", 1, None),
    Bad("BOM then bad line", b'\xef\xbb\xbf{"i": 1.5, "nn": 0}\n', 1, "i"),
    Bad("crlf and blank lines", GOOD + b"\r\n\r\n \t\r\n" + b'{"nn": 0, "b": 1}\r\n', 4, "b"),
    Bad("first error wins", at_line_3(b'{"nn": 0, "i": "x"}') + b'{"nn": 0, "r": NaN}\n', 3, "i"),
    Bad("empty", b"", None, None),
    Bad("only blank lines", b"\n\n   \n\t\r\n", None, None),
    Bad("only a BOM", b"\xef\xbb\xbf", None, None),
]
