"""Mutation operators on a hand-made reference state: each names its mutant by operator and
target and writes exactly the wrong build it says, and the registry refuses what fits no family."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ai_proving_ground.mutation import registry
from ai_proving_ground.mutation.behaviour import nested
from ai_proving_ground.mutation.registry import Context, Mutant, derive, operator, operators
from ai_proving_ground.mutation.state import EntityState, SiteState

VIEW = {"id": "kb", "status": True, "display": {
    "default": {"display_plugin": "default", "id": "default", "display_options": {
        "filters": {"status": {"id": "status", "plugin_id": "boolean", "operator": "=", "value": "1"},
                    "type": {"id": "type", "plugin_id": "bundle", "field": "type",
                             "operator": "in", "value": {"kb_doc": "kb_doc"}}},
        "sorts": {"weight": {"id": "weight", "table": "t", "field": "weight", "order": "ASC"}},
        "pager": {"type": "none", "options": {"offset": 0}}}},
    "page_1": {"display_plugin": "page", "id": "page_1", "display_options": {"path": "kb"}}}}
REGION = {"status": True, "component_tree": [
    {"uuid": "p1", "component_id": "sdc.apg.paragraph", "inputs": {"text": "kept"}},
    {"uuid": "h1", "component_id": "sdc.apg.heading", "inputs": {"text": "Hi", "level": "h2"}}]}
HEADING = {"props": {"text": {"type": "string"}, "level": {"enum": ["h1", "h2", "h3"]}}, "slots": []}
NODE = EntityState("node", "kb_doc", "An article", True, {"field_kb_weight": [{"value": 3}]})


def context(view: Any = VIEW) -> Context:
    base_config = {"system.site": {"name": "Site", "uuid": "x"},
                   "node.type.kb_doc": {"type": "kb_doc"}, "node.type.page": {"type": "page"},
                   "canvas.page_region.olivero.footer": {
                       **REGION, "component_tree": REGION["component_tree"][:1]},
                   "canvas.page_region.olivero.header": {"status": True, "component_tree": []},
                   "canvas.component.sdc.apg.heading": HEADING}
    baseline = SiteState(config=base_config, entities={"n1": NODE})
    reference = SiteState(config={**copy.deepcopy(base_config), "views.view.kb": view,
                                  "canvas.page_region.olivero.footer": REGION},
                          entities={"n1": NODE})
    return Context(baseline=baseline, reference=reference,
                   changed_config=tuple(reference.changed_config(baseline)),
                   changed_entities=tuple(reference.changed_entities(baseline)),
                   view_rows={("kb", "default"): ("n1", "n2", "n3")})


def by_name(mutants: list[Mutant]) -> dict[str, Mutant]:
    return {m.name: m for m in mutants}


def written_view(mutant: Mutant) -> dict[str, Any]:
    view: dict[str, Any] = mutant.writes.config["views.view.kb"]
    return view


def test_every_family_registers_operators_and_every_name_has_a_family() -> None:
    names = list(operators())
    assert {n.partition(".")[0] for n in names} == set(registry.FAMILIES)
    assert {"views.filter_dropped", "views.sort_removed", "views.pager_type", "views.path",
            "views.display_status", "views.view_status", "views.override_flag",
            "views.view_duplicated",
            "content.field_value", "content.item_missing", "content.item_added",
            "content.published", "canvas.moved", "canvas.input_changed", "canvas.input_dropped",
            "canvas.duplicated", "canvas.removed", "canvas.region_disabled",
            "config.missing", "config.value_changed",
            "outside.config_changed", "outside.content_changed"} <= set(names)
    with pytest.raises(ValueError, match="no family"):
        operator("nonsense.op")


def test_view_mutants_change_one_thing_each() -> None:
    found = by_name(derive(context(), lambda n: n.startswith("views.")))
    dropped = written_view(found["views.filter_dropped[views.view.kb:default.filters.status]"])
    assert list(dropped["display"]["default"]["display_options"]["filters"]) == ["type"]
    value = written_view(found["views.filter_value[views.view.kb:default.filters.type]"])
    # Another bundle the site has, not a made-up one.
    assert value["display"]["default"]["display_options"]["filters"]["type"]["value"] == {"page": "page"}
    flipped = written_view(found["views.filter_operator[views.view.kb:default.filters.status]"])
    assert flipped["display"]["default"]["display_options"]["filters"]["status"]["operator"] == "!="
    size = written_view(found["views.pager_size[views.view.kb:default.pager]"])
    # One fewer than the reference lists: the smallest pager that hides a row.
    assert size["display"]["default"]["display_options"]["pager"] == {
        "type": "some", "options": {"offset": 0, "items_per_page": 2}}
    override = written_view(found["views.override_flag[views.view.kb:page_1.defaults.sorts]"])
    page = override["display"]["page_1"]["display_options"]
    assert (page["defaults"], page["sorts"]) == ({"sorts": False}, {})
    assert written_view(found["views.display_status[views.view.kb:page_1]"])[
        "display"]["page_1"]["display_options"]["enabled"] is False
    twin = found["views.view_duplicated[views.view.kb]"].writes.config
    assert list(twin) == ["views.view.kb_copy"] and twin["views.view.kb_copy"]["id"] == "kb_copy"
    assert twin["views.view.kb_copy"]["display"] == VIEW["display"]  # the same paths
    assert VIEW["display"]["default"]["display_options"]["filters"]["status"]["operator"] == "="


def test_canvas_mutants_touch_what_the_reference_added() -> None:
    found = by_name(derive(context(), lambda n: n.startswith("canvas.")))
    footer = "canvas.page_region.olivero.footer"
    level = found[f"canvas.input_changed[{footer}:sdc.apg.heading@h1.level]"]
    assert level.writes.config[footer]["component_tree"][1]["inputs"]["level"] == "h3"  # the enum's next
    moved = found[f"canvas.moved[{footer}:sdc.apg.heading@h1->canvas.page_region.olivero.header]"]
    assert [c["uuid"] for c in moved.writes.config[footer]["component_tree"]] == ["p1"]
    assert [c["uuid"] for c in moved.writes.config["canvas.page_region.olivero.header"][
        "component_tree"]] == ["h1"]
    # Only the added heading is changed, duplicated or moved; any component may be removed.
    assert not any("@p1" in name for name in found if not name.startswith("canvas.removed"))
    assert f"canvas.removed[{footer}:sdc.apg.paragraph@p1]" in found
    assert found[f"canvas.region_disabled[{footer}]"].writes.config[footer]["status"] is False


def test_outside_mutants_change_what_the_reference_left_alone() -> None:
    found = by_name(derive(context(), lambda n: n.startswith("outside.")))
    assert found["outside.config_changed[system.site:name]"].writes.config[
        "system.site"]["name"] == "Site (mutant)"
    retitled = found["outside.content_changed[n1]"].writes.entities["n1"]
    assert retitled is not None and retitled.label == "An article (mutant)"


def test_a_task_without_content_still_adds_and_unpublishes_a_listed_item() -> None:
    found = by_name(derive(context(), lambda n: n.startswith("content.")))
    assert set(found) == {"content.item_added[n1:copy]", "content.published[n1]"}
    (copied,) = found["content.item_added[n1:copy]"].writes.entities.items()
    assert copied[0] != "n1" and copied[1] == NODE


def test_a_tree_is_compared_as_rendered_without_uuids() -> None:
    one = [{"uuid": "a", "component_id": "s", "inputs": {}},
           {"uuid": "b", "component_id": "c", "parent_uuid": "a", "slot": "content", "inputs": {"t": 1}}]
    other = [{**one[0], "uuid": "x"}, {**one[1], "uuid": "y", "parent_uuid": "x"}]
    assert nested(one) == nested(other)
    assert nested(one) != nested([one[0], {**one[1], "parent_uuid": None}])
    assert nested(one) != nested([one[0], {**one[1], "parent_uuid": "gone"}])  # an orphan


def test_config_mutants_undo_or_change_what_the_reference_set() -> None:
    baseline = SiteState(config={"system.site": {"name": "A", "page": {"front": "/node"}, "uuid": "u"},
                                 "core.extension": {"module": {}}}, entities={})
    reference = SiteState(config={"system.site": {"name": "B", "page": {"front": "/home"}, "uuid": "u"},
                                  "node.type.x": {"type": "x", "name": "X"},
                                  "core.extension": {"module": {"x": 0}}}, entities={})
    found = by_name(derive(Context(baseline, reference, tuple(reference.changed_config(baseline)), ()),
                           lambda n: n.startswith("config.")))
    # Module state is an install, not a config edit; a created object's values are not mutated.
    assert set(found) == {"config.missing[node.type.x]", "config.missing[system.site]",
                          "config.value_changed[system.site:name]",
                          "config.value_changed[system.site:page.front]"}
    assert found["config.missing[node.type.x]"].writes.config == {"node.type.x": None}
    assert found["config.missing[system.site]"].writes.config["system.site"]["name"] == "A"
    front = found["config.value_changed[system.site:page.front]"].writes.config["system.site"]
    assert (front["name"], front["page"]["front"]) == ("B", "/home (mutant)")


def test_a_list_item_the_reference_added_is_left_out() -> None:
    baseline = SiteState(config={"user.role.a": {"id": "a", "permissions": ["access content"]}},
                         entities={})
    reference = SiteState(config={"user.role.a": {"id": "a", "permissions": [
        "access content", "edit notices"]}, "user.role.b": {"id": "b", "permissions": ["x"],
                                                            "dependencies": {"module": ["node"]}}},
                          entities={})
    context = Context(baseline, reference, tuple(reference.changed_config(baseline)), ())
    found = by_name(derive(context, lambda n: n == "config.list_item_dropped"))
    assert set(found) == {"config.list_item_dropped[user.role.a:permissions:edit notices]",
                          "config.list_item_dropped[user.role.b:permissions:x]"}
    assert found["config.list_item_dropped[user.role.a:permissions:edit notices]"].writes.config[
        "user.role.a"]["permissions"] == ["access content"]


def test_mutants_come_family_by_family() -> None:
    order = list(registry.FAMILIES)
    families = [order.index(m.operator.partition(".")[0]) for m in derive(context())]
    assert families == sorted(families) and len(set(families)) >= 3
