"""What every part of the views interpreter shares: the error, the context, value types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class ViewError(Exception):
    """A view config that cannot execute; the message names the view, display and key."""


# A predicate over the values one entity holds for a field (empty list = SQL NULL).
Predicate = Callable[[list[Any]], bool]
# Builds a predicate from a filter's configured value; raises ValueProblem on bad values.
OpFactory = Callable[[Any], Predicate]


class ValueProblem(ValueError):
    """A filter value an operator cannot use; re-raised as ViewError with its key."""


@dataclass(frozen=True)
class Context:
    view_id: str
    display_id: str

    def error(self, key: str, message: str) -> ViewError:
        return ViewError(f"view {self.view_id!r} display {self.display_id!r}: {key}: {message}")



def mapping(ctx: Context, key: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ctx.error(key, f"expected a mapping, got {type(value).__name__}")
    return value

