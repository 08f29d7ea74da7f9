"""The recipe checks every part of a recipe shares: the parsed record, errors with a position,
and the scalar and container checks core's recipe validator applies."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.yamlio import PathPart, YamlDocument

TOKEN = "APG_RECIPE_INVALID"

_CONFIG_NAME = re.compile(r"^.+\.")  # core's Regex('/^.+\./'): something, then a dot


@dataclass(frozen=True)
class RecipeSpec:
    """A parsed, validated recipe; ``config_files`` maps config name to its data."""

    path: Path
    name: str
    type: str | None
    description: str | None
    recipes: tuple[str, ...]
    install: tuple[str, ...]
    config_import: dict[str, str | list[str] | None]
    config_actions: dict[str, dict[str, Any]]
    config_strict: bool | tuple[str, ...]
    config_files: dict[str, Any]
    content_dir: Path | None
    extra: dict[str, Any]
    input: dict[str, Any]


# ---------------------------------------------------------------------------- errors


def fail(doc: YamlDocument, parts: Sequence[PathPart], message: str) -> NoReturn:
    yamlio.fail_at(doc, TOKEN, parts, message)


def fail_at(spec: RecipeSpec, parts: Sequence[PathPart], message: str) -> NoReturn:
    """Fail with a position in an already-loaded recipe (re-read only to locate the node)."""
    path = spec.path / "recipe.yml"
    try:
        where = yamlio.load_document(path, TOKEN).where(parts)
    except ApgError:  # the file changed under us; the path alone still helps
        where = f"{path}:1:1: {yamlio.json_path(parts)}"
    raise ApgError(TOKEN, f"{where}: {message}", exit_code=1)


# ---------------------------------------------------------------------------- scalar checks


def has_control(text: str, allowed: str = "") -> bool:
    # Core rejects Unicode category C (control, format, unassigned...) in labels.
    return any(unicodedata.category(ch).startswith("C") and ch not in allowed for ch in text)


def string(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    if not isinstance(value, str):
        fail(doc, parts, f"must be a string, not {kind(value)}")
    if not value.strip():
        fail(doc, parts, "must not be blank")
    return value


def label(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    text = string(doc, parts, value)
    if has_control(text):
        fail(doc, parts, "must be a single line without control characters")
    return text


def text(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    text = string(doc, parts, value)
    if has_control(text, allowed="\t\n\r"):
        fail(doc, parts, "must not contain control characters")
    return text


def check_config_name(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    name = string(doc, parts, value)
    if not _CONFIG_NAME.match(name):
        fail(doc, parts, f"{name!r} is not a config name (it needs a '.')")
    return name


def kind(value: Any) -> str:
    return yamlio.describe_kind(value)


# ---------------------------------------------------------------------------- container checks


def mapping(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> dict[str, Any]:
    return yamlio.require_mapping(doc, TOKEN, parts, value)


def check_keys(
    doc: YamlDocument, parts: Sequence[PathPart], data: Mapping[str, Any], allowed: Sequence[str]
) -> None:
    for key in data:
        if key not in allowed:
            fail(doc, [*parts, key],
                  f"unknown key {key!r}; allowed keys: {', '.join(allowed)}")


def string_list(
    doc: YamlDocument, parts: Sequence[PathPart], value: Any, *, null_ok: bool = False
) -> tuple[str, ...]:
    if value is None and null_ok:
        return ()
    if not isinstance(value, list):
        fail(doc, parts, f"must be a list of strings, not {kind(value)}")
    return tuple(string(doc, [*parts, i], item) for i, item in enumerate(value))

