"""The probe's menus(): a menu's links by id, each resolved through ``Url::fromUri()`` to the words
the embedded site uses (sites.menus.MenuLink.target), decoded into the same MenuTree.

probe.php runs under php-cli on probe_harness.php's stand-ins: the menu and link storages, an
entity query on ``menu_name``, node storage by id, and a ``Url`` whose answer per URI is given
(a route and its parameters, external, or unrouted ``base:``), as Drupal's would be.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.ddev.answers import decode_answer
from ai_proving_ground.sites.ddev.driver import PROBE_FILE
from ai_proving_ground.sites.menus import MenuLink, MenuTree

HARNESS = Path(__file__).resolve().parent / "probe_harness.php"
PHP = shutil.which("php")
NODE = "7e0a1c00-0000-4000-8000-000000000001"
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")

# (title, uri, what Url::fromUri() makes of it, the target the probe must answer)
LINKS: list[tuple[str, str, dict[str, Any] | None, str]] = [
    ("Notices", "internal:/notices/maintenance", {"route": "view.notices.page_1"}, "view:notices/page_1"),
    ("Upgrade", "entity:node/1", {"route": "entity.node.canonical", "parameters": {"node": "1"}},
     f"node:{NODE}"),
    ("Gone", "entity:node/99", {"route": "entity.node.canonical", "parameters": {"node": "99"}},
     "node/99"),
    ("Home", "route:<front>", None, "<front>"),
    ("Slash", "internal:/", None, "<front>"),
    ("Front by path", "internal:/home", {"route": "<front>"}, "<front>"),
    ("Status", "https://status.example.com", {"external": True}, "https://status.example.com"),
    ("Nowhere", "internal:/no/such?x=1", {"base": "base:no/such?x=1"}, "/no/such"),
    ("Log in", "route:user.login", {"route": "user.login"}, "route:user.login"),
    ("Broken", "not a uri", None, "not a uri"),
]


def menus(questions: list[str]) -> Any:
    links = [{"id": n, "uuid": f"u{n}", "title": title, "uri": uri, "menu_name": "help",
              "parent": "menu_link_content:u1" if n == 2 else "", "weight": str(n),
              "enabled": n != 3, "expanded": n == 1}
             for n, (title, uri, _url, _target) in enumerate(LINKS, start=1)]
    links.append({"id": 50, "uuid": "other", "title": "Elsewhere", "uri": "route:<front>",
                  "menu_name": "support"})
    spec = {"call": "menuMany", "menus": {"help": "Help", "support": "Support"},
            "links": list(reversed(links)),
            "urls": {uri: url for _t, uri, url, _target in LINKS if url is not None},
            "entities": {"node": {"1": NODE}}, "questions": questions}
    assert PHP is not None
    done = subprocess.run([PHP, str(HARNESS), str(PROBE_FILE)], input=json.dumps(spec),
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_links_are_resolved_and_decoded_as_the_embedded_site_answers() -> None:
    raw = menus(["help", "absent"])
    answer = decode_answer({"menus": raw}, StateQuery(menus=("help", "absent")))
    assert answer.menus["absent"] is None
    expected = tuple(
        MenuLink(f"u{n}", title, uri, target, "menu_link_content:u1" if n == 2 else "", n,
                 n != 3, n == 1)
        for n, (title, uri, _url, target) in enumerate(LINKS, start=1))
    assert answer.menus["help"] == MenuTree("help", "Help", expected)


def test_no_menu_asked_is_an_empty_map() -> None:
    assert menus([]) == {}
