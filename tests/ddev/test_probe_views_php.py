"""The probe's view answer: outcome, sort ties and contextual arguments, as the embedded site's
ViewResult words them.

probe.php's ``view()`` runs under php-cli on a stand-in view (probe_harness.php's FakeView) built
from each case of the Drupal 10.3.7 corpus (tests/embedded/golden/views, see its README): the
stored config's status and displays, the broken handlers, validate() messages and exception Drupal
reported, the rows it returned in order and, for the ORDER BY aliases of the SQL Views built, the
values those rows hold on the corpus site (the shipped kb_docs content; all 12 nodes were created
in the same second). The probe's outcome must be what a visitor got, and its tie runs those the
embedded site reports for the same case.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.bed import init_bed
from ai_proving_ground.sites.base import StateQuery, ViewQuery
from ai_proving_ground.sites.ddev.driver import PROBE_FILE
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.yamlio import load_yaml

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "probe_harness.php"
CORPUS = HERE.parent / "embedded" / "golden" / "views"
# The corpus site's content (kb_docs version 2, kept beside the corpus).
FIXTURE = HERE.parent / "embedded" / "golden" / "corpus" / "fixture_kb_docs"
CASES = sorted(CORPUS.glob("*.json"))
CREATED = "1796112808"  # the corpus site's one creation second, as PDO returns it
PHP = shutil.which("php")
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")


def run_views(views: dict[str, Any], questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    assert PHP is not None
    done = subprocess.run(
        [PHP, str(HARNESS), str(PROBE_FILE)],
        input=json.dumps({"call": "viewMany", "views": views, "questions": questions}),
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


@cache
def fixture_nodes() -> dict[int, dict[str, Any]]:
    nodes = {}
    for path in sorted((FIXTURE / "content" / "node").glob("*.yml")):
        doc = load_yaml(path)
        nodes[int(doc["_meta"]["uuid"][-12:])] = doc["default"]
    return nodes


def sort_columns(sql: str) -> list[tuple[str, str, str]]:
    """(alias, table, column) of each ORDER BY alias, from the SELECT list of Views' SQL."""
    selected = dict((alias, (table, column)) for table, column, alias in
                    re.findall(r'"(\w+)"\."(\w+)" AS "(\w+)"', sql))
    order = re.search(r"ORDER BY (.*)$", sql, re.S)
    aliases = re.findall(r'"(\w+)" (?:ASC|DESC)', order.group(1)) if order else []
    return [(alias, *selected[alias]) for alias in aliases]


def stored_values(nid: int, table: str, column: str) -> list[str | None]:
    """What PDO hands back for that column of node ``nid``: one string per joined item."""
    node = fixture_nodes()[nid]
    if table == "node_field_data":
        value = {"nid": nid, "created": CREATED}.get(column)
        return [str(value if value is not None else node[column][0]["value"])]
    field = table.removeprefix("node__")
    items = node.get(field) or [{}]
    return [None if "value" not in item else str(item["value"]) for item in items]


def row_values(real_rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Each row's ORDER BY values. A multi-value field gives one row per item; rows come out in
    ascending item order, so an entity's n-th row holds its n-th smallest item."""
    seen: dict[int, int] = {}
    values = []
    for row in real_rows:
        nth = seen.get(row["nid"], 0)
        seen[row["nid"]] = nth + 1
        picked = {}
        for alias, table, column in columns:
            items = sorted(stored_values(row["nid"], table, column), key=lambda v: (v is None, v or ""))
            picked[alias] = items[min(nth, len(items) - 1)]
        values.append(picked)
    return values


def stand_in(case: dict[str, Any]) -> dict[str, Any]:
    real, config = case["real"], case["config"]
    columns = sort_columns(real["sql"] or "")
    rows = [{"id": r["nid"], "uuid": r["uuid"], "label": r["label"]} for r in real["rows"]]
    validate: dict[str, list[str]] = {}
    for message in real["validate_errors"]:
        display, text = message.split(": ", 1)
        validate.setdefault(display, []).append(text)
    return {
        "status": config.get("status", True),
        "displays": {d: spec.get("display_plugin") for d, spec in config["display"].items()},
        "broken": real["broken_handlers"],
        "validate": validate,
        "exception": real["exception"],
        "orderby": [alias for alias, _table, _column in columns],
        "rows": [row | {"values": v} for row, v in zip(rows, row_values(real["rows"], columns), strict=True)],
        "total_rows": real["total_rows"],
    }


@pytest.fixture(scope="module")
def probe_answers() -> dict[str, dict[str, Any]]:
    """The probe's answer for every corpus case, from one php run."""
    cases = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in CASES}
    views = {case["view_name"]: stand_in(case) for case in cases.values()}
    questions = [{"view_id": c["view_name"], "display_id": c["display"], "arguments": c["arguments"]}
                 for c in cases.values()]
    return dict(zip(cases, run_views(views, questions), strict=True))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedSite]:
    """A bed holding the corpus site's content (kb_docs version 2)."""
    target = tmp_path_factory.mktemp("probe_views") / "bed"
    site = init_bed(target)
    site.apply_recipe(FIXTURE)
    yield site


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_probe_words_a_view_as_drupal_served_it_and_ties_as_the_embedded_site(
    probe_answers: dict[str, dict[str, Any]], embedded: EmbeddedSite, path: Path
) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    probed = probe_answers[path.stem]
    answer = probed["answer"]
    assert answer["outcome"] == case["real"]["visitor_outcome"], case["note"]
    assert answer["messages"] == case["real"]["validate_errors"]
    assert sorted(answer["broken"]) == sorted(case["real"]["broken_handlers"])
    with embedded.session() as store:
        store.config_set(f"views.view.{case['view_name']}", case["config"])
    query = ViewQuery(case["view_name"], case["display"], tuple(case["arguments"]))
    (result,) = embedded.read_state(StateQuery(views=(query,))).views
    assert [tuple(run) for run in answer["ties"]] == list(result.ties)
    # Contextual filter values reach the view as strings, as Drupal takes them from the path.
    served = answer["outcome"] not in ("no such view or display",) and case["config"].get("status", True)
    assert probed["arguments"] == ([str(a) for a in case["arguments"]] if served else [])


def test_the_corpus_has_cases_for_ties_and_arguments() -> None:
    names = {p.stem for p in CASES}
    assert {"068-sort-created-ties", "070-sort-weight-ties", "102-argument-passed"} <= names


# ---------------------------------------------------------------------- what the corpus lacks

BASE = {"status": True, "displays": {"default": "default", "page_1": "page", "block_1": "block"}}


def one(view: dict[str, Any], display: str = "page_1", arguments: list[Any] | None = None) -> dict[str, Any]:
    question = {"view_id": "v", "display_id": display, "arguments": arguments or []}
    (probed,) = run_views({"v": BASE | view}, [question])
    answer: dict[str, Any] = probed["answer"]
    return answer | {"arguments_seen": probed["arguments"]}


@pytest.mark.parametrize(
    ("build_info", "outcome"),
    [({"fail": True}, "not served (404)"), ({"denied": True}, "not served (403)"), ({}, "rows")],
)
def test_a_failed_contextual_filter_is_not_served(build_info: dict[str, Any], outcome: str) -> None:
    # Views sets build_info fail ("not found") or denied ("access denied") and the page answers
    # 404 or 403 (Page::execute).
    assert one({"build_info": build_info}, arguments=[5])["outcome"] == outcome


def test_a_disabled_block_is_not_served_and_a_missing_view_is_no_such_view() -> None:
    assert one({"status": False}, display="block_1")["outcome"] == "not served (disabled)"
    (probed,) = run_views({}, [{"view_id": "gone", "display_id": "default"}])
    assert probed["answer"]["outcome"] == "no such view or display" and probed["answer"]["ties"] == []


def test_integer_arguments_are_passed_as_strings() -> None:
    assert one({}, arguments=[5, "7+8"])["arguments_seen"] == ["5", "7+8"]


def test_exposed_input_and_the_page_reach_the_view_only_when_given() -> None:
    # The driver sends ViewQuery as dataclasses.asdict makes it: exposed as [name, value] pairs.
    asked = dataclasses.asdict(ViewQuery("v", "page_1", exposed=(("product", "api"),), page=2))
    (given, plain) = run_views({"v": BASE}, [asked, dataclasses.asdict(ViewQuery("v", "page_1"))])
    assert (given["exposed"], given["page"]) == ({"product": "api"}, 2)
    # Nothing typed: setExposedInput is not called, or Views would read the request instead.
    assert (plain["exposed"], plain["page"]) == (None, None)
    assert given["answer"]["outcome"] == plain["answer"]["outcome"] == "rows"


def test_rows_of_one_entity_do_not_tie_but_two_entities_do() -> None:
    row = {"label": "x", "values": {"w": "2"}}
    uuid = "6b0d0c00-0000-4000-8000-{:012d}".format
    rows = [row | {"id": n, "uuid": uuid(n)} for n in (1, 1, 2, 3)]
    rows[3] = rows[3] | {"values": {"w": "3"}}
    assert one({"orderby": ["w"], "rows": rows})["ties"] == [[0, 3]]
    assert one({"orderby": ["w"], "rows": rows[:2]})["ties"] == []
