"""Menu mutants: the menu family's operators on a hand-made reference, and ng04_help_menu proven
on a real bed (every menu mutant killed; a weight or flag a visitor cannot see is equivalent)."""

from __future__ import annotations

import json
from typing import Any

from ai_proving_ground.mutation.menu_ops import moved, other_menu, reparented, retargeted
from ai_proving_ground.mutation.registry import Context, Mutant
from ai_proving_ground.mutation.state import EntityState, SiteState

TASK = "ng04_help_menu"


def menu_link(title: str, uri: str, weight: int, parent: str = "", menu: str = "help") -> EntityState:
    fields: dict[str, Any] = {"menu_name": [{"value": menu}], "weight": [{"value": weight}],
                              "link": [{"uri": uri, "title": None, "options": {}}]}
    if parent:
        fields["parent"] = [{"value": f"menu_link_content:{parent}"}]
    return EntityState("menu_link_content", "menu_link_content", title, True, fields)


def context() -> Context:
    config = {"system.menu.help": {"id": "help"}, "system.menu.support": {"id": "support"}}
    links = {"a": menu_link("Notices", "internal:/notices", 0),
             "b": menu_link("Child", "entity:node/1", 0, parent="a"),
             "c": menu_link("Home", "route:<front>", 1)}
    baseline = SiteState(config={"system.menu.support": {"id": "support"}}, entities={})
    reference = SiteState(config=config, entities=links)
    return Context(baseline, reference, tuple(reference.changed_config(baseline)),
                   tuple(reference.changed_entities(baseline)))


def field(mutant: Mutant, uuid: str, name: str, column: str = "value") -> Any:
    entity = mutant.writes.entities[uuid]
    assert entity is not None
    items = entity.fields.get(name) or [{}]
    return items[0].get(column)


def test_menu_operators_write_the_wrong_build_they_name() -> None:
    found = {m.name: m for op in (retargeted, moved, reparented, other_menu) for m in op(context())}
    assert sorted(found) == [
        "menu.moved[a]", "menu.moved[c]", "menu.other_menu[c]", "menu.reparented[b]",
        "menu.reparented[c]", "menu.retargeted[a]", "menu.retargeted[b]", "menu.retargeted[c]"]
    assert field(found["menu.retargeted[a]"], "a", "link", "uri") == "entity:node/1"
    assert field(found["menu.retargeted[c]"], "c", "link", "uri") == "internal:/notices"
    assert field(found["menu.moved[a]"], "a", "weight") == 2  # last among Notices and Home
    assert field(found["menu.moved[c]"], "c", "weight") == -1  # first
    assert field(found["menu.reparented[b]"], "b", "parent") is None  # at the top
    assert field(found["menu.reparented[c]"], "c", "parent") == "menu_link_content:a"
    assert field(found["menu.other_menu[c]"], "c", "menu_name") == "support"
    # Only the named link is written; a child or a parent never changes menu alone.
    assert all(list(m.writes.entities) == [m.target] for m in found.values())


def test_the_help_menu_task_kills_every_menu_mutant(apg: Any) -> None:
    result = apg("task", "mutate", TASK, "--json", "--operator", "menu.",
                 "--operator", "content.field_value")
    assert result.rc == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    statuses = {m["name"]: m["status"] for m in data["mutants"]}
    menu = {name: status for name, status in statuses.items() if name.startswith("menu.")}
    assert len(menu) == 16 and set(menu.values()) == {"killed"}
    notices = "4d3e0000-0000-4000-8000-000000000101"
    # A visitor sees the same menu: Notices at weight 1 ties Service status and sorts first by
    # title; the external flag and a leaf's expanded flag change nothing rendered.
    assert statuses[f"content.field_value[{notices}:weight]"] == "equivalent"
    assert statuses[f"content.field_value[{notices}:external]"] == "equivalent"
    assert statuses["content.field_value[4d3e0000-0000-4000-8000-000000000105:expanded]"] == "equivalent"
    assert statuses[f"content.field_value[{notices}:expanded]"] == "killed"
    assert data["score"] == 1.0
