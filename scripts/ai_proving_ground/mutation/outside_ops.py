"""Mutants outside the task: one config object and one content item the reference did not
touch, changed. Nothing the prompt asked for differs, so only a check that compares the rest of
the site with its baseline can kill them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from typing import Any

from ai_proving_ground.mutation.content_ops import changed_value
from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import MODULE_STATE, Writes

# The unrelated config object a mutant changes when the reference left it alone, and its key;
# else the first untouched object (by name) with a top-level string value.
PREFERRED = ("system.site", "name")


@operator("outside.config_changed")
def config_changed(context: Context) -> Iterator[Mutant]:
    chosen = _config_target(context)
    if chosen is None:
        return
    name, key = chosen
    data = copy.deepcopy(context.config(name))
    data[key] = changed_value(data[key])
    yield Mutant("outside.config_changed", f"{name}:{key}", f"unrelated config {name}:{key} made "
                 f"{data[key]!r}", Writes(config={name: data}))


def _config_target(context: Context) -> tuple[str, str] | None:
    untouched = [n for n in sorted(context.reference.config)
                 if n not in context.changed_config and n != MODULE_STATE]
    name, key = PREFERRED
    if name in untouched and isinstance((context.config(name) or {}).get(key), str):
        return PREFERRED
    for name in untouched:
        data: Any = context.config(name)
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, str) and key not in {"uuid", "langcode", "id"}:
                    return name, key
    return None


@operator("outside.content_changed")
def content_changed(context: Context) -> Iterator[Mutant]:
    untouched = [u for u in sorted(context.reference.entities) if u not in context.changed_entities]
    if not untouched:
        return
    uuid = untouched[0]
    entity = context.reference.entities[uuid]
    changed = dataclasses.replace(entity, label=changed_value(entity.label))
    yield Mutant("outside.content_changed", uuid, f"unrelated {entity.entity_type} {uuid} "
                 f"retitled {changed.label!r}", Writes(entities={uuid: changed}))
