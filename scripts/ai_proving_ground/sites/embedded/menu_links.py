"""Menu links as core's ``MenuLinkContent`` entity holds them (menu_link_content module).

The base fields are ``MenuLinkContent::baseFieldDefinitions()``'s (Drupal 10.3): ``title``,
``description``, ``menu_name`` (default ``tools``), ``link`` (a link item: uri, title, options),
``external`` (default false: nothing on save sets it), ``rediscover`` (default false),
``weight`` (default 0), ``expanded`` (default false), ``enabled`` (the published key, default
true) and ``parent`` (the parent's plugin id, ``menu_link_content:UUID``). ``preSave()`` sets
``rediscover`` to whether the link's URI has the ``internal:`` scheme, whatever was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENTITY_TYPE = "menu_link_content"
BASE_FIELDS = frozenset({"title", "description", "menu_name", "link", "external", "rediscover",
                         "weight", "expanded", "enabled", "parent", "langcode", "changed"})
# What MenuLinkContent::create() gives a base field that is not given a value.
DEFAULTS: dict[str, Any] = {"menu_name": "tools", "external": False, "rediscover": False,
                            "weight": 0, "expanded": False, "enabled": True}
# The field type of each base field whose value is cast as a field of that type casts it.
FIELD_TYPES = {"title": "string", "description": "string", "menu_name": "string",
               "parent": "string", "external": "boolean", "rediscover": "boolean",
               "expanded": "boolean", "enabled": "boolean", "weight": "integer"}


def _link_items(raw: Any) -> list[dict[str, Any]]:
    """The link as its item reads back once saved: uri, title (null when not given), options
    (a map, LinkItem's MapDataDefinition: empty, it is ``{}``, as the probe and core's export
    write an empty map)."""
    made = []
    for item in raw if isinstance(raw, list) else [raw]:
        given = dict(item) if isinstance(item, dict) else {"uri": item}
        if "value" in given and "uri" not in given:  # `--set link=URI`
            given["uri"] = given.pop("value")
        made.append({"uri": given.get("uri"), "title": given.get("title"),
                     "options": given.get("options") or {}, **given})
    return made


def menu_link_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """A menu link's values as ``MenuLinkContent::create($values)->save()`` stores them: the
    defaults filled in, the link completed, ``rediscover`` as ``preSave()`` sets it."""
    filled: dict[str, Any] = {**DEFAULTS, **values}
    if filled.get("link") is not None:
        filled["link"] = _link_items(filled["link"])
    uri = str((filled.get("link") or [{}])[0].get("uri") or "")
    filled["rediscover"] = uri.startswith("internal:")
    return filled
