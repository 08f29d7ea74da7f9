"""The stub site's Views and served pages: what a display lists and what a visitor of a path gets.

The stub cannot run Drupal's Views. A display the scenario lists under ``views`` in the state
(``"<view>/<display>": [uuid, ...]``) executes to those rows; any other display of a stored view
runs through the embedded site's Views engine (checked against the real Drupal corpus in
tests/embedded/test_golden_views.py) over the stub's entities, whose values are strings as on
Drupal. A disabled view or display is not executed, as the probe does not execute it. Pages are
resolved as probe.php's ``page()`` resolves them: the alias first, then the views routes the
router matches to the path (as the embedded site's router matches them: by fit and route name,
a ``%`` part the display's argument). The router (the state's ``router``: route name -> path)
is what the last rebuild made of the enabled page displays of enabled views (``rebuild_router``:
``drush cr`` and ``drush recipe`` rebuild it, ``config:set`` does not), as on Drupal, where a
view written by ``config:set`` has no route until ``drush cr`` (tests/ddev/real_dv01/).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.router import best_routes
from ai_proving_ground.sites.embedded.views import FieldInfo, ViewError, ViewSchema, execute_view

BASE = ("title", "status", "path", "components")


def view_answer(state: Mapping[str, Any], question: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's ``view()`` answer for ``question`` on the stub's state."""
    view_id, display = str(question["view_id"]), str(question.get("display_id") or "default")
    result: dict[str, Any] = {"view_id": view_id, "display_id": display, "rows": [],
                              "total_rows": 0, "error": None,
                              "outcome": "no such view or display", "messages": [],
                              "broken": [], "ties": []}
    config = state["config"].get(f"views.view.{view_id}")
    listed = state.get("views", {}).get(f"{view_id}/{display}")
    if config is None:
        return result | {"error": f"view {view_id} does not exist"}
    displays = config.get("display") or {}
    if display not in displays:
        return result | {"error": f"view {view_id} has no display {display}"}
    page = (displays[display] or {}).get("display_plugin") == "page"
    if not config.get("status", True):
        return result | {"error": f"view {view_id} is disabled", "outcome":
                         "not served (disabled: page path 404)" if page else "not served (disabled)"}
    if display != "default" and not _enabled(displays[display]):
        return result | {"error": f"display {display} is disabled", "outcome":
                         "not served (display disabled: page path 404)" if page
                         else "not served (display disabled)"}
    if listed is not None:
        rows = [_row(state, uuid) for uuid in listed]
        return result | {"rows": rows, "total_rows": len(rows), "outcome": "rows"}
    try:
        executed = execute_view(view_id, config, display, _records(state), schema=_schema(state),
                                arguments=tuple(str(a) for a in question.get("arguments") or ()),
                                exposed={str(k): str(v) for k, v in question.get("exposed") or ()},
                                pager_page=int(question.get("page") or 0))
    except ViewError as exc:
        return result | {"error": str(exc), "outcome": "exception"}
    answer = dataclasses.asdict(executed)
    return result | {k: answer[k] for k in ("rows", "total_rows", "error", "outcome", "messages",
                                            "broken", "ties")}


def page_answer(state: Mapping[str, Any], question: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's ``page()`` answer for ``question`` on the stub's state."""
    path = "/" + str(question.get("path", "")).strip().strip("/")
    result: dict[str, Any] = {"path": path, "claims": [], "served": None,
                              "outcome": "not served (404)", "rows": [], "error": None}
    target = next((e for e in state["entities"].values()
                   if any(i.get("alias") == path for i in e["fields"].get("path", []))), None)
    if target is not None:
        result["claims"].append(f"{target['entity_type']}:{target['uuid']}")
    routes = dict(best_routes(state.get("router") or {}, path))
    result["claims"] += routes
    if not result["claims"]:
        return result
    result["served"] = result["claims"][0]
    if target is not None:
        published = (target["fields"].get("status") or [{"value": "1"}])[0]["value"] == "1"
        return result | {"outcome": "entity" if published else "not served (403)"}
    view_id, display_id = result["served"].removeprefix("view:").split("/", 1)
    view = view_answer(state, {"view_id": view_id, "display_id": display_id,
                               "arguments": routes[result["served"]]})
    return result | {k: view[k] for k in ("outcome", "rows", "error")}


def rebuild_router(state: dict[str, Any]) -> None:
    """The router rebuilt from the config now: every enabled page display of an enabled view."""
    routes = {}
    for name, config in state["config"].items():
        if not name.startswith("views.view.") or not config.get("status", True):
            continue
        for display_id, display in (config.get("display") or {}).items():
            own = (display.get("display_options") or {}).get("path")
            if display.get("display_plugin") == "page" and _enabled(display) and isinstance(own, str):
                routes[f"view.{name.removeprefix('views.view.')}.{display_id}"] = "/" + own.strip().strip("/")
    state["router"] = routes


def _enabled(display: Mapping[str, Any]) -> bool:
    options = display.get("display_options") or {}
    return options.get("enabled", True) not in (False, 0, "", "0", None)


def _row(state: Mapping[str, Any], uuid: str) -> dict[str, Any]:
    entity = state["entities"][uuid]
    return {"id": entity["id"], "uuid": uuid, "label": entity["fields"]["title"][0]["value"]}


def _records(state: Mapping[str, Any]) -> list[EntityRecord]:
    records = []
    for uuid, entity in sorted(state["entities"].items(), key=lambda pair: pair[1]["id"]):
        fields = entity["fields"]
        status = (fields.get("status") or [{"value": "1"}])[0]["value"]
        records.append(EntityRecord(
            entity["entity_type"], uuid, int(entity["id"]), entity["bundle"],
            str((fields.get("title") or [{"value": ""}])[0]["value"]), status in ("1", True),
            {name: items for name, items in fields.items() if name not in BASE},
            created=int(entity.get("created", 0))))
    return records


def _schema(state: Mapping[str, Any]) -> ViewSchema:
    config = state["config"]
    fields = {}
    for name, data in config.items():
        if name.startswith("field.storage.node."):
            allowed = (data.get("settings") or {}).get("allowed_values")
            keys = tuple(str(a["value"]) for a in allowed) if isinstance(allowed, list) else None
            fields[data["field_name"]] = FieldInfo(data["field_name"], str(data.get("type")), keys)
    bundles = {name.removeprefix("node.type."): str(data.get("name") or "")
               for name, data in config.items() if name.startswith("node.type.")}
    return ViewSchema(fields, bundles)
