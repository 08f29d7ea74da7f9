"""YAML out, the way Drupal's config export reads it: block style, insertion order kept.

`dumps` writes plain data (dicts with string keys, lists, strings, ints, floats, booleans, None)
itself and hands PyYAML everything else, so that a command printing config (``apg site
config:get``) never imports PyYAML, which costs more start-up time than the rest of the command.
The output is byte for byte PyYAML's with the options in `_pyyaml_dumps`, whether libyaml's
emitter or PyYAML's own writes it: where this module is not sure of that (a string that might
read back as a number or a date, text PyYAML would fold or escape, a key it would not write as a
simple key, an object met twice, which PyYAML writes as an anchor) it falls back to PyYAML.
``tests/test_yamldump.py`` holds the two to the same bytes, by fuzzing and on every config
object the shipped fixtures and the golden corpus hold.
"""

from __future__ import annotations

import re
from typing import Any

# PyYAML's line width: longer lines are folded at a space. Lines that could come near it, and
# keys near the 128 characters above which a key is not a simple key, go to PyYAML.
_WIDTH = 4096
_LONGEST_LINE = 4000
_LONGEST_KEY = 100

# A plain scalar may not start with an indicator, a space or a document marker, end with a space,
# or hold ": " or " #"; "-", "?" and ":" start one only when a non-space follows.
_NOT_PLAIN = re.compile(r"[#,\[\]{}&*!|>'\"%@`]|[-?:](?: |\Z)|---|\.\.\.| |.*(?: \Z|: |:\Z| #)")
# Plain strings that read back as another type: YAML 1.1's booleans and nulls in the casings
# PyYAML's resolver knows, its merge key and value indicator, and the simple ints and floats.
_NOT_STRING_WORDS = frozenset(
    word for base in ("yes", "no", "true", "false", "on", "off", "null")
    for word in (base, base.capitalize(), base.upper())) | {"~", "<<", "="}
_NUMBER = re.compile(r"[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
# Other strings that PyYAML's resolvers might read as a number or a date: a sign, a digit or a
# dot followed only by what its numbers hold, or four digits and a dash. They, and a word above
# in another casing (a str, as no resolver matches it), are PyYAML's to write.
_MAYBE_TYPED = re.compile(r"[-+]?(?:[0-9][0-9_.:]*(?:[eE][-+]?[0-9_]*)?|0[xb].*|\.[0-9_][0-9_eE+\-]*"
                          r"|\.(?:inf|Inf|INF|nan|NaN|NAN))|[0-9]{4}-.*")


def _printable(text: str) -> bool:
    """Whether both emitters print ``text`` as it is: printable ASCII, and the Basic Multilingual
    Plane's printable characters but line breaks (U+0085, U+2028, U+2029) and the byte-order
    mark. (Not a regular expression: compiling that character class costs a few milliseconds.)"""
    if text.isascii():
        return text.isprintable()
    return all(0x20 <= (code := ord(char)) <= 0x7E
               or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
               or (0xE000 <= code <= 0xFFFD and code != 0xFEFF) for char in text)


class _Unusual(Exception):
    """PyYAML writes this data; this module is not sure to write the same bytes."""


def dumps(data: Any) -> str:
    """YAML for ``data``: block style, keys in insertion order, unicode as it is."""
    written = written_here(data)
    return _pyyaml_dumps(data) if written is None else written


def written_here(data: Any) -> str | None:
    """What `dumps` writes for ``data`` without PyYAML, or None when PyYAML must write it."""
    lines: list[str] = []
    try:
        if type(data) is dict and data:
            _mapping(data, 0, "", lines, set())
        elif type(data) is list and data:
            _sequence(data, 0, "", lines, set())
        else:  # a scalar or an empty collection alone: PyYAML adds document markers
            return None
    except _Unusual:
        return None
    return "\n".join(lines) + "\n"


def _pyyaml_dumps(data: Any) -> str:
    # Lazy for start-up time: PyYAML is only for data this module does not write itself.
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's, when PyYAML has it
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=_WIDTH))


def _enter(collection: Any, seen: set[int]) -> None:
    # PyYAML writes an object it meets a second time as an alias of the first.
    if id(collection) in seen:
        raise _Unusual
    seen.add(id(collection))


def _add(line: str, lines: list[str]) -> None:
    if len(line) > _LONGEST_LINE:
        raise _Unusual
    lines.append(line)


def _mapping(data: dict[Any, Any], indent: int, first: str, lines: list[str],
             seen: set[int]) -> None:
    """A non-empty mapping at ``indent``; its first line starts with ``first`` (a "- " prefix)."""
    _enter(data, seen)
    for number, (key, value) in enumerate(data.items()):
        if type(key) is not str or not key or len(key) > _LONGEST_KEY:
            raise _Unusual
        head = f"{first if number == 0 else ' ' * indent}{_string(key)}:"
        kind = type(value)
        if kind is dict and value:
            _add(head, lines)
            _mapping(value, indent + 2, " " * (indent + 2), lines, seen)
        elif kind is list and value:  # a list in a mapping is not indented
            _add(head, lines)
            _sequence(value, indent, " " * indent, lines, seen)
        else:
            _add(f"{head} {_scalar(value, seen)}", lines)


def _sequence(data: list[Any], indent: int, first: str, lines: list[str],
              seen: set[int]) -> None:
    """A non-empty list whose dashes are at ``indent``; its first line starts with ``first``."""
    _enter(data, seen)
    for number, item in enumerate(data):
        prefix = f"{first if number == 0 else ' ' * indent}- "
        kind = type(item)
        if kind is dict and item:
            _mapping(item, indent + 2, prefix, lines, seen)
        elif kind is list and item:
            _sequence(item, indent + 2, prefix, lines, seen)
        else:
            _add(prefix + _scalar(item, seen), lines)


def _scalar(value: Any, seen: set[int]) -> str:
    kind = type(value)
    if kind is str:
        return _string(value) if value else "''"
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        text = repr(value)
        if "." not in text or "e" in text or "n" in text:  # 1e+16, inf and nan: PyYAML's
            raise _Unusual
        return text
    if kind is dict or kind is list:  # empty: flow style
        _enter(value, seen)
        return "{}" if kind is dict else "[]"
    raise _Unusual


def _string(text: str) -> str:
    """A non-empty string, plain where PyYAML writes it plain, else in single quotes."""
    if not _printable(text):
        raise _Unusual
    if _NOT_PLAIN.match(text) or text in _NOT_STRING_WORDS or _NUMBER.fullmatch(text):
        return "'" + text.replace("'", "''") + "'"
    if _MAYBE_TYPED.fullmatch(text) or text.lower() in _NOT_STRING_WORDS:
        raise _Unusual
    return text
