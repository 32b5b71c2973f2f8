"""The strict JSON reader for one NDJSON line, shared by both paths.

Stricter than :func:`json.loads`, and exactly as strict as pyarrow's reader: ``NaN`` and
``Infinity`` are not numbers, a number must fit a double, no object repeats a key (at any
depth), and strings hold Unicode scalar values (no lone surrogates). ``-0`` keeps its sign
for ``real`` columns, as Arrow reads it. Every failure is an :class:`IngestError` that
names the line and, when the problem sits inside one, the top-level field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from kyma.engine.errors import IngestError

_SHOW_CHARS = 80
# A \u escape of a surrogate code point: the only way a lone surrogate gets into a str.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class NegZero(int):
    """JSON's ``-0``: the integer 0, whose float value is -0.0."""

    def __float__(self) -> float:
        return -0.0


NEG_ZERO = NegZero(0)


def is_int(value: object) -> bool:
    """Whether a parsed value is a JSON integer (``true`` and ``false`` are not)."""
    return type(value) is int or value is NEG_ZERO


def show(value: object) -> str:
    """An offending value for a message: ``repr`` of a string, JSON text of anything else,
    cut to about 80 characters."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOW_CHARS else text[: _SHOW_CHARS - 3] + "..."


class _Pairs(list):
    """An object's key/value pairs as written, duplicates kept (for locating problems)."""


class _Rejected(Exception):
    def __init__(self, detail: str, kind: Callable[[Any], bool]) -> None:
        super().__init__(detail)
        self.kind = kind


def _bad_number(node: object) -> bool:
    return isinstance(node, float) and not math.isfinite(node)


def _nested_duplicate(node: object) -> bool:
    return isinstance(node, _Pairs) and len({key for key, _ in node}) != len(node)


def _surrogate(node: object) -> bool:
    return isinstance(node, str) and _SURROGATE.search(node) is not None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Rejected(f"duplicate key {key!r}", _nested_duplicate)
            seen.add(key)
    return obj


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Rejected(f"number {text} does not fit a double", _bad_number)
    return value


def _constant(text: str) -> float:
    raise _Rejected(f"{text} is not a JSON number", _bad_number)


def _int(text: str) -> int:
    return NEG_ZERO if text == "-0" else int(text)


_TRUSTED = json.JSONDecoder()
_TRUSTED_SIGNED = json.JSONDecoder(parse_int=_int)
_STRICT = json.JSONDecoder(
    object_pairs_hook=_object, parse_float=_float, parse_int=_int, parse_constant=_constant
)
_LENIENT = json.JSONDecoder(object_pairs_hook=_Pairs)


def parse_line(text: str, line: int) -> dict[str, Any]:
    """The JSON object on one line; raise IngestError naming the line (and field)."""
    try:
        obj = _STRICT.decode(text)
    except _Rejected as e:
        raise _error(str(e), line, _locate_in(text, e.kind)) from None
    except json.JSONDecodeError as e:
        raise IngestError(f"line {line}: invalid JSON: {e.msg} (column {e.colno})", line) from None
    except RecursionError:
        raise IngestError(f"line {line}: JSON nested too deeply", line) from None
    except ValueError:  # an integer beyond Python's limit of digits
        raise IngestError(f"line {line}: invalid JSON: an integer is too long", line) from None
    if type(obj) is not dict:
        raise IngestError(f"line {line}: expected a JSON object, got {_kind(obj)}", line)
    if _SURROGATE_ESCAPE.search(text):
        field = _locate(obj.items(), _surrogate)
        if field is not None:
            raise _error("a string holds a lone surrogate (not valid Unicode)", line, field)
    return obj


def parse_checked(text: str, *, signed_zero: bool) -> dict[str, Any]:
    """The object on a line pyarrow has already read without finding fault.

    pyarrow rejects what the strict reader rejects (duplicate keys, lone surrogates, NaN and
    overflow, the last two by the fast path's check for non-finite floats), so the plain C
    decoder suffices; ``signed_zero`` keeps ``-0`` apart for fields that become floats.
    """
    # orjson is several times faster than the stdlib decoder, but reads some integers past
    # 64 bits (below -2**63, above 2**64 - 1) as floats: nineteen digits in a row send a line
    # to the stdlib decoder, which keeps every integer exact.
    if not signed_zero and _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:  # whatever orjson refuses, the stdlib decoder judges
            pass
    return (_TRUSTED_SIGNED if signed_zero else _TRUSTED).decode(text)


_LONG_DIGITS = re.compile(r"\d{19}")


def _error(detail: str, line: int, field: str | None) -> IngestError:
    if field is None:
        return IngestError(f"line {line}: {detail}", line)
    return IngestError(f"line {line}, field {field!r}: {detail}", line, field)


def _locate_in(text: str, bad: Callable[[Any], bool]) -> str | None:
    """The field holding a problem the strict reader stopped at, if the line parses leniently."""
    try:
        pairs = _LENIENT.decode(text)
    except (ValueError, RecursionError):  # a later syntax error: no field to name
        return None
    if not isinstance(pairs, _Pairs):
        return None
    field = _locate(pairs, bad)
    if field is None and bad is _nested_duplicate:  # the line's own object repeats a key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                return key
            seen.add(key)
    return field


def _locate(pairs: Iterable[tuple[str, Any]], bad: Callable[[Any], bool]) -> str | None:
    """The first top-level field whose key or value holds a node that is ``bad``."""
    for key, value in pairs:
        if bad(key) or any(bad(node) for node in _nodes(value)):
            return key
    return None


def _nodes(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (list, tuple)):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            stack.extend(reversed(list(node.items())))


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return f"a string {show(value)}"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return f"a number {show(value)}"
