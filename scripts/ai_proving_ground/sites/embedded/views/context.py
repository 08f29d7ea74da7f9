"""What every part of the views interpreter shares: the error, the context, value types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class ViewError(Exception):
    """A view config the embedded site cannot execute; the message names the view, display, key."""


class ViewFailure(Exception):
    """What Drupal itself throws while executing the view (a visitor gets HTTP 500).

    The message is Drupal's exception, ``Class: message``, so a grader reports the same text
    whichever site it graded.
    """


# A predicate over the values one row holds for a column (empty list = SQL NULL).
Predicate = Callable[[list[Any]], bool]
# Builds a predicate from a filter's configured value; raises ValueProblem on bad values.
OpFactory = Callable[[Any], Predicate]


class ValueProblem(ValueError):
    """A filter value an operator cannot use; re-raised as ViewError with its key."""


@dataclass(frozen=True)
class FieldInfo:
    """A configurable field as Views sees it: its label, type and (for lists) allowed keys."""

    label: str
    type: str
    allowed: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ViewSchema:
    """What Views data knows of the site: its fields and bundles (labels by machine name).

    Without a schema (``None``) every field a handler names is trusted to exist, as the count
    queries built from grader conditions need.
    """

    fields: Mapping[str, FieldInfo] = field(default_factory=dict)
    bundles: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Context:
    view_id: str
    display_id: str
    schema: ViewSchema | None = None
    broken: list[str] = field(default_factory=list)
    exposed: Mapping[str, str] = field(default_factory=dict)  # a visitor's exposed form input

    def error(self, key: str, message: str) -> ViewError:
        return ViewError(f"view {self.view_id!r} display {self.display_id!r}: {key}: {message}")


def mapping(ctx: Context, key: str, value: Any) -> Mapping[str, Any]:
    if value is None or value == []:  # PHP has one empty array; JSON may spell it []
        return {}
    if not isinstance(value, Mapping):
        raise ctx.error(key, f"expected a mapping, got {type(value).__name__}")
    return value
