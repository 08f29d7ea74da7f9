"""The ``menu_tree`` check: a menu's links as a visitor gets them, compared whole.

A visitor sees a menu's enabled links whose parents are all enabled (a disabled link hides its
children, as Drupal's menu tree does), nested by parent (a link whose parent is not in the
menu sits at the top, as Drupal re-parents it on save), each level ordered as Drupal's tree
manipulators order it: by weight, then title, then plugin id. Each link is compared by its
title and where it leads (:class:`~ai_proving_ground.sites.menus.MenuLink`'s ``target``: a
link to ``entity:node/3`` and one to ``internal:/node/3`` lead to the same node), and by
``expanded`` where the task names it. Extra, missing, reordered or re-parented links fail.
"""

from __future__ import annotations

from typing import Any

from ai_proving_ground.sites.base import StateAnswer
from ai_proving_ground.sites.menus import MenuLink, MenuTree
from ai_proving_ground.tasks.checks.base import Check, CheckContext, CheckResult, QueryPlan, check_type

PLUGIN_PREFIX = "menu_link_content:"  # a menu_link_content link's plugin id, its parent's value


def visible_tree(menu: MenuTree) -> list[dict[str, Any]]:
    """The menu as a visitor gets it: ``[{title, target, expanded, children}]``, in order
    (``expanded``: its children show on every page, not only in the active trail)."""
    by_uuid = {link.uuid: link for link in menu.links}

    def parent_of(link: MenuLink) -> str:
        uuid = link.parent.removeprefix(PLUGIN_PREFIX) if link.parent.startswith(PLUGIN_PREFIX) else ""
        return uuid if uuid in by_uuid and uuid != link.uuid else ""

    def level(parent: str, seen: frozenset[str]) -> list[dict[str, Any]]:
        links = sorted((link for link in menu.links
                        if link.enabled and parent_of(link) == parent and link.uuid not in seen),
                       key=lambda link: (link.weight, link.title, PLUGIN_PREFIX + link.uuid))
        tree = []
        for link in links:
            children = level(link.uuid, seen | {link.uuid})
            # Drupal renders a link expanded only when it has children to show.
            tree.append({"title": link.title, "target": link.target,
                         "expanded": link.expanded and bool(children), "children": children})
        return tree

    return level("", frozenset())


def _expected(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"title": str(item["title"]), "target": str(item["target"]),
             **({"expanded": bool(item["expanded"])} if "expanded" in item else {}),
             "children": _expected(item.get("children") or [])} for item in items]


def _as_expected(found: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``found`` with ``expanded`` kept only where the expectation names it (by position)."""
    shaped = []
    for index, item in enumerate(found):
        want = expected[index] if index < len(expected) else {}
        shaped.append({"title": item["title"], "target": item["target"],
                       **({"expanded": item["expanded"]} if "expanded" in want else {}),
                       "children": _as_expected(item["children"], want.get("children") or [])})
    return shaped


def _first_difference(found: list[dict[str, Any]], expected: list[dict[str, Any]],
                      where: str = "") -> str:
    for index in range(max(len(found), len(expected))):
        at = f"{where}{index + 1}"
        if index >= len(found):
            return f"link {at} ({expected[index]['title']!r}) is missing"
        if index >= len(expected):
            return f"link {at} ({found[index]['title']!r}) is not expected"
        got, want = found[index], expected[index]
        for key in ("title", "target", "expanded"):
            if key in want and got.get(key) != want[key]:
                return f"link {at} has {key} {got.get(key)!r}, expected {want[key]!r}"
        inner = _first_difference(got["children"], want["children"], f"{at}.")
        if inner:
            return inner
    return ""


@check_type("menu_tree")
class MenuTreeCheck(Check):
    """Menu ``menu``'s visible links equal ``links`` (title, target, nesting, order)."""

    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.menus, str(self.spec["menu"]))

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        menu_id = str(self.spec["menu"])
        expected = _expected(self.spec.get("links") or [])
        menu = answer.menus.get(menu_id)
        if menu is None:
            return self.result(False, expected, None, f"there is no menu {menu_id}")
        found = _as_expected(visible_tree(menu), expected)
        difference = _first_difference(found, expected)
        return self.result(not difference, expected, found, difference)
