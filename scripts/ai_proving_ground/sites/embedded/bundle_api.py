"""Bundles made as Drupal's entity API makes them: a content type (``NodeType::create()->save()``,
then ``node_add_body_field()``, as the Add content type form does), a vocabulary
(``Vocabulary::create()->save()``) and a menu (``Menu::create()->save()``), with what Drupal
fills in on save: uuid, langcode, status, dependencies and the config schema's defaults. The body
field and its display components are what ``node_add_body_field`` makes; the displays start as
Drupal starts them (see field_api).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded.field_api import (
    DISPLAYS,
    FieldRequest,
    Placement,
    Save,
    field_config,
    place,
    storage_config,
)
from ai_proving_ground.sites.embedded.store import Store

# What NodeType and Vocabulary hold when their create() is not given a value.
NODE_TYPE = {"name": None, "type": None, "description": None, "help": None,
              "new_revision": True, "preview_mode": 1, "display_submitted": True}
VOCABULARY = {"name": None, "vid": None, "description": None, "weight": 0,
               "new_revision": False}
# Menu's properties (config_export order): no description unless given, not locked.
MENU = {"id": None, "label": None, "description": None, "locked": False}
_BODY = FieldRequest("node", "", "body", "text_with_summary", "Body",
                     field_settings={"display_summary": True, "allowed_formats": {}})
_TEASER = "core.entity_view_mode.node.teaser"


def _entity(defaults: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ApgError("APG_USAGE", f"unknown propert{'y' if len(unknown) == 1 else 'ies'} "
                       f"{', '.join(unknown)}; known: {', '.join(defaults)}")
    return {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True, "dependencies": {},
            **{key: values.get(key, value) for key, value in defaults.items()}}


def node_type_presave(data: dict[str, Any]) -> dict[str, Any]:
    """``node_node_type_presave``: an empty description or help is stored as null."""
    for key in ("description", "help"):
        if isinstance(data.get(key), str) and not data[key].strip():
            data[key] = None
    return data


def save_new(store: Store, name: str, data: dict[str, Any], save: Save) -> str:
    if store.config_get(name) is not None:
        raise ApgError("APG_CONFIG_EXISTS", f"{name} already exists; pick another machine name"
                       " or change it with config:set")
    save(store, name, data)
    return name


def create_node_type(store: Store, values: Mapping[str, Any], save: Save, *,
                     body: bool = True) -> list[str]:
    """Save the content type and (``body``) its body field; the names saved."""
    data = node_type_presave(_entity(NODE_TYPE, values))
    saved = [save_new(store, f"node.type.{data['type']}", data, save)]
    if body:
        saved += add_body_field(store, str(data["type"]), save)
    return saved


def create_vocabulary(store: Store, values: Mapping[str, Any], save: Save) -> list[str]:
    data = _entity(VOCABULARY, values)
    return [save_new(store, f"taxonomy.vocabulary.{data['vid']}", data, save)]


def create_menu(store: Store, values: Mapping[str, Any], save: Save) -> list[str]:
    """``Menu::create()->save()``: system.menu.ID, as the Add menu form saves it."""
    data = _entity(MENU, values)
    return [save_new(store, f"system.menu.{data['id']}", data, save)]


def add_body_field(store: Store, bundle: str, save: Save) -> list[str]:
    """``node_add_body_field``: the field on the shared body storage (made if the node module's
    is missing), shown in the default form and view displays and, where the teaser view mode
    exists, as a trimmed summary in the teaser."""
    request = replace(_BODY, bundle=bundle)
    saved = []
    storage = store.config_get("field.storage.node.body")
    if storage is None:
        storage = {**storage_config(request), "persist_with_no_fields": True}
        save(store, "field.storage.node.body", storage)
        saved.append("field.storage.node.body")
    name = f"field.field.node.{bundle}.body"
    saved.append(save_new(store, name, field_config(request, storage), save))
    placements = [
        Placement(DISPLAYS[0][0], "default", _form("text_textarea_with_summary", {
            "rows": 9, "summary_rows": 3, "placeholder": "", "show_summary": False})),
        Placement(DISPLAYS[1][0], "default", _view("text_default", {}))]
    if store.config_get(_TEASER) is not None:
        placements.append(Placement(DISPLAYS[1][0], "teaser",
                                    _view("text_summary_or_trimmed", {"trim_length": 600})))
    for placement in placements:
        display = place(store, "node", bundle, "body", placement, "text")
        save(store, *display)
        saved.append(display[0])
    return saved


def _form(widget: str, settings: dict[str, Any]) -> dict[str, Any]:
    return {"type": widget, "weight": None, "region": "content", "settings": settings,
            "third_party_settings": {}}


def _view(formatter: str, settings: dict[str, Any]) -> dict[str, Any]:
    return {"type": formatter, "label": "hidden", "settings": settings,
            "third_party_settings": {}, "weight": None, "region": "content"}
