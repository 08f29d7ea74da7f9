"""The task hash's canonical JSON, byte for byte as the original system's PHP wrote it.

The original hashes a task as: recursively ``ksort`` every associative array, keep list order,
then ``json_encode(..., JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE |
JSON_PRESERVE_ZERO_FRACTION)``. Python's ``json.dumps(sort_keys=True)`` agrees on ordinary
tasks and differs on these, which a harness comparing hashes across implementations meets:

- **Keys** are PHP array keys: a decimal-integer string ("7", "-3", within 64 bits) *is* an
  integer. ``ksort`` (SORT_REGULAR, PHP 8) orders two integers numerically, two strings
  numerically when both are numeric strings ("1e3", " 2", "1.5") else byte-wise, and an integer
  with a string numerically when the string is numeric, else as the integer's decimal text
  against the string. PHP 8's sort is stable, and so is Python's. (Mixing numeric and other
  strings with integers can make PHP's comparison intransitive; two sorting algorithms may then
  disagree, so such key sets are the one case not promised.)
- **Arrays that became lists**: after sorting, a mapping whose keys are exactly 0..n-1 is a PHP
  list and encodes as a JSON array; an empty mapping is ``[]``.
- **Floats** are written as PHP's ``serialize_precision = -1`` does: the shortest round-trip
  digits (the same digits as Python's ``repr``), in exponent form only below 1e-4 or from 1e17
  (``1.0e+25``, ``1.5e-7``), otherwise in full (``10000000000000000.0``); a whole float keeps
  ``.0``. Integers beyond 64 bits are floats in PHP, and are written so.
- **Strings**: ``/`` and non-ASCII as themselves, but U+2028 and U+2029 escaped (PHP escapes them
  unless JSON_UNESCAPED_LINE_TERMINATORS is given); control characters as ``\\b \\f \\n \\r \\t``
  or ``\\u00XX`` (lowercase hex), as both languages do.

Written by hand because no library reproduces PHP's key ordering and float text.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INTEGER_KEY = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
# PHP 8's numeric strings: surrounding whitespace allowed, no hex, no inf or nan.
_NUMERIC = re.compile(r"[ \t\n\r\v\f]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                      r"[ \t\n\r\v\f]*\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\u2028\u2029]')

Key = int | str


def php_key(key: Any) -> Key:
    """What a PHP array makes of a key: integer strings, bools and floats become integers,
    null the empty string."""
    if isinstance(key, bool):
        return int(key)
    if isinstance(key, int):
        return key
    if isinstance(key, float):
        return int(key)
    if key is None:
        return ""
    text = str(key)
    if _INTEGER_KEY.match(text) and INT64_MIN <= int(text) <= INT64_MAX:
        return int(text)
    return text


def _numeric(text: str) -> float | int | None:
    if not _NUMERIC.match(text):
        return None
    stripped = text.strip(" \t\n\r\v\f")
    if not any(c in stripped for c in ".eE"):
        value = int(stripped)
        return value if INT64_MIN <= value <= INT64_MAX else float(value)
    return float(stripped)


def _three_way(a: float | int, b: float | int) -> int:
    return (a > b) - (a < b)


def _bytes_cmp(a: str, b: str) -> int:
    left, right = a.encode("utf-8"), b.encode("utf-8")
    return (left > right) - (left < right)


def compare_keys(a: Key, b: Key) -> int:
    """PHP 8 ``ksort`` (SORT_REGULAR) on two array keys."""
    if isinstance(a, int) and isinstance(b, int):
        return _three_way(a, b)
    if isinstance(a, str) and isinstance(b, str):
        left, right = _numeric(a), _numeric(b)
        if left is not None and right is not None:
            return _three_way(left, right)
        return _bytes_cmp(a, b)
    if isinstance(a, int):
        return _int_to_string(a, str(b))
    return -_int_to_string(int(b), a)


def _int_to_string(number: int, text: str) -> int:
    value = _numeric(text)
    if value is not None:
        return _three_way(number if isinstance(value, int) else float(number), value)
    return _bytes_cmp(str(number), text)


def _compare_items(a: tuple[Key, Any], b: tuple[Key, Any]) -> int:
    return compare_keys(a[0], b[0])


def php_float(value: float) -> str:
    """``json_encode`` of a float at serialize_precision -1 with JSON_PRESERVE_ZERO_FRACTION."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} cannot be JSON-encoded (PHP refuses inf and nan)")
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    # value = 0.DIGITS x 10^decpt, as zend_dtoa reports it
    decpt = len(digit_tuple) + exponent
    text = ("-" if value < 0 else "")
    if (decpt < -3) if decpt < 0 else (decpt > 17):
        power = decpt - 1
        text += f"{digits[0]}.{digits[1:] or '0'}e{'-' if power < 0 else '+'}{abs(power)}"
    elif decpt <= 0:
        text += "0." + "0" * -decpt + digits
    else:
        whole = digits[:decpt].ljust(decpt, "0")
        fraction = digits[decpt:]
        text += f"{whole}.{fraction}" if fraction else f"{whole}.0"
    return text


def _string(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def canonical(value: Any) -> str:
    """The original's canonical JSON of ``value`` (parsed YAML: mappings, lists, scalars)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if INT64_MIN <= value <= INT64_MAX else php_float(float(value))
    if isinstance(value, float):
        return php_float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        merged: dict[Key, Any] = {}
        for key, item in value.items():
            merged[php_key(key)] = item  # keys PHP makes equal: the last one wins, as in PHP
        ordered = sorted(merged.items(), key=functools.cmp_to_key(_compare_items))
        if [k for k, _ in ordered] == list(range(len(ordered))):
            return "[" + ",".join(canonical(item) for _, item in ordered) + "]"
        return "{" + ",".join(f"{_string(str(k))}:{canonical(item)}" for k, item in ordered) + "}"
    raise TypeError(f"cannot canonicalize {type(value).__name__}")
