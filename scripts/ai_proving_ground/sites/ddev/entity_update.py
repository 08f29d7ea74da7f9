"""``apg drush entity:update``: the one command line apg adds to drush, so that a task's
reference solution reads the same on both kinds of bed.

Drush has no command that changes an entity's field values; ``apg site entity:update TYPE
ID-OR-UUID --values MAPPING`` does on the embedded site. On a DDEV bed the
same arguments become one probe request (``entity_update``), which ``probe.php`` applies inside
Drupal as apg site does: the values merged into the entity, violations refused, then saved.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.yamlio import loads

COMMAND = "entity:update"
USAGE = "apg drush entity:update ENTITY_TYPE ID_OR_UUID --values MAPPING"


def entity_update_request(args: Sequence[str], limit: int) -> str:
    """The probe request for ``entity:update ARGS``, base64 as one argument of at most ``limit``."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, inline = arg.partition("=")
        if name == "--values":
            if not eq and not rest:
                raise UsageError(f"--values needs a mapping; usage: {USAGE}")
            values.update(_mapping(inline if eq else rest.pop(0)))
        elif name == "--format" or arg in ("-y", "--yes"):
            continue  # apg site's output option, drush's confirmation: nothing to ask here
        elif arg.startswith("-"):
            raise UsageError(f"apg drush entity:update does not take {arg}; usage: {USAGE}")
        else:
            positional.append(arg)
    if len(positional) != 2 or not values:
        raise UsageError(f"apg drush entity:update takes an entity type, an id or uuid and the "
                         f"values; usage: {USAGE}")
    request = {"entity_update": {"entity_type": positional[0], "target": positional[1], "values": values}}
    encoded = base64.b64encode(json.dumps(request, separators=(",", ":")).encode()).decode("ascii")
    if len(encoded) > limit:
        raise ApgError("APG_DDEV_QUERY_INVALID", f"entity:update values are {len(encoded)} bytes once "
                       f"encoded, over the {limit} one argument carries; update fewer fields at a time",
                       exit_code=2)
    return encoded


def _mapping(text: str) -> dict[str, Any]:
    """``--values`` as apg site reads it: a JSON or YAML mapping."""
    try:
        parsed = loads(text, source="--values")
    except ApgError as exc:
        raise UsageError(f"--values is not valid YAML or JSON: {exc.message}") from None
    if not isinstance(parsed, dict):
        raise UsageError("--values must be a mapping of field name to value(s)")
    return parsed
