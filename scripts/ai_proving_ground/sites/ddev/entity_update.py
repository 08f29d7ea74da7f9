"""``apg drush entity:update`` and ``entity:create``: the command lines apg adds to drush, so
that a task's reference solution reads the same on both kinds of bed.

Drush has no command that changes an entity's field values, and its ``entity:create`` asks for
each field interactively; ``apg site entity:update TYPE ID-OR-UUID --values MAPPING`` and
``apg site entity:create TYPE [BUNDLE] [--uuid UUID] --values MAPPING`` do it on the embedded
site. On a DDEV bed the same arguments become one probe request (``entity_update`` or
``entity_create``), which ``probe.php`` applies inside Drupal as apg site does: the values set on
the entity (a new one made by its storage's ``create()``), violations refused, then saved.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.yamlio import loads

COMMAND = "entity:update"
CREATE_COMMAND = "entity:create"
USAGE = "apg drush entity:update ENTITY_TYPE ID_OR_UUID --values MAPPING"
CREATE_USAGE = "apg drush entity:create ENTITY_TYPE [BUNDLE] [--uuid UUID] --values MAPPING"


def _parse(command: str, usage: str, args: Sequence[str], options: tuple[str, ...]
           ) -> tuple[list[str], dict[str, Any], dict[str, str]]:
    """Positional arguments, the merged ``--values`` and the other ``options`` given."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, inline = arg.partition("=")
        if name == "--values" or name in options:
            if not eq and not rest:
                raise UsageError(f"{name} needs a value; usage: {usage}")
            value = inline if eq else rest.pop(0)
            if name == "--values":
                values.update(_mapping(value))
            else:
                given[name] = value
        elif name == "--format" or arg in ("-y", "--yes"):
            continue  # apg site's output option, drush's confirmation: nothing to ask here
        elif arg.startswith("-"):
            raise UsageError(f"apg drush {command} does not take {arg}; usage: {usage}")
        else:
            positional.append(arg)
    return positional, values, given


def _encoded(request: dict[str, Any], command: str, limit: int) -> str:
    encoded = base64.b64encode(json.dumps(request, separators=(",", ":")).encode()).decode("ascii")
    if len(encoded) > limit:
        raise ApgError("APG_DDEV_QUERY_INVALID", f"{command} values are {len(encoded)} bytes once "
                       f"encoded, over the {limit} one argument carries; set fewer fields at a time",
                       exit_code=2)
    return encoded


def entity_update_request(args: Sequence[str], limit: int) -> str:
    """The probe request for ``entity:update ARGS``, base64 as one argument of at most ``limit``."""
    positional, values, _ = _parse(COMMAND, USAGE, args, ())
    if len(positional) != 2 or not values:
        raise UsageError(f"apg drush entity:update takes an entity type, an id or uuid and the "
                         f"values; usage: {USAGE}")
    request = {"entity_update": {"entity_type": positional[0], "target": positional[1], "values": values}}
    return _encoded(request, COMMAND, limit)


def entity_create_request(args: Sequence[str], limit: int) -> str:
    """The probe request for ``entity:create ARGS``, base64 as one argument of at most ``limit``."""
    positional, values, given = _parse(CREATE_COMMAND, CREATE_USAGE, args, ("--uuid",))
    if len(positional) not in (1, 2) or not values:
        raise UsageError(f"apg drush entity:create takes an entity type, its bundle (for a type "
                         f"that has bundles) and the values; usage: {CREATE_USAGE}")
    create: dict[str, Any] = {"entity_type": positional[0], "values": values}
    if len(positional) == 2:
        create["bundle"] = positional[1]
    if "--uuid" in given:
        create["uuid"] = given["--uuid"]
    return _encoded({"entity_create": create}, CREATE_COMMAND, limit)


def _mapping(text: str) -> dict[str, Any]:
    """``--values`` as apg site reads it: a JSON or YAML mapping."""
    try:
        parsed = loads(text, source="--values")
    except ApgError as exc:
        raise UsageError(f"--values is not valid YAML or JSON: {exc.message}") from None
    if not isinstance(parsed, dict):
        raise UsageError("--values must be a mapping of field name to value(s)")
    return parsed
