"""How values compare, sort and read as true or blank, the way MySQL and Views see them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def to_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def to_text(value: Any) -> str:
    # Booleans and whole floats print as the database would store them.
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def fold_case(value: Any) -> str:
    # MySQL's default collation is case-insensitive, so every string comparison is too.
    return to_text(value).casefold()


def compare(left: Any, right: Any) -> int:
    a, b = to_number(left), to_number(right)
    if a is not None and b is not None:
        return (a > b) - (a < b)
    x, y = fold_case(left), fold_case(right)
    return (x > y) - (x < y)


def value_key(value: Any) -> tuple[str, float | str]:
    number = to_number(value)
    return ("n", number) if number is not None else ("s", fold_case(value))


def truthy(value: Any) -> bool:
    if isinstance(value, Mapping):
        value = value.get("value")
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false")
    return bool(value)


def php_empty(value: Any) -> bool:
    """PHP's empty(): how Views reads a boolean filter's configured value ("0" is false)."""
    if isinstance(value, str):
        return value in ("", "0")
    if isinstance(value, Mapping | list | tuple):
        return not value
    return not value  # None, False, 0, 0.0


def blank(value: Any) -> bool:
    """True when an exposed filter's value means "no input" (Drupal's 'All' included)."""
    if isinstance(value, Mapping):
        return all(blank(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(blank(v) for v in value)
    return value is None or value == "" or value == "All"

