"""Equivalence under a visitor's input: every display of a view the reference wrote is executed on
a first visit and again with each exposed filter given a value the reference's rows hold (and one
none holds) and its contextual filters given an argument (the rows', none's, and those its checks
pass). A mutant equal on a first visit but not under some input is not equivalent; a build equal
under every input (its filters reordered) still is.

nv04 (an exposed product filter) and nv02 (a category argument) are the shipped tasks with such
filters; their checks are the shipped ones, or weakened to show what equivalence alone sees.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mutation_kit import shipped_task, write_dataset

from ai_proving_ground.mutation import registry
from ai_proving_ground.mutation.inputs import NO_MATCH, ViewInput, view_inputs
from ai_proving_ground.mutation.registry import Context, Mutant
from ai_proving_ground.mutation.state import EntityState, SiteState, Writes

NV04, NV02 = "nv04_exposed_product_filter", "nv02_category_argument"
PRODUCTS = "views.view.notices_by_product"
CATEGORY = "views.view.notices_by_category"
PRODUCT_FILTER = f"{PRODUCTS}:default.filters.field_notice_products_value"
CATEGORY_ARGUMENT = f"{CATEGORY}:default.arguments.field_notice_category_value"


def statuses(result: Any) -> dict[str, str]:
    assert result.rc in (0, 1), result.err
    return {m["name"]: m["status"] for m in json.loads(result.out)["mutants"]}


def reordered(name: str, section: str) -> registry.Operator:
    """A test operator: the view with its default display's ``section`` in reverse order."""

    def operator(context: Context) -> Iterator[Mutant]:
        view = copy.deepcopy(context.config(name))
        options = view["display"]["default"]["display_options"]
        options[section] = dict(reversed(list(options[section].items())))
        yield Mutant("views.test_reordered", name, f"its {section} in reverse order",
                     Writes(config={name: view}))

    return operator


@pytest.fixture
def reorder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    registry.operators()
    monkeypatch.setitem(registry.OPERATORS, "views.test_reordered", reordered(*request.param))


@pytest.mark.parametrize("reorder", [(PRODUCTS, "filters")], indirect=True)
def test_an_exposed_filters_operator_changed_is_not_equivalent(apg: Any, reorder: None,
                                                              tmp_path: Any) -> None:
    task = shipped_task(NV04)
    # Only the first visit is checked: no check types in the Product box.
    task["checks"] = [c for c in task["checks"] if not c.get("exposed")]
    dataset = write_dataset(tmp_path / "weak.yml", task)
    argv = ("--json", "--operator", "views.test_reordered", "--operator", "views.filter_operator",
            "--operator", "views.filter_dropped")
    found = statuses(apg("task", "mutate", NV04, "--dataset", str(dataset), "--threshold", "0",
                         *argv))
    # 'contains' made 'not', or the filter dropped, lists every notice on a first visit, as the
    # reference does; given ?product=..., not what it lists. The weak checks pass both.
    assert found[f"views.filter_operator[{PRODUCT_FILTER}]"] == "survived"
    assert found[f"views.filter_dropped[{PRODUCT_FILTER}]"] == "survived"
    # The same filters in another order list the same rows under every input.
    assert found[f"views.test_reordered[{PRODUCTS}]"] == "equivalent"
    # The shipped checks type api in the box (product-typed): they kill both.
    shipped = statuses(apg("task", "mutate", NV04, *argv))
    assert shipped[f"views.filter_operator[{PRODUCT_FILTER}]"] == "killed"
    assert shipped[f"views.filter_dropped[{PRODUCT_FILTER}]"] == "killed"
    assert shipped[f"views.test_reordered[{PRODUCTS}]"] == "equivalent"


@pytest.mark.parametrize("reorder", [(CATEGORY, "filters")], indirect=True)
def test_a_contextual_filter_dropped_is_not_equivalent(apg: Any, reorder: None, tmp_path: Any
                                                       ) -> None:
    task = shipped_task(NV02)
    # Only the first visit is checked: nothing the checks do passes an argument (the page
    # check visits /notices/category/billing, an argument in its path, so it goes too).
    task["checks"] = [c for c in task["checks"]
                      if not c.get("arguments") and c["type"] != "page_served"]
    dataset = write_dataset(tmp_path / "weak.yml", task)
    found = statuses(apg("task", "mutate", NV02, "--dataset", str(dataset), "--json",
                         "--threshold", "0", "--operator", "views.test_reordered",
                         "--operator", "views.argument_dropped"))
    # Without an argument it lists what the reference lists; with /maintenance it lists all.
    assert found[f"views.argument_dropped[{CATEGORY_ARGUMENT}]"] == "survived"
    assert found[f"views.test_reordered[{CATEGORY}]"] == "equivalent"
    shipped = statuses(apg("task", "mutate", NV02, "--json", "--operator", "views.argument"))
    assert shipped == {f"views.argument_dropped[{CATEGORY_ARGUMENT}]": "killed",
                       f"views.argument_default[{CATEGORY_ARGUMENT}]": "killed"}


def notice(category: str, products: list[str]) -> EntityState:
    return EntityState("node", "kb_notice", f"A {category} notice", True, {
        "field_notice_category": [{"value": category}],
        "field_notice_products": [{"value": p} for p in products]})


def view(filters: dict[str, Any], arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    options: dict[str, Any] = {"filters": filters}
    if arguments is not None:
        options["arguments"] = arguments
    return {"id": "v", "display": {"default": {"display_options": options},
                                   "page_1": {"display_options": {"path": "v"}}}}


def test_inputs_come_from_the_listed_rows_the_filters_identifiers_and_the_checks() -> None:
    # (A check's own input is kept as the check gives it: ?product=api on page 1.)
    exposed = {"id": "p", "table": "node__field_notice_products",
               "field": "field_notice_products_value", "exposed": True,
               "expose": {"identifier": "product"}}
    argument = {"id": "c", "table": "node__field_notice_category",
                "field": "field_notice_category_value"}
    state = SiteState(config={"views.view.v": view({"p": exposed, "status": {"id": "status"}},
                                                   {"c": argument}),
                              "system.site": {"name": "x"}},
                      entities={"a": notice("release", ["editor"]),
                                "b": notice("billing", ["invoices", "portal"])})
    checks = [{"view": "v", "arguments": ["maintenance"]}, {"view": "other", "arguments": ["x"]},
              {"view": "v", "exposed": {"product": "api"}, "page": 1}, {"view": "v"}]
    # The first row listed decides (b before a), whatever the UUIDs' order.
    found = view_inputs(state, ["views.view.v", "system.site"], {("v", "page_1"): ("b", "a")},
                        checks)
    assert found == {"views.view.v": (
        ViewInput(f"arguments {NO_MATCH}", arguments=(NO_MATCH,)),
        ViewInput("arguments billing", arguments=("billing",)),
        ViewInput("arguments maintenance", arguments=("maintenance",)),
        ViewInput(f"exposed product={NO_MATCH}", exposed=(("product", NO_MATCH),)),
        ViewInput("exposed product=api; page 1", exposed=(("product", "api"),), page=1),
        ViewInput("exposed product=invoices", exposed=(("product", "invoices"),)))}
    # A grouped filter gets each of its group items at its group's identifier.
    grouped = {"id": "g", "table": "node_field_data", "field": "type", "exposed": True,
               "is_grouped": True, "group_info": {"identifier": "kind", "group_items": {
                   1: {"value": {"kb_notice": "kb_notice"}}, 2: {"value": {"page": "page"}}}}}
    state = SiteState(config={"views.view.v": view({"g": grouped})}, entities={})
    assert [i.exposed for i in view_inputs(state, ["views.view.v"], {}, [])["views.view.v"]] == \
        [(("kind", "1"),), (("kind", "2"),)]
    # A view with no exposed filter and no contextual filter runs on a first visit only.
    plain = SiteState(config={"views.view.v": view({"status": {"id": "status"}})}, entities={})
    assert view_inputs(plain, ["views.view.v"], {}, []) == {}
