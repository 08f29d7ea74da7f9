"""The probe's served-page answer: which routes claim a path and what a visitor gets, worded as
the embedded site words it (sites.base.PageResult), and a disabled display not executed.

probe.php's ``page()`` and ``view()`` run under php-cli on probe_harness.php's stand-ins: an
alias manager, the router's candidates (in the order Drupal's RouteProvider sorts them: fit, then
route name) and its matcher, and FakeView. The same builds set on an embedded bed must give the
same answer.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.sites.base import PageQuery, StateQuery, ViewQuery
from ai_proving_ground.sites.ddev.driver import PROBE_FILE
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.router import best_routes

HARNESS = Path(__file__).resolve().parent / "probe_harness.php"
PHP = shutil.which("php")
HOME = "ca0a5000-0000-4000-8000-000000000001"
ROW = {"id": 7, "uuid": "6b0d0c00-0000-4000-8000-000000000007", "label": "Update your payment method"}
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")


def run(call: str, **spec: Any) -> Any:
    assert PHP is not None
    done = subprocess.run([PHP, str(HARNESS), str(PROBE_FILE)],
                          input=json.dumps({"call": call, **spec}), capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def fake_view(**extra: Any) -> dict[str, Any]:
    return {"status": True, "displays": {"default": "default", "page_1": "page"},
            "rows": [ROW], "total_rows": 1, **extra}


def view_route(view_id: str, path: str = "/kb/list") -> dict[str, Any]:
    return {"path": path, "view_id": view_id, "display_id": "page_1"}


def pages(routes: list[dict[str, Any]], views: dict[str, Any], *paths: str,
          aliases: dict[str, str] | None = None) -> list[dict[str, Any]]:
    answer: list[dict[str, Any]] = run(
        "pageMany", views=views, pages={"aliases": aliases or {}, "routes": routes},
        questions=[{"path": p} for p in paths])
    return answer


def test_a_view_route_is_served_with_its_rows() -> None:
    (page,) = pages([view_route("kb_list"), {"path": "/kb/{arg_0}", "view_id": "kb_any",
                                             "display_id": "page_1"}],
                    {"kb_list": fake_view()}, "kb/list/")
    assert page == {"path": "/kb/list", "claims": ["view:kb_list/page_1"],
                    "served": "view:kb_list/page_1", "outcome": "rows", "rows": [ROW],
                    "error": None}


def test_two_views_on_one_path_are_both_claims_in_router_order() -> None:
    (page,) = pages([view_route("a_list"), view_route("kb_list")],
                    {"a_list": fake_view(), "kb_list": fake_view()}, "/kb/list")
    assert page["claims"] == ["view:a_list/page_1", "view:kb_list/page_1"]
    assert page["served"] == "view:a_list/page_1"


def test_an_alias_serves_its_entity_for_anonymous_only_when_published() -> None:
    entity = {"path": "/page/1", "entity": {"entity_type": "canvas_page", "uuid": HOME,
                                            "published": True}}
    unpublished = {**entity, "entity": {**entity["entity"], "published": False}}
    aliases = {"/home": "/page/1"}
    (served,) = pages([entity, view_route("kb_home", "/home")], {"kb_home": fake_view()},
                      "/home", aliases=aliases)
    assert served == {"path": "/home", "claims": [f"canvas_page:{HOME}", "view:kb_home/page_1"],
                      "served": f"canvas_page:{HOME}", "outcome": "entity", "rows": [],
                      "error": None}
    (denied,) = pages([unpublished], {}, "/home", aliases=aliases)
    assert denied["outcome"] == "not served (403)"


def test_a_site_without_aliases_routes_the_path_itself() -> None:
    answer = run("pageMany", views={"kb_list": fake_view()}, no_path_alias=True,
                 pages={"aliases": {"/kb/list": "/page/1"}, "routes": [view_route("kb_list")]},
                 questions=[{"path": "/kb/list"}])
    assert answer[0]["served"] == "view:kb_list/page_1"


def test_nothing_at_a_path_is_a_404() -> None:
    (page,) = pages([], {}, "/nowhere")
    assert page == {"path": "/nowhere", "claims": [], "served": None,
                    "outcome": "not served (404)", "rows": [], "error": None}


def test_a_disabled_display_is_not_executed() -> None:
    answer = run("viewMany", views={"kb_list": fake_view(disabled_displays=["page_1"])},
                 questions=[{"view_id": "kb_list", "display_id": "page_1"},
                            {"view_id": "kb_list", "display_id": "default"}])
    disabled, default = (a["answer"] for a in answer)
    assert disabled["outcome"] == "not served (display disabled: page path 404)"
    assert disabled["error"] == "display page_1 is disabled" and disabled["rows"] == []
    assert default["outcome"] == "rows"


VIEW = ("{id: %s, label: L, status: true, base_table: node_field_data, display: {default: "
        "{display_plugin: default, id: default, display_options: {filters: {nid: {id: nid, "
        "table: node_field_data, field: nid, plugin_id: numeric, operator: '=', value: {value: "
        "'7'}}}, pager: {type: none}}}, page_1: {display_plugin: page, id: page_1, "
        "display_options: {path: kb/list}}}}")


def test_the_embedded_site_words_it_alike(fixtures_bed: Path, site: Any) -> None:
    for view_id in ("kb_list", "a_list"):
        rc, out, err = site(fixtures_bed, "config:set", f"views.view.{view_id}", "?",
                            VIEW % view_id, "--input-format=yaml")
        assert rc == 0, (out, err)
    rc, out, err = site(fixtures_bed, "config:set", "views.view.kb_list",
                        "display.page_1.display_options.enabled", "false", "--input-format=yaml")
    assert rc == 0, (out, err)
    assert site(fixtures_bed, "cr").rc == 0  # the router the probe's stand-in holds
    answer = EmbeddedSite(fixtures_bed).read_state(StateQuery(
        pages=(PageQuery("/kb/list"), PageQuery("/home"), PageQuery("/nowhere")),
        views=(ViewQuery("kb_list", "page_1"),)))
    embedded = json.loads(json.dumps([dataclasses.asdict(p) for p in answer.pages]))
    probe = pages([view_route("a_list"),
                   {"path": "/page/1", "entity": {"entity_type": "canvas_page", "uuid": HOME,
                                                  "published": True}}],
                  {"a_list": fake_view()}, "/kb/list", "/home", "/nowhere",
                  aliases={"/home": "/page/1"})
    for page in (*embedded, *probe):
        page["rows"] = [row["uuid"] for row in page["rows"]]
    assert probe == embedded
    disabled = run("viewMany", views={"kb_list": fake_view(disabled_displays=["page_1"])},
                   questions=[{"view_id": "kb_list", "display_id": "page_1"}])[0]["answer"]
    view = json.loads(json.dumps(dataclasses.asdict(answer.views[0])))
    assert {k: disabled[k] for k in ("outcome", "error", "rows")} == {
        k: view[k] for k in ("outcome", "error", "rows")}


def test_a_placeholder_route_serves_the_path_part_as_the_argument_unless_shadowed() -> None:
    """A view path's % is {arg_0} in its route: it matches one part of the path, which the display
    gets as its contextual argument; a route with more literal parts shadows it (the router's fit),
    so it claims a path only where no literal route does. The embedded router says the same."""
    routes = [view_route("kb_list"), {"path": "/kb/{arg_0}", "view_id": "kb_any",
                                      "display_id": "page_1"}]
    views = {"kb_list": fake_view(), "kb_any": fake_view()}
    answers = run("pageMany", views=views, pages={"aliases": {}, "routes": routes},
                  questions=[{"path": p} for p in ("/kb/billing", "/kb/list", "/kb", "/kb/a/b")],
                  with_arguments=True)
    got = [(a["answer"]["claims"], a["answer"]["outcome"], a["arguments"]) for a in answers]
    assert got == [(["view:kb_any/page_1"], "rows", ["billing"]),
                   (["view:kb_list/page_1"], "rows", []),
                   ([], "not served (404)", []), ([], "not served (404)", [])]
    embedded = {"view.kb_list.page_1": "/kb/list", "view.kb_any.page_1": "/kb/%"}
    assert [best_routes(embedded, p) for p in ("/kb/billing", "/kb/list", "/kb", "/kb/a/b")] == [
        [("view:kb_any/page_1", ("billing",))], [("view:kb_list/page_1", ())], [], []]
