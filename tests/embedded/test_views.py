"""Executing views.view.* config over entity records, as the embedded site does."""

from __future__ import annotations

from typing import Any

import pytest

from ai_proving_ground.sites.base import EntityRecord, ViewResult, ViewRow
from ai_proving_ground.sites.embedded.views import ViewError, base_entity_type, execute_view


def node(
    n: int,
    bundle: str,
    label: str,
    *,
    status: bool = True,
    created: int = 0,
    **fields: list[dict[str, Any]],
) -> EntityRecord:
    return EntityRecord("node", f"n{n}", n, bundle, label, status, dict(fields), created, created)


NODES = [
    node(
        1,
        "article",
        "Alpha Guide",
        created=100,
        field_score=[{"value": 5}],
        field_tags=[{"target_id": 10}],
        promote=[{"value": True}],
    ),
    node(
        2,
        "page",
        "beta notes",
        status=False,
        created=300,
        field_score=[{"value": 15}],
        field_tags=[{"target_id": 10}, {"target_id": 20}],
        promote=[{"value": False}],
    ),
    node(
        3,
        "article",
        "Gamma guide to Python",
        created=200,
        field_score=[{"value": 10}],
        field_tags=[{"target_id": 20}],
    ),
    node(4, "kb_doc", "Delta", created=200),
    node(
        5,
        "article",
        "epsilon",
        created=50,
        field_score=[{"value": "7"}],
        field_author=[{"target_uuid": "user-uuid-1"}],
        langcode=[{"value": "fr"}],
    ),
    # Not a node: the caller's list is trusted to be one type, but other types never match.
    EntityRecord("taxonomy_term", "t1", 1, "tags", "Alpha Guide", True),
]

NO_PAGER = {"type": "none", "options": {"offset": 0}}


def make_view(display_options: dict[str, Any], **displays: dict[str, Any]) -> dict[str, Any]:
    options = {"pager": NO_PAGER, **display_options}
    return {
        "id": "test_view",
        "status": True,
        "base_table": "node_field_data",
        "display": {
            "default": {"display_plugin": "default", "display_options": options},
            **{
                name: {"display_plugin": "page", "display_options": o}
                for name, o in displays.items()
            },
        },
    }


def run(view: dict[str, Any], display: str = "default", entities: Any = None) -> ViewResult:
    return execute_view("test_view", view, display, NODES if entities is None else entities)


def uuids(result: ViewResult) -> list[str]:
    return [row.uuid for row in result.rows]


FIELD_TABLES = {
    "field_score_value": "node__field_score",
    "field_tags_target_id": "node__field_tags",
    "field_author_target_id": "node__field_author",
}


def one_filter(field: str, operator: str, value: Any, plugin: str, **extra: Any) -> dict[str, Any]:
    handler = {"table": FIELD_TABLES.get(field, "node_field_data"), "field": field}
    return {
        "filters": {
            "f": {**handler, "operator": operator, "value": value, "plugin_id": plugin, **extra}
        }
    }


def filtered(field: str, operator: str, value: Any, plugin: str, **extra: Any) -> list[str]:
    return uuids(run(make_view(one_filter(field, operator, value, plugin, **extra))))


# ---------------------------------------------------------------------------- base table


@pytest.mark.parametrize(
    ("table", "entity_type"),
    [
        ("node_field_data", "node"),
        ("taxonomy_term_field_data", "taxonomy_term"),
        ("users_field_data", "user"),
        ("canvas_page", "canvas_page"),
        ("canvas_page_field_data", "canvas_page"),
    ],
)
def test_base_entity_type(table: str, entity_type: str) -> None:
    assert base_entity_type({"id": "v", "base_table": table}) == entity_type


@pytest.mark.parametrize("table", ["node", "_field_data", None, "node_revision"])
def test_base_entity_type_rejects_non_data_tables(table: Any) -> None:
    with pytest.raises(ViewError, match=r"'v'.*base_table"):
        base_entity_type({"id": "v", "base_table": table})


def test_execute_rejects_bad_base_table_naming_display() -> None:
    view = make_view({})
    view["base_table"] = "node"
    with pytest.raises(ViewError, match=r"'test_view' display 'default': base_table"):
        run(view)


# ---------------------------------------------------------------------------- results


def test_no_filters_lists_every_node_by_id_with_rows() -> None:
    result = run(make_view({}))
    assert result.view_id == "test_view"
    assert result.display_id == "default"
    assert uuids(result) == ["n1", "n2", "n3", "n4", "n5"]
    assert result.rows[0] == ViewRow(1, "n1", "Alpha Guide")
    assert result.total_rows == 5
    assert result.error is None


def test_disabled_view_still_executes() -> None:
    view = make_view(one_filter("type", "in", {"kb_doc": "kb_doc"}, "bundle"))
    view["status"] = False
    assert uuids(run(view)) == ["n4"]


# ---------------------------------------------------------------------------- string operators


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("=", "alpha GUIDE", ["n1"]),
        ("!=", "Alpha Guide", ["n2", "n3", "n4", "n5"]),
        ("contains", "GUIDE", ["n1", "n3"]),
        ("not", "guide", ["n2", "n4", "n5"]),
        ("starts", "gam", ["n3"]),
        ("not_starts", "gam", ["n1", "n2", "n4", "n5"]),
        ("ends", "NOTES", ["n2"]),
        ("not_ends", "notes", ["n1", "n3", "n4", "n5"]),
        ("word", "python delta", ["n3", "n4"]),
        ("word", '"alpha guide"', ["n1"]),
        ("word", "", ["n1", "n2", "n3", "n4", "n5"]),
        ("allwords", "guide python", ["n3"]),
        ("allwords", "guide, alpha!", ["n1"]),
        ("shorterthan", "6", ["n4"]),
        ("longerthan", 10, ["n1", "n3"]),
        ("regular_expression", "^(alpha|delta)", ["n1", "n4"]),
        ("not_regular_expression", "^(alpha|delta)", ["n2", "n3", "n5"]),
        # title is NOT NULL: Views offers no (not) empty there, so it adds no condition.
        ("empty", "", ["n1", "n2", "n3", "n4", "n5"]),
        ("not empty", "", ["n1", "n2", "n3", "n4", "n5"]),
    ],
)
def test_string_operators_on_title(operator: str, value: Any, expected: list[str]) -> None:
    assert filtered("title", operator, value, "string") == expected


def test_string_filter_on_field_table_matches_any_item() -> None:
    nodes = [
        node(1, "a", "one", field_code=[{"value": "XY-1"}, {"value": "AB-2"}]),
        node(2, "a", "two", field_code=[{"value": "AB-3"}]),
        node(3, "a", "three"),
    ]
    view = make_view(
        {
            "filters": {
                "c": {
                    "table": "node__field_code",
                    "field": "field_code_value",
                    "operator": "starts",
                    "value": "xy",
                    "plugin_id": "string",
                }
            }
        }
    )
    assert uuids(run(view, entities=nodes)) == ["n1"]
    view["display"]["default"]["display_options"]["filters"]["c"]["operator"] = "not_starts"
    # Any item that does not start with xy matches; an empty field (NULL) never does.
    assert uuids(run(view, entities=nodes)) == ["n1", "n2"]


# ---------------------------------------------------------------------------- numeric operators


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("<", {"value": "10"}, ["n1", "n5"]),  # '7' < 10 numerically, not as text
        ("<=", {"value": 10}, ["n1", "n3", "n5"]),
        ("=", {"value": "10"}, ["n3"]),
        ("=", 5, ["n1"]),
        ("!=", {"value": 10}, ["n1", "n2", "n5"]),  # the empty field (n4) is NULL
        (">=", {"value": 10}, ["n2", "n3"]),
        (">", {"value": 9}, ["n2", "n3"]),
        ("between", {"min": 6, "max": "10"}, ["n3", "n5"]),
        ("not between", {"min": 6, "max": 10}, ["n1", "n2"]),
        ("between", {"min": 10, "max": ""}, ["n2", "n3"]),
        ("between", {"min": "", "max": ""}, ["n1", "n2", "n3", "n4", "n5"]),
        ("empty", {"value": ""}, ["n4"]),
        ("not empty", {"value": ""}, ["n1", "n2", "n3", "n5"]),
        ("regular_expression", {"value": "^1"}, ["n2", "n3"]),
    ],
)
def test_numeric_operators_on_field(operator: str, value: Any, expected: list[str]) -> None:
    assert filtered("field_score_value", operator, value, "numeric") == expected


def test_numeric_operators_on_base_columns() -> None:
    assert filtered("nid", ">", {"value": "3"}, "numeric") == ["n4", "n5"]
    assert filtered("created", "<", {"value": 200}, "date") == ["n1", "n5"]


def test_date_filter_accepts_iso_dates() -> None:
    # 1970-01-01T00:03:20 UTC is timestamp 200.
    value = {"type": "date", "value": "1970-01-01T00:03:20"}
    assert filtered("created", ">=", value, "date") == ["n2", "n3", "n4"]


# ---------------------------------------------------------------------------- in operators


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("in", {"article": "article"}, ["n1", "n3", "n5"]),
        ("in", ["page", "KB_DOC"], ["n2", "n4"]),
        ("not in", {"article": "article"}, ["n2", "n4"]),
    ],
)
def test_bundle_filter(operator: str, value: Any, expected: list[str]) -> None:
    assert filtered("type", operator, value, "bundle") == expected


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("or", {10: 10}, ["n1", "n2"]),
        ("or", {20: 20}, ["n2", "n3"]),
        ("and", [10, 20], ["n2"]),
        ("not", {"10": "10"}, ["n3", "n4", "n5"]),  # "is none of": empty fields match
        # in / not in are in_operator's, not many_to_one's: Views adds no condition.
        ("in", "20", ["n1", "n2", "n3", "n4", "n5"]),
        ("not in", {10: 10}, ["n1", "n2", "n3", "n4", "n5"]),
        ("empty", None, ["n4", "n5"]),
        ("not empty", None, ["n1", "n2", "n2", "n3"]),  # one row per joined item
    ],
)
def test_many_to_one_filter(operator: str, value: Any, expected: list[str]) -> None:
    assert filtered("field_tags_target_id", operator, value, "taxonomy_index_tid") == expected


def test_reference_target_id_falls_back_to_target_uuid() -> None:
    result = filtered("field_author_target_id", "or", ["USER-UUID-1"], "entity_reference")
    assert result == ["n5"]


def test_langcode_tokens_resolve_to_site_language() -> None:
    token = "***LANGUAGE_language_content***"
    assert filtered("langcode", "in", {token: token}, "language") == ["n1", "n2", "n3", "n4"]
    assert filtered("langcode", "in", {"fr": "fr"}, "language") == ["n5"]


# ---------------------------------------------------------------------------- boolean


@pytest.mark.parametrize(
    ("field", "operator", "value", "expected"),
    [
        ("status", "=", "1", ["n1", "n3", "n4", "n5"]),
        ("status", "=", "0", ["n2"]),
        ("status", "!=", True, ["n2"]),
        ("status", "=", {"value": 1}, ["n1", "n3", "n4", "n5"]),
        # A node that never set promote holds Drupal's default, 1.
        ("promote", "=", "1", ["n1", "n3", "n4", "n5"]),
        ("promote", "!=", "1", ["n2"]),
        ("status", "=", "false", ["n1", "n3", "n4", "n5"]),  # PHP: "false" is not empty()
    ],
)
def test_boolean_filter(field: str, operator: str, value: Any, expected: list[str]) -> None:
    assert filtered(field, operator, value, "boolean") == expected


def test_boolean_filter_without_operator_defaults_to_equals() -> None:
    view = make_view(
        {
            "filters": {
                "status": {
                    "table": "node_field_data",
                    "field": "status",
                    "plugin_id": "boolean",
                    "value": "0",
                }
            }
        }
    )
    assert uuids(run(view)) == ["n2"]


def test_unknown_plugin_infers_family_from_operator() -> None:
    assert filtered("field_score_value", "between", {"min": 5, "max": 7}, "custom") == ["n1", "n5"]
    assert filtered("title", "contains", "delta", "custom") == ["n4"]


# ---------------------------------------------------------------------------- filter groups


def grouped_view(top: str, groups: dict[int, str]) -> dict[str, Any]:
    return make_view(
        {
            "filters": {
                "type": {
                    "field": "type",
                    "operator": "in",
                    "value": {"page": "page"},
                    "plugin_id": "bundle",
                    "group": 1,
                },
                "title": {
                    "field": "title",
                    "operator": "contains",
                    "value": "alpha",
                    "plugin_id": "string",
                    "group": 1,
                },
                "status": {
                    "field": "status",
                    "operator": "=",
                    "value": "1",
                    "plugin_id": "boolean",
                    "group": 2,
                },
            },
            "filter_groups": {"operator": top, "groups": groups},
        }
    )


@pytest.mark.parametrize(
    ("top", "groups", "expected"),
    [
        ("AND", {1: "OR", 2: "AND"}, ["n1"]),  # (page OR alpha) AND published
        ("OR", {1: "OR", 2: "AND"}, ["n1", "n2", "n3", "n4", "n5"]),
        ("AND", {1: "AND", 2: "AND"}, []),  # no published page titled alpha
        ("OR", {1: "AND", 2: "AND"}, ["n1", "n3", "n4", "n5"]),  # published only
    ],
)
def test_filter_groups(top: str, groups: dict[int, str], expected: list[str]) -> None:
    assert uuids(run(grouped_view(top, groups))) == expected


def test_filters_without_group_default_to_group_one_and() -> None:
    view = make_view(
        {
            "filters": {
                "type": {
                    "field": "type",
                    "operator": "in",
                    "value": ["article"],
                    "plugin_id": "bundle",
                },
                "title": {
                    "field": "title",
                    "operator": "contains",
                    "value": "guide",
                    "plugin_id": "string",
                },
            }
        }
    )
    assert uuids(run(view)) == ["n1", "n3"]


def test_or_group_without_active_filters_adds_no_condition() -> None:
    view = grouped_view("OR", {1: "AND", 2: "AND"})
    filters = view["display"]["default"]["display_options"]["filters"]
    del filters["title"]
    filters["status"].update(exposed=True, value="All")  # exposed, no input: group 2 is empty
    assert uuids(run(view)) == ["n2"]


# ---------------------------------------------------------------------------- exposed filters


@pytest.mark.parametrize(
    ("operator", "value", "plugin", "expected"),
    [
        ("contains", "", "string", ["n1", "n2", "n3", "n4", "n5"]),
        ("contains", "guide", "string", ["n1", "n3"]),
        ("in", {}, "bundle", ["n1", "n2", "n3", "n4", "n5"]),
        ("in", "All", "bundle", ["n1", "n2", "n3", "n4", "n5"]),
        ("=", "All", "boolean", ["n1", "n2", "n3", "n4", "n5"]),
        ("between", {"min": "", "max": "", "value": ""}, "numeric", ["n1", "n2", "n3", "n4", "n5"]),
        ("empty", "", "string", ["n1", "n2", "n3", "n4", "n5"]),  # title is NOT NULL
    ],
)
def test_exposed_filters_without_input(
    operator: str, value: Any, plugin: str, expected: list[str]
) -> None:
    field = {"string": "title", "bundle": "type", "boolean": "status"}.get(plugin, "nid")
    assert filtered(field, operator, value, plugin, exposed=True) == expected


def test_grouped_exposed_filter_uses_default_group() -> None:
    info: dict[str, Any] = {
        "default_group": "All",
        "group_items": {
            1: {"title": "Docs", "operator": "in", "value": {"kb_doc": "kb_doc"}},
            2: {"title": "Pages", "operator": "not in", "value": {"article": "article"}},
        },
    }
    extra = {"exposed": True, "is_grouped": True, "group_info": info}
    assert filtered("type", "in", {}, "bundle", **extra) == ["n1", "n2", "n3", "n4", "n5"]
    info["default_group"] = "2"
    assert filtered("type", "in", {}, "bundle", **extra) == ["n2", "n4"]
    info["default_group"] = 7
    with pytest.raises(ViewError, match=r"filters\.f\.group_info\.default_group"):
        filtered("type", "in", {}, "bundle", **extra)


def typed(field: str, operator: str, value: Any, plugin: str, exposed: dict[str, str],
          **expose: Any) -> list[str]:
    """The rows a visitor who typed ``exposed`` gets from one exposed filter (identifier q)."""
    view = make_view(one_filter(field, operator, value, plugin, exposed=True,
                                expose={"identifier": "q", "operator_id": "q_op", **expose}))
    return uuids(execute_view("test_view", view, "default", NODES, exposed=exposed))


@pytest.mark.parametrize(
    ("field", "operator", "plugin", "input", "expected"),
    [
        ("title", "contains", "string", {"q": "guide"}, ["n1", "n3"]),
        ("title", "not", "string", {"q": "guide"}, ["n2", "n4", "n5"]),  # the inverse
        ("field_score_value", ">=", "numeric", {"q": "10"}, ["n2", "n3"]),
        ("type", "in", "bundle", {"q": "kb_doc"}, ["n4"]),
        ("type", "in", "bundle", {"q": "All"}, ["n1", "n2", "n3", "n4", "n5"]),  # "- Any -"
        ("title", "contains", "string", {"q": ""}, ["n1", "n2", "n3", "n4", "n5"]),  # left empty
        ("title", "contains", "string", {"other": "guide"}, ["n1", "n2", "n3", "n4", "n5"]),
    ],
)
def test_exposed_filters_read_what_the_visitor_typed(
    field: str, operator: str, plugin: str, input: dict[str, str], expected: list[str]
) -> None:
    assert typed(field, operator, "", plugin, input) == expected


def test_an_exposed_operator_is_read_only_when_the_filter_exposes_it() -> None:
    given = {"q": "guide", "q_op": "not"}
    assert typed("title", "contains", "", "string", given) == ["n1", "n3"]
    assert typed("title", "contains", "", "string", given, use_operator=True) == \
        ["n2", "n4", "n5"]


def test_a_grouped_exposed_filter_reads_the_visitors_choice() -> None:
    info: dict[str, Any] = {"identifier": "kind", "default_group": "All", "group_items": {
        1: {"title": "Docs", "operator": "in", "value": {"kb_doc": "kb_doc"}}}}
    view = make_view(one_filter("type", "in", {}, "bundle", exposed=True, is_grouped=True,
                                group_info=info))
    assert uuids(execute_view("test_view", view, "default", NODES, exposed={"kind": "1"})) == ["n4"]
    assert len(uuids(execute_view("test_view", view, "default", NODES))) == 5


# ---------------------------------------------------------------------------- sorts


def sorted_by(*sorts: tuple[str, str], entities: Any = None, table: str = "") -> list[str]:
    config = {
        f"s{i}": {"table": table or "node_field_data", "field": field, "order": order}
        for i, (field, order) in enumerate(sorts)
    }
    return uuids(run(make_view({"sorts": config}), entities=entities))


def test_multiple_sorts_apply_in_order() -> None:
    # n3 and n4 share created=200; the title sort breaks the tie (Delta before Gamma).
    assert sorted_by(("created", "DESC"), ("title", "ASC")) == ["n2", "n4", "n3", "n1", "n5"]
    assert sorted_by(("created", "DESC"), ("title", "DESC")) == ["n2", "n3", "n4", "n1", "n5"]


def test_ties_follow_the_last_sort_direction_and_are_reported() -> None:
    # The order inside a tie is the database's; MariaDB gave ascending ids under an ascending
    # sort and descending ids under a descending one, and the result names the tied runs.
    assert sorted_by(("type", "ASC")) == ["n1", "n3", "n5", "n4", "n2"]
    assert sorted_by(("type", "DESC")) == ["n2", "n4", "n5", "n3", "n1"]
    view = make_view({"sorts": {"s": {"table": "node_field_data", "field": "type"}}})
    assert run(view).ties == ((0, 3),)


def test_missing_values_sort_first_ascending_and_numbers_numerically() -> None:
    table = "node__field_score"
    assert sorted_by(("field_score_value", "ASC"), table=table) == ["n4", "n1", "n5", "n3", "n2"]
    assert sorted_by(("field_score_value", "DESC"), table=table) == ["n2", "n3", "n5", "n1", "n4"]


def test_labels_sort_as_case_insensitive_text() -> None:
    nodes = [node(1, "a", "b"), node(2, "a", "9"), node(3, "a", "A"), node(4, "a", "10")]
    assert sorted_by(("title", "ASC"), entities=nodes) == ["n4", "n2", "n3", "n1"]


def test_sort_order_defaults_to_ascending() -> None:
    view = make_view({"sorts": {"c": {"table": "node_field_data", "field": "created"}}})
    assert uuids(run(view)) == ["n5", "n1", "n3", "n4", "n2"]


# ---------------------------------------------------------------------------- pager


@pytest.mark.parametrize(
    ("pager", "expected", "total"),
    [
        ({"type": "full", "options": {"items_per_page": 2, "offset": 1}}, ["n2", "n3"], 4),
        # mini fetches one row past the page; some reports the rows it returned.
        ({"type": "mini", "options": {"items_per_page": "3", "offset": 0}}, ["n1", "n2", "n3"], 4),
        ({"type": "some", "options": {"items_per_page": 2}}, ["n1", "n2"], 2),
        ({"type": "none", "options": {"offset": 2}}, ["n3", "n4", "n5"], 3),
        ({"type": "none", "options": {"items_per_page": 1}}, ["n1", "n2", "n3", "n4", "n5"], 5),
        ({"type": "full", "options": {"items_per_page": 0, "offset": 4}}, ["n5"], 1),
        ({"type": "full", "options": {"items_per_page": 5, "offset": 9}}, [], 0),
    ],
)
def test_pager(pager: dict[str, Any], expected: list[str], total: int) -> None:
    result = run(make_view({"pager": pager}))
    assert uuids(result) == expected
    assert result.total_rows == total


@pytest.mark.parametrize(
    ("pager_type", "expected"),
    [("full", ["n3", "n4"]), ("mini", ["n3", "n4"]),
     # No links, no page: some and none show what they show on the first visit.
     ("some", ["n1", "n2"]), ("none", ["n1", "n2", "n3", "n4", "n5"])],
)
def test_the_pagers_page_moves_the_window_only_for_a_pager_with_links(
        pager_type: str, expected: list[str]) -> None:
    view = make_view({"pager": {"type": pager_type, "options": {"items_per_page": 2, "offset": 0}}})
    assert uuids(execute_view("test_view", view, "default", NODES, pager_page=1)) == expected


def test_missing_pager_defaults_to_ten_items() -> None:
    nodes = [node(n, "a", f"t{n}") for n in range(1, 13)]
    view = make_view({})
    del view["display"]["default"]["display_options"]["pager"]
    result = run(view, entities=nodes)
    assert uuids(result) == [f"n{n}" for n in range(1, 11)]
    assert result.total_rows == 11  # the default pager is mini: a page and one more


def test_pager_applies_after_filter_and_sort() -> None:
    view = make_view(
        {
            **one_filter("type", "in", {"article": "article"}, "bundle"),
            "sorts": {"c": {"field": "created", "order": "DESC"}},
            "pager": {"type": "full", "options": {"items_per_page": 1, "offset": 1}},
        }
    )
    result = run(view)
    assert uuids(result) == ["n1"]
    assert result.total_rows == 2


# ---------------------------------------------------------------------------- displays


def display_view() -> dict[str, Any]:
    return make_view(
        {
            **one_filter("type", "in", {"article": "article"}, "bundle"),
            "sorts": {"created": {"field": "created", "order": "DESC"}},
        },
        page_1={"path": "articles"},
        page_2={
            "defaults": {"filters": False, "filter_groups": False},
            "filters": {"s": {"field": "status", "value": "0", "plugin_id": "boolean"}},
        },
        page_3={"defaults": {"sorts": False}},
        feed_1={"pager": {"type": "some", "options": {"items_per_page": 1}}},
        feed_2={"defaults": {"pager": False},
                "pager": {"type": "some", "options": {"items_per_page": 1}}},
    )


@pytest.mark.parametrize(
    ("display", "expected"),
    [
        ("default", ["n3", "n1", "n5"]),
        ("page_1", ["n3", "n1", "n5"]),  # inherits everything
        ("page_2", ["n2"]),  # own filters, inherited sort
        ("page_3", ["n1", "n3", "n5"]),  # sorts overridden to nothing: id order
        ("feed_1", ["n3", "n1", "n5"]),  # a pager without defaults.pager: false is ignored
        ("feed_2", ["n3"]),  # own pager only
    ],
)
def test_display_override_and_inherit(display: str, expected: list[str]) -> None:
    result = run(display_view(), display)
    assert result.display_id == display
    assert uuids(result) == expected


def test_unknown_display_lists_known_ones() -> None:
    with pytest.raises(ViewError, match=r"'page_9'.*default, page_1, page_2, page_3, feed_1, feed_2"):
        run(display_view(), "page_9")


def test_view_without_default_display() -> None:
    view = {"id": "x", "base_table": "node_field_data", "display": {"page_1": {}}}
    with pytest.raises(ViewError, match=r"display\.default"):
        run(view, "page_1")


# ---------------------------------------------------------------------------- wrong values


def test_valid_config_with_wrong_filter_value_gives_wrong_rows() -> None:
    right = make_view(one_filter("type", "in", {"article": "article"}, "bundle"))
    typo = make_view(one_filter("type", "in", {"articel": "articel"}, "bundle"))
    inverted = make_view(one_filter("status", "=", "0", "boolean"))
    assert uuids(run(right)) == ["n1", "n3", "n5"]
    assert uuids(run(typo)) == []
    assert uuids(run(inverted)) == ["n2"]


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("options", "pattern"),
    [
        (
            one_filter("foo", "=", "x", "string"),
            r"filters\.f\.field: unknown field node_field_data\.foo",
        ),
        (one_filter("title", "regular_expression", "(", "string"), r"filters\.f\.value: invalid"),
        (one_filter("title", "shorterthan", "abc", "string"), r"filters\.f\.value: .*whole number"),
        (one_filter("created", ">", {"type": "offset", "value": "-1 day"}, "date"), r"offsets"),
        (one_filter("title", "=", "x", "string", relationship="uid"), r"filters\.f\.relationship"),
        (
            {"filters": {"f": {"table": "users_field_data", "field": "name", "value": "x"}}},
            r"unknown field users_field_data\.name",
        ),
        (
            {"filters": {"f": {"table": "node__field_tags", "field": "other_value", "value": 1}}},
            r"unknown field node__field_tags\.other_value",
        ),
        (
            {"filters": {"f": {"table": "node_field_data", "value": 1}}},
            r"filters\.f\.field: missing",
        ),
        ({"filters": ["not", "a", "mapping"]}, r"filters: expected a mapping"),
        (
            {"filters": {"f": {"field": "title", "operator": ["="], "plugin_id": "x"}}},
            r"filters\.f\.operator: unknown operator \['='\]",
        ),
        ({"sorts": {"s": {"field": "random", "table": "views"}}}, r"sorts\.s\.field: unknown"),
        ({"pager": {"type": "full", "options": {"items_per_page": -1}}}, r"items_per_page"),
        ({"pager": {"type": "full", "options": {"offset": "x"}}}, r"pager\.options\.offset"),
        ({"filter_groups": {"operator": "XOR", "groups": {1: "AND"}}}, r"filter_groups\.operator"),
        ({"filter_groups": {"operator": "AND", "groups": {1: "NAND"}}}, r"groups\.1"),
        (
            {"arguments": {"nid": {"field": "nid", "default_action": "default",
                                   "default_argument_type": "node"}}},
            r"arguments\.nid\.default_argument_type: default argument 'node' is not supported",
        ),
        (
            {"arguments": {"nid": {"field": "nid", "default_action": "summary"}}},
            r"default action 'summary' is not supported",
        ),
    ],
)
def test_view_errors_name_view_display_and_key(options: dict[str, Any], pattern: str) -> None:
    # Validation happens before any entity is read, so an empty site fails the same way.
    for entities in (NODES, []):
        with pytest.raises(ViewError, match=r"view 'test_view' display 'default': ") as caught:
            run(make_view(options), entities=entities)
        assert caught.match(pattern)


def test_ignored_arguments_do_not_limit_rows() -> None:
    arguments = {
        "nid": {"field": "nid", "default_action": "ignore", "default_argument_type": "fixed"}
    }
    assert uuids(run(make_view({"arguments": arguments}))) == ["n1", "n2", "n3", "n4", "n5"]


def test_errors_name_the_overriding_display() -> None:
    view = display_view()
    view["display"]["page_2"]["display_options"]["filters"]["s"]["field"] = "unknowable"
    assert uuids(run(view, "page_1")) == ["n3", "n1", "n5"]
    with pytest.raises(ViewError, match=r"display 'page_2': filters\.s\.field: unknown"):
        run(view, "page_2")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # Operators the plugin lacks, and in-operator filters without values: no condition.
        (one_filter("title", "like", "x", "string"), ["n1", "n2", "n3", "n4", "n5"]),
        (one_filter("title", "between", {"min": 1}, "string"), ["n1", "n2", "n3", "n4", "n5"]),
        (one_filter("type", "in", {}, "bundle"), ["n1", "n2", "n3", "n4", "n5"]),
        # Any order but DESC is ASC, as the database layer reads it.
        ({"sorts": {"s": {"field": "title", "order": "UP"}}}, ["n1", "n2", "n4", "n5", "n3"]),
    ],
)
def test_what_drupal_drops_lists_every_row(options: dict[str, Any], expected: list[str]) -> None:
    assert uuids(run(make_view(options))) == expected


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"pager": {"type": "infinite"}}, 'PluginNotFoundException: The "infinite" plugin does not'
                                          " exist. Valid plugin IDs for"),
        (one_filter("created", ">", "yesterday", "date"), "TypeError: Cannot access offset of"
                                                          " type string on string"),
        (one_filter("nid", "=", "3", "numeric"), "TypeError: Cannot access offset"),
    ],
)
def test_what_drupal_throws_is_an_exception_outcome(options: dict[str, Any], error: str) -> None:
    result = run(make_view(options))
    assert result.outcome == "exception" and result.rows == ()
    assert result.error is not None and error in result.error


@pytest.mark.parametrize(
    ("arguments", "handler", "expected", "outcome"),
    [
        ((), {"default_action": "ignore"}, ["n1", "n2", "n3", "n4", "n5"], "rows"),
        ((), {"default_action": "empty"}, [], "rows"),
        ((), {"default_action": "not found"}, [], "not served (404)"),
        ((), {"default_action": "access denied"}, [], "not served (403)"),
        ((), {"default_action": "default", "default_argument_type": "fixed",
              "default_argument_options": {"argument": "3"}}, ["n3"], "rows"),
        (("2+4",), {"break_phrase": True}, ["n2", "n4"], "rows"),
        (("2,4",), {"break_phrase": True}, ["n2", "n4"], "rows"),
        (("2+4",), {}, ["n2"], "rows"),  # MySQL reads '2+4' as 2
        (("2",), {"not": True}, ["n1", "n3", "n4", "n5"], "rows"),
        (("all",), {}, ["n1", "n2", "n3", "n4", "n5"], "rows"),  # the exception value
        (("x",), {"specify_validation": True, "validate": {"type": "numeric"}}, [],
         "not served (404)"),
    ],
)
def test_contextual_filter_on_nid(arguments: tuple[str, ...], handler: dict[str, Any],
                                  expected: list[str], outcome: str) -> None:
    options = {"arguments": {"nid": {"table": "node_field_data", "field": "nid",
                                     "plugin_id": "node_nid", **handler}}}
    result = execute_view("test_view", make_view(options), "default", NODES, arguments=arguments)
    assert (uuids(result), result.outcome) == (expected, outcome)


def test_title_argument_compares_text_case_insensitively() -> None:
    options = {"arguments": {"title": {"table": "node_field_data", "field": "title",
                                       "plugin_id": "string"}}}
    result = execute_view("test_view", make_view(options), "default", NODES, arguments=("DELTA",))
    assert uuids(result) == ["n4"]


def test_bare_field_column_reads_the_main_property() -> None:
    nodes = [
        node(1, "a", "one", field_link=[{"uri": "https://example.com/docs", "title": "Docs"}]),
        node(2, "a", "two", field_link=[{"uri": "internal:/node/1", "title": "example"}]),
    ]
    view = make_view(
        {
            "filters": {
                "l": {
                    "table": "node__field_link",
                    "field": "field_link",
                    "operator": "contains",
                    "value": "EXAMPLE",
                    "plugin_id": "string",
                }
            }
        }
    )
    assert uuids(run(view, entities=nodes)) == ["n1"]
