"""Menus on the embedded site: ``system.menu.ID`` and its ``menu_link_content`` links, each
link's URI resolved to where a visitor's click leads, and the tree a visitor sees."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.menus import MenuLink, MenuTree
from ai_proving_ground.tasks.checks.menu import visible_tree

HOME = "ca0a5000-0000-4000-8000-000000000001"  # canvas_home's front page, aliased /home


def test_links_resolve_to_where_a_click_leads(fixtures_bed: Path) -> None:
    site = EmbeddedSite(fixtures_bed)
    site.install_modules(["menu_link_content"])
    uris = ["entity:node/1", "internal:/node/2", "internal:/home", "route:<front>", "internal:/",
            "https://status.example.com", "entity:node/999", "internal:/no/such/page",
            "internal:/node/999", "entity:canvas_page/1", "internal:/page/1", "entity:bogus"]
    with site.session() as store:
        from ai_proving_ground.sites.embedded.bundle_api import create_menu

        create_menu(store, {"id": "help", "label": "Help"}, site.config_save)
        for n, uri in enumerate(uris):
            site.create_entity(store, "menu_link_content", None, {
                "title": f"Link {n}", "link": {"uri": uri}, "menu_name": "help", "weight": n},
                f"4d3e0000-0000-4000-8000-{n:012d}")
        site.create_entity(store, "menu_link_content", None, {
            "title": "Elsewhere", "link": {"uri": "route:<front>"}, "menu_name": "other"})
        nodes = {r.id: r.uuid for r in store.entities_of("node")}
    answer = site.read_state(StateQuery(menus=("help", "absent")))
    assert answer.menus["absent"] is None
    menu = answer.menus["help"]
    assert menu is not None and menu.label == "Help"
    assert [link.uri for link in menu.links] == uris  # only the menu's own links, by id
    assert [link.target for link in menu.links] == [
        f"node:{nodes[1]}", f"node:{nodes[2]}", f"canvas_page:{HOME}", "<front>", "<front>",
        "https://status.example.com", "node/999", "/no/such/page", "/node/999",
        f"canvas_page:{HOME}", f"canvas_page:{HOME}", "entity:bogus"]
    assert [(link.weight, link.enabled, link.expanded, link.parent) for link in menu.links][:2] == [
        (0, True, False, ""), (1, True, False, "")]


def link(n: int, title: str, weight: int = 0, parent: int = 0, enabled: bool = True) -> MenuLink:
    return MenuLink(f"u{n}", title, f"internal:/{n}", f"/{n}",
                    f"menu_link_content:u{parent}" if parent else "", weight, enabled)


def titles(tree: list[dict[str, object]]) -> list[object]:
    return [(item["title"], titles(item["children"])) if item["children"] else item["title"]  # type: ignore[arg-type]
            for item in tree]


def test_a_visitor_sees_enabled_links_by_weight_then_title_nested() -> None:
    menu = MenuTree("m", "M", (
        link(1, "Zeta", weight=-1), link(2, "Beta"), link(3, "Alpha"),
        link(4, "Child b", parent=2, weight=1), link(5, "Child a", parent=2, weight=1),
        link(6, "Hidden", enabled=False), link(7, "Under hidden", parent=6),
        link(8, "Orphan", parent=99, weight=5)))
    assert titles(visible_tree(menu)) == [
        "Zeta", "Alpha", ("Beta", ["Child a", "Child b"]), "Orphan"]
