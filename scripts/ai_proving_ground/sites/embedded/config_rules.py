"""What makes a config object valid before it is saved, per name pattern, as Drupal's schema does."""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Mapping
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded import canvas
from ai_proving_ground.sites.embedded.content_model import ConfigReader
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES, FIELD_TYPES

_NAME = re.compile(r"[A-Za-z0-9_.\-]{3,250}")
Rule = Callable[[str, dict[str, Any], ConfigReader], None]


def _refuse(name: str, message: str) -> ApgError:
    return ApgError("APG_CONFIG_INVALID", f"config {name}: {message}")


class LooserRefusal(ApgError):
    """A refusal of Drupal's entity API that ``drush config:set`` does not make: Drupal stores
    the object raw (a node type without a name, a field before its storage, an unknown field
    type or bundle) and then cannot use it."""


def _looser(name: str, message: str) -> LooserRefusal:
    return LooserRefusal("APG_CONFIG_INVALID", f"config {name}: {message}")


def provider_of(name: str) -> str:
    """The extension that owns a config name: its first dot-separated part."""
    return name.split(".", 1)[0]


def validate(name: str, data: Any, config: ConfigReader, enabled: set[str]) -> None:
    """Refuse config that Drupal would refuse: wrong shape, missing provider, broken references."""
    if "." not in name or any(not part for part in name.split(".")):
        raise _refuse(name, "a config name is extension.name with no empty parts")
    if not _NAME.fullmatch(name):
        # Drupal refuses : ? * < > " ' / \ and whitespace; names also become file names on export.
        raise _refuse(name, "use only letters, digits and _ . - in config names")
    if not isinstance(data, dict):
        raise _refuse(name, "a config object must be a mapping")
    provider = provider_of(name)
    if provider != "core" and provider not in enabled:
        raise _refuse(name, f"its provider {provider} is not installed; "
                            f"install it with `apg site pm:install {provider}` first")
    for prefix, rule in _RULES:
        if name.startswith(prefix):
            rule(name, data, config)


def dependencies(name: str, data: Any) -> set[str]:
    """Config names ``name`` needs first: its declared ``dependencies.config`` and, for a field
    instance, the storage and bundle it is attached to (what core's calculateDependencies adds)."""
    needed: set[str] = set()
    declared = data.get("dependencies") if isinstance(data, dict) else None
    if isinstance(declared, dict) and isinstance(declared.get("config"), list):
        needed.update(str(item) for item in declared["config"])
    parts = name.split(".")
    if name.startswith("field.field.") and len(parts) == 5:
        _, _, entity_type, bundle, field_name = parts
        needed.add(f"field.storage.{entity_type}.{field_name}")
        definition = ENTITY_TYPES.get(entity_type)
        if definition is not None and definition.bundle_prefix:
            needed.add(definition.bundle_prefix + bundle)
    needed.discard(name)
    return needed


def dependency_order(objects: Mapping[str, Any]) -> list[str]:
    """Names of ``objects`` with dependencies first, otherwise alphabetical (as core sorts them).

    A dependency cycle does not raise here: the rest follow alphabetically and validation
    names whatever is missing.
    """
    after = {name: dependencies(name, data) & set(objects) for name, data in objects.items()}
    dependents: dict[str, list[str]] = {name: [] for name in objects}
    for name, needed in after.items():
        for dep in needed:
            dependents[dep].append(name)
    waiting = {name: len(needed) for name, needed in after.items()}
    ready = [name for name, count in waiting.items() if not count]
    heapq.heapify(ready)
    ordered: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        ordered.append(name)
        for child in dependents[name]:
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, child)
    ordered.extend(sorted(set(objects) - set(ordered)))
    return ordered


def _expect(name: str, data: dict[str, Any], key: str, value: str) -> None:
    if data.get(key) != value:
        raise _refuse(name, f"{key} must be {value!r} to match the config name, "
                            f"found {data.get(key)!r}")


def _node_type(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    _expect(name, data, "type", name.removeprefix("node.type."))
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise _looser(name, "a content type needs a human-readable name")


def _vocabulary(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    _expect(name, data, "vid", name.removeprefix("taxonomy.vocabulary."))


def _field_storage(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    parts = name.split(".")
    if len(parts) != 4:
        raise _refuse(name, "name it field.storage.<entity_type>.<field_name>")
    _, _, entity_type, field_name = parts
    if entity_type not in ENTITY_TYPES:
        raise _refuse(name, f"unknown entity type {entity_type!r}")
    _expect(name, data, "entity_type", entity_type)
    _expect(name, data, "field_name", field_name)
    if not isinstance(data.get("type"), str) or data["type"] not in FIELD_TYPES:
        raise _looser(name, f"unknown field type {data.get('type')!r} "
                            f"(known: {', '.join(sorted(FIELD_TYPES))})")
    if field_name in ENTITY_TYPES[entity_type].base_fields:
        raise _refuse(name, f"{field_name} is a base field of {entity_type}")


def _field_instance(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    parts = name.split(".")
    if len(parts) != 5:
        raise _refuse(name, "name it field.field.<entity_type>.<bundle>.<field_name>")
    _, _, entity_type, bundle, field_name = parts
    if entity_type not in ENTITY_TYPES:
        raise _refuse(name, f"unknown entity type {entity_type!r}")
    _expect(name, data, "entity_type", entity_type)
    _expect(name, data, "bundle", bundle)
    _expect(name, data, "field_name", field_name)
    if not isinstance(config.config_get(f"field.storage.{entity_type}.{field_name}"), dict):
        raise _looser(name, f"field.storage.{entity_type}.{field_name} must exist first")
    prefix = ENTITY_TYPES[entity_type].bundle_prefix
    if prefix and not isinstance(config.config_get(prefix + bundle), dict):
        raise _looser(name, f"bundle {prefix}{bundle} must exist first")


def _view(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    _expect(name, data, "id", name.removeprefix("views.view."))
    base_table = data.get("base_table")
    tables = {t.base_table: t.id for t in ENTITY_TYPES.values()}
    if not isinstance(base_table, str) or base_table not in tables:
        raise _refuse(name, f"base_table {base_table!r} is not one of {', '.join(sorted(tables))}")
    display = data.get("display")
    if not isinstance(display, dict) or not isinstance(display.get("default"), dict):
        raise _refuse(name, "a view needs display.default")


def _page_region(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    tree = canvas.parse_tree(data.get("component_tree") or [], f"{name}.component_tree")
    canvas.validate_tree(tree, config.config_get, f"{name}.component_tree")


def _component(name: str, data: dict[str, Any], config: ConfigReader) -> None:
    if not isinstance(data.get("props", {}), dict) or not isinstance(data.get("slots", []), list):
        raise _refuse(name, "a component has props (a mapping) and slots (a list)")


_RULES: tuple[tuple[str, Rule], ...] = (
    ("node.type.", _node_type),
    ("taxonomy.vocabulary.", _vocabulary),
    ("field.storage.", _field_storage),
    ("field.field.", _field_instance),
    ("views.view.", _view),
    (canvas.REGION_PREFIX, _page_region),
    (canvas.COMPONENT_PREFIX, _component),
)


def depends_on(name: str, data: Any, module: str, config_names: set[str]) -> bool:
    """Whether config ``name`` depends on ``module`` or on one of ``config_names``."""
    declared = data.get("dependencies") if isinstance(data, dict) else None
    deps: dict[str, Any] = declared if isinstance(declared, dict) else {}
    enforced: dict[str, Any] = deps["enforced"] if isinstance(deps.get("enforced"), dict) else {}
    modules_needed = [*(deps.get("module") or []), *(enforced.get("module") or [])]
    config_needed = dependencies(name, data) | set(enforced.get("config") or [])
    return module in modules_needed or bool(config_needed & config_names)
