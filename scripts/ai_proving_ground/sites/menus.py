"""A menu as every site driver answers it (``StateAnswer.menus``): its links and where they lead."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MenuLink:
    """One ``menu_link_content`` entity of a menu, with where its link leads.

    ``target`` is the link resolved as a visitor's click resolves it (one spelling for both
    drivers): ``<front>`` for the front page route (``route:<front>``, ``internal:/``), and for a
    path that routes to an entity (``entity:node/3``, ``internal:/node/3``, an alias) that
    entity as ``<entity_type>:<uuid>`` (``node/3`` when no such entity exists); a path a view's
    page display serves is ``view:ID/DISPLAY``; any other internal path is the path itself and
    anything else (an external URL, another route) is the URI as stored.
    """

    uuid: str
    title: str
    uri: str
    target: str
    parent: str = ""  # the parent's plugin id (menu_link_content:UUID), empty at the top
    weight: int = 0
    enabled: bool = True
    expanded: bool = False


@dataclass(frozen=True)
class MenuTree:
    """A menu (``system.menu.ID``) and every link saved in it, enabled or not, by id."""

    menu_id: str
    label: str
    links: tuple[MenuLink, ...] = ()
