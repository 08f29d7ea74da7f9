"""Applying recipes to the embedded site: order, config actions, default content, rollback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import ContentSelector, CountQuery, StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]
MakeRecipe = Callable[..., Path]
MakeModule = Callable[..., Path]

# Fixed UUIDs so file names, import order and ids are predictable.
U_TERM = "10000000-0000-4000-8000-000000000001"
U_GUIDE = "20000000-0000-4000-8000-000000000001"  # references U_INTRO and U_TERM
U_INTRO = "90000000-0000-4000-8000-000000000001"  # sorts last by uuid, must import first
U_NEWS_1 = "30000000-0000-4000-8000-000000000001"
U_NEWS_2 = "30000000-0000-4000-8000-000000000002"


def node_doc(uuid: str, bundle: str, title: str, depends: dict[str, str] | None = None,
             **fields: list[dict[str, Any]]) -> dict[str, Any]:
    """A content file in core's default-content format."""
    meta: dict[str, Any] = {"version": "1.0", "entity_type": "node", "uuid": uuid,
                            "bundle": bundle, "default_langcode": "en"}
    if depends:
        meta["depends"] = depends
    return {"_meta": meta, "default": {"title": [{"value": title}], **fields}}


def as_given(stored: Any, given: dict[str, Any]) -> bool:
    """The keys a recipe's file gave are stored as given (Drupal fills in the rest: see
    test_recipe_config_defaults)."""
    return isinstance(stored, dict) and {k: stored.get(k) for k in given} == given


def entity_count(driver: EmbeddedSite) -> int:
    answer = driver.read_state(StateQuery(counts=(CountQuery("node"),
                                                  CountQuery("taxonomy_term"))))
    return sum(answer.counts)


def applied(result: tuple[int, str, str]) -> str:
    rc, out, err = result
    assert rc == 0, err
    assert out == ""
    return err


# ---------------------------------------------------------------------------- failures roll back


@pytest.fixture
def good_sub(make_recipe: MakeRecipe) -> Path:
    """A sub-recipe that succeeds: it writes config the failing parent must roll back."""
    return make_recipe("good_sub", """\
        name: Good sub-recipe
        config:
          actions:
            system.site:
              simpleConfigUpdate:
                slogan: 'written by the sub-recipe'
        """, {"config/node.type.from_sub.yml": {"type": "from_sub", "name": "From sub"}})


FAILURES: dict[str, tuple[str, dict[str, Any], str, str, list[str]]] = {
    # case: (recipe.yml, files, token, file that must be named, message fragments)
    "unknown recipe key": (
        "name: Bad\nrecipes: [good_sub]\nbogus: 1\n", {}, "APG_RECIPE_INVALID", "recipe.yml",
        ["$.bogus", "unknown key 'bogus'"]),
    "unknown config action": (
        "name: Bad\nrecipes: [good_sub]\nconfig:\n  actions:\n    system.site:\n"
        "      frobnicate: {a: 1}\n",
        {}, "APG_RECIPE_FAILED", "recipe.yml",
        ["config.actions.system.site", "unknown config action 'frobnicate'"]),
    "missing module": (
        "name: Bad\nrecipes: [good_sub]\ninstall: [options, nosuchmod]\n", {},
        "APG_RECIPE_FAILED", "recipe.yml", ["install", "module nosuchmod", "not on disk"]),
    "undefined bundle": (
        "name: Bad\nrecipes: [good_sub]\n",
        {f"content/node/{U_NEWS_1}.yml": node_doc(U_NEWS_1, "page", "Fine page"),
         f"content/node/{U_NEWS_2}.yml": node_doc(U_NEWS_2, "blog", "No such bundle")},
        "APG_RECIPE_FAILED", f"content/node/{U_NEWS_2}.yml",
        ["APG_ENTITY_INVALID", "bundle 'blog' does not exist", "node.type.blog"]),
    # Core's default-content importer calls $entity->get() per field: "Field ... is unknown."
    "undefined field": (
        "name: Bad\nrecipes: [good_sub]\n",
        {f"content/node/{U_NEWS_1}.yml": node_doc(U_NEWS_1, "page", "Fine page",
                                                  field_nope=[{"value": "x"}])},
        "APG_RECIPE_FAILED", f"content/node/{U_NEWS_1}.yml",
        ["APG_ENTITY_INVALID", "field 'field_nope' is not defined on node bundle page"]),
    "strict config conflict": (
        "name: Bad\nrecipes: [good_sub]\n",
        {"config/system.site.yml": {"name": "Other", "mail": "x@example.com"}},
        "APG_RECIPE_FAILED", "config/system.site.yml",
        ["APG_RECIPE_PREEXISTING_CONFIG", "system.site already exists", "config.strict: false"]),
    # A field storage whose type is a mapping, not a type id (found by tests/fuzz): refused by
    # name, never a crash inside the importer.
    "field storage type not a type id": (
        "name: Bad\nrecipes: [good_sub]\n",
        {"config/field.storage.node.field_x.yml": {"field_name": "field_x", "entity_type": "node",
                                                   "type": {"a": 1}}},
        "APG_RECIPE_FAILED", "config/field.storage.node.field_x.yml", ["APG_CONFIG_INVALID"]),
    "invalid config in recipe": (
        "name: Bad\nrecipes: [good_sub]\n",
        {"config/node.type.wrong.yml": {"type": "right", "name": "Wrong"}},
        "APG_RECIPE_FAILED", "config/node.type.wrong.yml",
        ["APG_CONFIG_INVALID", "type must be 'wrong'"]),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_failed_recipe_names_the_file_and_leaves_the_site_as_it_was(
    case: str, content_bed: Path, site: Site, make_recipe: MakeRecipe, good_sub: Path
) -> None:
    recipe_yml, files, token, named, fragments = FAILURES[case]
    recipe = make_recipe("bad", recipe_yml, files)
    driver = EmbeddedSite(content_bed)
    before = driver.all_config()

    rc, out, err = site(content_bed, "recipe", str(recipe))
    assert (rc, out) == (1, "")
    assert err.startswith(f"{token} {recipe / named}"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert "Traceback" not in err
    assert driver.all_config() == before
    assert entity_count(driver) == 0
    # The good sub-recipe alone still applies: the failure was the parent's.
    applied(site(content_bed, "recipe", str(good_sub)))
    assert as_given(driver.config_get("node.type.from_sub"), {"type": "from_sub",
                                                              "name": "From sub"})


def test_a_non_recipe_directory_is_refused(bed: Path, site: Site, tmp_path: Path) -> None:
    rc, _, err = site(bed, "recipe", str(tmp_path))
    assert rc == 1
    assert err.startswith(f"APG_RECIPE_INVALID {tmp_path}: not a recipe")


# ---------------------------------------------------------------------------- order and actions


def test_sub_recipes_apply_first_and_the_report_lists_what_happened(
    bed: Path, make_recipe: MakeRecipe, site: Site
) -> None:
    make_recipe("types", """\
        name: Types
        install: [options]
        """, {"config/node.type.kb.yml": {"type": "kb", "name": "KB"}})
    parent = make_recipe("kb", """\
        name: Knowledge base
        recipes: [types]
        config:
          actions:
            node.type.kb:
              simpleConfigUpdate:
                description: 'Set by the parent, after the sub-recipe made it'
        """, {f"content/node/{U_NEWS_1}.yml": node_doc(U_NEWS_1, "kb", "First doc")})
    driver = EmbeddedSite(bed)
    report = driver.apply_recipe(parent)
    assert report.recipe == "Knowledge base"
    assert report.modules_installed == ()  # options is in the base stack already
    assert report.config_written == ("node.type.kb",)
    assert report.content_created == (U_NEWS_1,)
    assert report.content_skipped == ()
    assert as_given(driver.config_get("node.type.kb"), {
        "type": "kb", "name": "KB",
        "description": "Set by the parent, after the sub-recipe made it"})

    # The sub-recipe ran first: applying it again now finds its config changed by the parent.
    rc, _, err = site(bed, "recipe", str(parent.parent / "types"))
    assert rc == 1
    assert "APG_RECIPE_PREEXISTING_CONFIG recipe config node.type.kb already exists" in err


def test_sub_recipes_by_drupal_root_path_and_cycles(bed: Path, make_recipe: MakeRecipe,
                                                    site: Site) -> None:
    make_recipe("shared", "name: Shared\n", {"config/node.type.shared.yml":
                                              {"type": "shared", "name": "Shared"}},
                root=bed / "recipes")
    top = make_recipe("top", "name: Top\nrecipes: [../recipes/shared]\n")
    applied(site(bed, "recipe", str(top)))
    assert EmbeddedSite(bed).config_get("node.type.shared") is not None

    make_recipe("ping", "name: Ping\nrecipes: [pong]\n")
    make_recipe("pong", "name: Pong\nrecipes: [ping]\n")
    rc, _, err = site(bed, "recipe", str(top.parent / "ping"))
    assert rc == 1
    assert err.startswith("APG_RECIPE_INVALID "), err
    assert "cycle (ping -> pong -> ping)" in err


def test_config_actions_simple_update_create_if_not_exists_and_optional_targets(
    bed: Path, make_recipe: MakeRecipe
) -> None:
    driver = EmbeddedSite(bed)
    driver.apply_recipe(make_recipe("pre", "name: Pre\n", {
        "config/node.type.existing.yml": {"type": "existing", "name": "Existing"}}))
    recipe = make_recipe("actions", """\
        name: Actions
        config:
          actions:
            system.site:
              simpleConfigUpdate:
                slogan: 'Proving things'
                page.front: /kb
            node.type.kb:
              createIfNotExists:
                name: KB
            node.type.existing:
              createIfNotExists:
                name: Not applied, it exists
            ?node.type.ghost:
              simpleConfigUpdate:
                name: Never
            ?node.type.phantom:
              createIfNotExists:
                name: Never either
            ?node.type.existing:
              setProperties:
                description: 'optional target that exists'
        """)
    report = driver.apply_recipe(recipe)
    assert report.config_written == ("system.site", "node.type.kb", "node.type.existing")
    site_config = driver.config_get("system.site")
    assert site_config["slogan"] == "Proving things"
    assert site_config["page"] == {"403": "", "404": "", "front": "/kb"}
    # Core's createIfNotExists takes the id from the config name.
    assert driver.config_get("node.type.kb") == {"name": "KB", "type": "kb"}
    assert as_given(driver.config_get("node.type.existing"), {
        "type": "existing", "name": "Existing", "description": "optional target that exists"})
    assert driver.read_state(StateQuery(config=("node.type.ghost", "node.type.phantom"))).config \
        == {"node.type.ghost": None, "node.type.phantom": None}

    # Applying again changes nothing: createIfNotExists is idempotent.
    before = driver.all_config()
    driver.apply_recipe(recipe)
    assert driver.all_config() == before

    # Without the '?', a missing target is an error.
    strict = make_recipe("strict_target", """\
        name: Strict target
        config:
          actions:
            node.type.ghost:
              simpleConfigUpdate:
                name: Boom
        """)
    with pytest.raises(ApgError) as info:
        driver.apply_recipe(strict)
    assert info.value.token == "APG_RECIPE_FAILED"
    assert str(strict / "recipe.yml") in info.value.message
    assert "simpleConfigUpdate needs node.type.ghost to exist" in info.value.message
    create_twice = make_recipe("create_twice", """\
        name: Create twice
        config:
          actions:
            node.type.kb:
              create:
                name: KB again
        """)
    with pytest.raises(ApgError, match=r"create: node\.type\.kb already exists"):
        driver.apply_recipe(create_twice)
    assert driver.all_config() == before


def test_config_import_from_a_module(bed: Path, make_recipe: MakeRecipe,
                                     make_module: MakeModule) -> None:
    make_module(bed, "kbmod", {"version": "1.0.0", "dependencies": ["drupal:node"]}, {
        "install/kbmod.settings": {"per_page": 10},
        "optional/node.type.kb_page": {"type": "kb_page", "name": "KB page"},
        "optional/node.type.kb_other": {"type": "kb_other", "name": "KB other"},
    })
    driver = EmbeddedSite(bed)
    picked = make_recipe("picked", """\
        name: Picked
        install: [kbmod]
        config:
          import:
            kbmod:
              - node.type.kb_page
        """)
    report = driver.apply_recipe(picked)
    assert report.modules_installed == ("kbmod",)
    assert report.config_written == ("node.type.kb_page",)
    found = driver.read_state(StateQuery(config=(
        "kbmod.settings", "node.type.kb_page", "node.type.kb_other"))).config
    assert found["kbmod.settings"] == {"per_page": 10} and found["node.type.kb_other"] is None
    assert as_given(found["node.type.kb_page"], {"type": "kb_page", "name": "KB page"})

    everything = make_recipe("everything", "name: All\nconfig:\n  import:\n    kbmod: '*'\n")
    assert driver.apply_recipe(everything).config_written == ("node.type.kb_other",)
    assert as_given(driver.config_get("node.type.kb_other"), {"type": "kb_other",
                                                              "name": "KB other"})

    missing = make_recipe("missing", "name: Missing\nconfig:\n  import:\n    nomod: '*'\n")
    with pytest.raises(ApgError) as info:
        driver.apply_recipe(missing)
    assert info.value.token == "APG_RECIPE_FAILED"
    assert f"{missing / 'recipe.yml'}: config.import.nomod: APG_MODULE_MISSING" in str(info.value)


def test_recipe_config_files_win_over_module_config_and_strict_false_keeps_active(
    bed: Path, make_recipe: MakeRecipe
) -> None:
    driver = EmbeddedSite(bed)
    lenient = make_recipe("lenient", """\
        name: Lenient
        config:
          strict: false
        """, {"config/system.site.yml": {"name": "Ignored", "mail": "x@example.com"},
              "config/node.type.fresh.yml": {"type": "fresh", "name": "Fresh"}})
    before = driver.config_get("system.site")
    assert driver.apply_recipe(lenient).config_written == ("node.type.fresh",)
    assert driver.config_get("system.site") == before

    listed = make_recipe("listed", """\
        name: Listed strict
        config:
          strict: [node.type.fresh]
        """, {"config/system.site.yml": {"name": "Ignored too"},
              "config/node.type.fresh.yml": {"type": "fresh", "name": "Changed"}})
    with pytest.raises(ApgError, match=r"node\.type\.fresh already exists with other values"):
        driver.apply_recipe(listed)
    assert as_given(driver.config_get("node.type.fresh"), {"type": "fresh", "name": "Fresh"})


# ---------------------------------------------------------------------------- default content


def content_recipe(make_recipe: MakeRecipe, name: str, docs: dict[str, dict[str, Any]],
                   config: dict[str, Any] | None = None) -> Path:
    files: dict[str, Any] = {f"content/{d['_meta']['entity_type']}/{u}.yml": d
                             for u, d in docs.items()}
    files.update({f"config/{n}.yml": data for n, data in (config or {}).items()})
    return make_recipe(name, f"name: {name}\n", files)


def test_default_content_keeps_uuids_and_is_not_duplicated(
    content_bed: Path, make_recipe: MakeRecipe, site: Site
) -> None:
    recipe = content_recipe(make_recipe, "news", {
        U_NEWS_1: node_doc(U_NEWS_1, "article", "News one", field_topic=[{"value": "news"}],
                           field_rank=[{"value": 2}], field_tags=[{"value": "a"}, {"value": "b"}]),
        U_NEWS_2: node_doc(U_NEWS_2, "article", "News two", field_topic=[{"value": "news"}]),
    })
    err = applied(site(content_bed, "recipe", str(recipe)))
    assert err == ("APG_SITE_OK [success] news applied: 0 modules installed, 0 config objects written, "
                   "2 entities created, 0 skipped (already present).\n")
    err = applied(site(content_bed, "recipe", str(recipe)))
    assert err == ("APG_SITE_OK [success] news applied: 0 modules installed, 0 config objects written, "
                   "0 entities created, 2 skipped (already present).\n")

    listing = json.loads(applied_out(site(content_bed, "entity:list", "node", "--format=json")))
    assert listing == {
        "1": {"id": 1, "uuid": U_NEWS_1, "bundle": "article", "label": "News one",
              "status": True},
        "2": {"id": 2, "uuid": U_NEWS_2, "bundle": "article", "label": "News two",
              "status": True}}
    record = EmbeddedSite(content_bed).entities([U_NEWS_1])[U_NEWS_1]
    assert record is not None
    assert record.fields == {"field_topic": [{"value": "news"}], "field_rank": [{"value": 2}],
                             "field_tags": [{"value": "a"}, {"value": "b"}]}

    # Skipped means skipped: a changed file does not update the existing entity.
    changed = content_recipe(make_recipe, "news_changed", {
        U_NEWS_1: node_doc(U_NEWS_1, "article", "Renamed", field_topic=[{"value": "kb"}])})
    report = EmbeddedSite(content_bed).apply_recipe(changed)
    assert (report.content_created, report.content_skipped) == ((), (U_NEWS_1,))
    assert EmbeddedSite(content_bed).entities([U_NEWS_1])[U_NEWS_1] == record


def applied_out(result: tuple[int, str, str]) -> str:
    rc, out, err = result
    assert rc == 0, err
    return out


def test_serial_ids_depend_on_import_order_but_uuids_and_labels_do_not(
    template_content_bed: Path, tmp_path: Path, make_recipe: MakeRecipe
) -> None:
    first = content_recipe(make_recipe, "first", {
        U_NEWS_1: node_doc(U_NEWS_1, "page", "Page one"),
        U_NEWS_2: node_doc(U_NEWS_2, "page", "Page two")})
    second = content_recipe(make_recipe, "second", {
        U_GUIDE: node_doc(U_GUIDE, "page", "Guide"),
        U_INTRO: node_doc(U_INTRO, "page", "Intro")})
    beds: list[dict[str, tuple[int, str]]] = []
    for index, order in enumerate(((first, second), (second, first))):
        approot = tmp_path / f"bed{index}"
        shutil.copytree(template_content_bed, approot, symlinks=True)
        driver = EmbeddedSite(approot)
        for recipe in order:
            driver.apply_recipe(recipe)
        with driver.session() as store:
            beds.append({r.uuid: (r.id, r.label) for r in store.entities_of("node")})
    one, two = beds
    assert one == {U_NEWS_1: (1, "Page one"), U_NEWS_2: (2, "Page two"),
                   U_GUIDE: (3, "Guide"), U_INTRO: (4, "Intro")}
    assert two == {U_GUIDE: (1, "Guide"), U_INTRO: (2, "Intro"),
                   U_NEWS_1: (3, "Page one"), U_NEWS_2: (4, "Page two")}
    assert {u: label for u, (_, label) in one.items()} == \
        {u: label for u, (_, label) in two.items()}


def test_references_by_uuid_resolve_and_depends_orders_the_import(
    bed: Path, make_recipe: MakeRecipe, site: Site
) -> None:
    config = {
        "taxonomy.vocabulary.topics": {"vid": "topics", "name": "Topics"},
        "node.type.doc": {"type": "doc", "name": "Doc"},
        "field.storage.node.field_category": {
            "entity_type": "node", "field_name": "field_category", "type": "entity_reference",
            "cardinality": 1, "settings": {"target_type": "taxonomy_term"}},
        "field.field.node.doc.field_category": {
            "entity_type": "node", "bundle": "doc", "field_name": "field_category",
            "label": "Category"},
        "field.storage.node.field_see_also": {
            "entity_type": "node", "field_name": "field_see_also", "type": "entity_reference",
            "cardinality": -1, "settings": {"target_type": "node"}},
        "field.field.node.doc.field_see_also": {
            "entity_type": "node", "bundle": "doc", "field_name": "field_see_also",
            "label": "See also"},
    }
    term = {"_meta": {"version": "1.0", "entity_type": "taxonomy_term", "uuid": U_TERM,
                      "bundle": "topics", "default_langcode": "en"},
            "default": {"name": [{"value": "Getting started"}]}}
    docs = {
        # The guide sorts first by type and uuid; only its references put it last.
        U_GUIDE: node_doc(U_GUIDE, "doc", "Guide", depends={U_TERM: "taxonomy_term",
                                                            U_INTRO: "node"},
                          field_category=[{"entity": U_TERM}],
                          field_see_also=[{"entity": U_INTRO}]),
        U_INTRO: node_doc(U_INTRO, "doc", "Intro"),
        U_TERM: term,
    }
    recipe = content_recipe(make_recipe, "docs", docs, config)
    report = EmbeddedSite(bed).apply_recipe(recipe)
    assert report.content_created == (U_INTRO, U_TERM, U_GUIDE)

    driver = EmbeddedSite(bed)
    found = driver.entities([U_GUIDE, U_INTRO, U_TERM])
    guide, intro, term_record = found[U_GUIDE], found[U_INTRO], found[U_TERM]
    assert guide is not None and intro is not None and term_record is not None
    assert (intro.id, guide.id, term_record.id) == (1, 2, 1)  # serials are per entity type
    assert term_record.entity_type == "taxonomy_term" and term_record.bundle == "topics"
    assert guide.fields == {"field_category": [{"target_uuid": U_TERM}],
                            "field_see_also": [{"target_uuid": U_INTRO}]}
    targets = [item["target_uuid"] for items in guide.fields.values() for item in items]
    assert all(driver.entities(targets).values())

    # entity:get shows the references in default-content shape again.
    shown = json.loads(applied_out(site(bed, "entity:get", "node", U_GUIDE, "--format=json")))
    assert shown["values"]["field_category"] == [{"entity": U_TERM}]
    assert shown["values"]["field_see_also"] == [{"entity": U_INTRO}]
    # And export_content writes core's format, with depends for the references.
    exported = driver.export_content([ContentSelector("node", "doc", (U_GUIDE,))])
    assert exported == [{
        "_meta": {"version": "1.0", "entity_type": "node", "uuid": U_GUIDE, "bundle": "doc",
                  "default_langcode": "en",
                  "depends": dict(sorted({U_TERM: "taxonomy_term", U_INTRO: "node"}.items()))},
        "default": {"field_category": [{"entity": U_TERM}],
                    "field_see_also": [{"entity": U_INTRO}],
                    "status": [{"value": True}], "title": [{"value": "Guide"}]},
    }]
