"""Config mutants, for config the view and Canvas families leave alone (a content type, a field,
the site's name, a menu, a role): the object missing (not created, or its change undone), each
value the reference changed in an object that existed before, changed again, and each item the
reference put in a list of plain values (a role's permissions), left out.

Values of an object the reference created are not mutated one by one: most are defaults the
prompt never names (a field's ``translatable``, a type's ``preview_mode``), and a mutant of one
would survive for the prompt's silence, not the checks' weakness.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ai_proving_ground.mutation.canvas_ops import REGION_PREFIX
from ai_proving_ground.mutation.content_ops import changed_value
from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import MODULE_STATE, Writes
from ai_proving_ground.mutation.views_ops import VIEW_PREFIX

SKIPPED_KEYS = {"uuid", "_core", "langcode", "dependencies"}  # bookkeeping, not what a task asks


def _plain(context: Context) -> Iterator[str]:
    for name in context.changed_config:
        if not name.startswith((VIEW_PREFIX, REGION_PREFIX)) and name != MODULE_STATE:
            yield name


@operator("config.missing")
def missing(context: Context) -> Iterator[Mutant]:
    for name in _plain(context):
        before = context.baseline.config.get(name)
        words = f"config {name} not created" if before is None else f"the change to {name} not made"
        yield Mutant("config.missing", name, words, Writes(config={name: copy.deepcopy(before)}))


@operator("config.value_changed")
def value_changed(context: Context) -> Iterator[Mutant]:
    for name in _plain(context):
        before, after = context.baseline.config.get(name), context.config(name)
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        for path, value in _changed_leaves(before, after, ()):
            data = copy.deepcopy(after)
            cursor = data
            for key in path[:-1]:
                cursor = cursor[key]
            cursor[path[-1]] = changed_value(value)
            dotted = ".".join(path)
            yield Mutant("config.value_changed", f"{name}:{dotted}",
                         f"{name}:{dotted} made {cursor[path[-1]]!r}", Writes(config={name: data}))


def _changed_leaves(before: Any, after: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Each scalar of ``after`` (a mapping) that differs from ``before`` at the same path."""
    for key, value in after.items():
        if key in SKIPPED_KEYS:
            continue
        old = before.get(key) if isinstance(before, dict) else None
        if isinstance(value, dict):
            yield from _changed_leaves(old, value, (*path, str(key)))
        elif not isinstance(value, list) and value != old:
            yield (*path, str(key)), value


@operator("config.list_item_dropped")
def list_item_dropped(context: Context) -> Iterator[Mutant]:
    for name in _plain(context):
        before, after = context.baseline.config.get(name), context.config(name)
        if not isinstance(after, dict):
            continue
        for path, items, old in _lists(before, after, ()):
            for item in items:
                if item in old:
                    continue
                data = copy.deepcopy(after)
                cursor = data
                for key in path[:-1]:
                    cursor = cursor[key]
                cursor[path[-1]] = [i for i in items if i != item]
                dotted = ".".join(path)
                yield Mutant("config.list_item_dropped", f"{name}:{dotted}:{item}",
                             f"{item!r} left out of {name}:{dotted}", Writes(config={name: data}))


ListAt = tuple[tuple[str, ...], list[Any], list[Any]]  # (path, the list, the list before)


def _lists(before: Any, after: Any, path: tuple[str, ...]) -> Iterator[ListAt]:
    """Each list of plain values in ``after``, with the list at the same path in ``before``."""
    for key, value in after.items():
        if key in SKIPPED_KEYS:
            continue
        old = before.get(key) if isinstance(before, dict) else None
        if isinstance(value, dict):
            yield from _lists(old, value, (*path, str(key)))
        elif isinstance(value, list) and value and all(
                isinstance(i, str | int | float | bool) for i in value):
            yield (*path, str(key)), value, old if isinstance(old, list) else []
