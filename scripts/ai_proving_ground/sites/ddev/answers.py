"""Decoding the probe's answer: validated against ``probe_answer.schema.json``, then built.

The schema says what shape is acceptable; :func:`_build` then casts each value to the type of
the dataclass field it lands in (PHP's ``json_encode`` writes an empty map as ``[]``, and
a digit string where an integer is meant), so no field is decoded by hand.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any

import jsonschema

from ai_proving_ground.schemas import load_schema
from ai_proving_ground.sites.base import EntityRecord, PendingUpdate, StateAnswer, StateQuery
from ai_proving_ground.sites.ddev.execute import probe_invalid
from ai_proving_ground.yamlio import json_path

# What a record holds when the probe leaves a key out (the probe itself always sends them).
_ABSENT: dict[tuple[str, str], Any] = {
    ("ViewRow", "uuid"): "",
    ("ViewRow", "label"): "",
    ("CanvasTree", "label"): "",
    ("PendingUpdate", "description"): "",
}


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema("probe_answer"))


def misfit(data: Any) -> str | None:
    """Why ``data`` does not fit the probe answer's schema, or ``None`` when it does."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is None:
        return None
    return f"{json_path(list(error.absolute_path))}: {error.message}"


def _check(data: Any, what: str) -> None:
    problem = misfit(data)
    if problem is not None:
        raise probe_invalid(f"{what}: {problem}")


def decode_answer(data: dict[str, Any], query: StateQuery) -> StateAnswer:
    """The probe's JSON as a :class:`StateAnswer`, with one answer per question asked."""
    _check(data, "the probe answer does not fit the query")
    for view in data.get("views", []):
        view.setdefault("total_rows", len(view.get("rows", [])))
    present = {f.name: data[f.name] for f in dataclasses.fields(StateAnswer) if f.name in data}
    answer: StateAnswer = _build(StateAnswer, present)
    unanswered: dict[str, EntityRecord | None] = dict.fromkeys(query.entities)
    answer.entities = unanswered | answer.entities
    answer.config = {name: {} if value == [] else value for name, value in answer.config.items()}
    answer.pending_updates = _stripped(answer.pending_updates)
    asked_for = (("counts", query.counts), ("views", query.views), ("canvas", query.canvas),
                 ("pages", query.pages))
    for name, asked in asked_for:
        got = len(getattr(answer, name))
        if got != len(asked):
            raise probe_invalid(
                f"the probe answer does not fit the query: {name} has {got} answers "
                f"for {len(asked)} questions"
            )
    return answer


def _stripped(updates: list[PendingUpdate]) -> list[PendingUpdate]:
    return [dataclasses.replace(u, description=u.description.strip()) for u in updates]


def decode_documents(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The probe's ``content_export``: core default-content documents, ``default`` a map."""
    if "content_export" not in data:
        raise probe_invalid("the content export does not fit: content_export is missing")
    _check(data, "the content export does not fit")
    documents: list[dict[str, Any]] = data["content_export"]
    for document in documents:
        document["default"] = _build(dict[str, Any], document.get("default", {}))
    return documents


def _build(tp: Any, value: Any) -> Any:
    """``value`` (already schema-valid) cast to the type ``tp``."""
    if dataclasses.is_dataclass(tp):
        return _build_record(tp, value)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        return None if value is None else _build(inner[0], value)
    if origin is dict:
        return {str(k): _build(args[1], v) for k, v in (value or {}).items()}
    if origin is list:
        return [_build(args[0], item) for item in value]
    if origin is tuple:
        return tuple(_build(args[0], item) for item in value)
    if tp in (str, int, bool):
        return tp(value)
    return value


def _build_record(cls: Any, row: dict[str, Any]) -> Any:
    hints = _hints(cls)
    values = {}
    for field in dataclasses.fields(cls):
        if field.name in row:
            values[field.name] = _build(hints[field.name], row[field.name])
        elif (cls.__name__, field.name) in _ABSENT:
            values[field.name] = _ABSENT[(cls.__name__, field.name)]
    return cls(**values)


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)
