"""``apg site`` used the way an agent uses it: drush-shaped commands against an embedded bed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import EntityRecord, StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]

ARTICLE_TYPE = "{type: article, name: Article}"
RANK_STORAGE = "{entity_type: node, field_name: field_rank, type: integer, cardinality: 1}"
RANK_FIELD = "{entity_type: node, bundle: article, field_name: field_rank, label: Rank}"
TOPIC_STORAGE = (
    "{entity_type: node, field_name: field_topic, type: list_string, cardinality: 1, "
    "settings: {allowed_values: [{value: kb, label: KB}, {value: news, label: News}]}}"
)
TOPIC_FIELD = "{entity_type: node, bundle: article, field_name: field_topic, label: Topic}"


def ok(result: tuple[int, str, str]) -> str:
    """Assert success (exit 0, no error token: only APG_SITE_OK lines) and return stdout."""
    rc, out, err = result
    assert rc == 0, err
    assert all(line.startswith("APG_SITE_OK ") for line in err.splitlines()), err
    return out


def refused(result: tuple[int, str, str], token: str, *fragments: str, rc: int = 1) -> str:
    """Assert the command failed with ``token`` and every fragment on stderr; return stderr."""
    code, out, err = result
    assert code == rc, (code, out, err)
    assert err.startswith(token + " ") or f"\n{token} " in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert "Traceback" not in err
    return err


def view_labels(site: Site, approot: Path, view: str, display: str = "default") -> list[str]:
    rows = json.loads(ok(site(approot, "views:execute", view, display, "--format=json")))
    assert all(set(row) == {"id", "uuid", "label"} for row in rows)
    return [row["label"] for row in rows]


def ranked_view(topic: str) -> dict[str, Any]:
    """Published articles of one topic by rank ascending; page_1 sorts by title descending."""
    return {
        "id": "ranked", "label": "Ranked", "base_table": "node_field_data",
        "display": {
            "default": {"display_plugin": "default", "id": "default", "display_options": {
                "filters": {
                    "type": {"table": "node_field_data", "field": "type", "plugin_id": "bundle",
                             "operator": "in", "value": {"article": "article"}},
                    "status": {"table": "node_field_data", "field": "status",
                               "plugin_id": "boolean", "operator": "=", "value": "1"},
                    "field_topic_value": {"table": "node__field_topic",
                                          "field": "field_topic_value", "plugin_id": "list_field",
                                          "operator": "or", "value": {topic: topic}},
                },
                "sorts": {"field_rank_value": {"table": "node__field_rank",
                                               "field": "field_rank_value", "order": "ASC",
                                               "plugin_id": "standard"}},
                "pager": {"type": "none", "options": {"offset": 0}},
                "fields": {"title": {"table": "node_field_data", "field": "title",
                                     "plugin_id": "field"}},
            }},
            "page_1": {"display_plugin": "page", "id": "page_1", "display_options": {
                "defaults": {"sorts": False},
                "sorts": {"title": {"table": "node_field_data", "field": "title",
                                    "order": "DESC", "plugin_id": "standard"}},
            }},
        },
    }


# ---------------------------------------------------------------------------- 1. agent session


def test_agent_session_builds_a_content_type_content_and_a_working_view(
    bed: Path, site: Site
) -> None:
    model = (
        ("node.type.article", ARTICLE_TYPE),
        ("node.type.page", "{type: page, name: Page}"),
        ("field.storage.node.field_rank", RANK_STORAGE),
        ("field.field.node.article.field_rank", RANK_FIELD),
        ("field.storage.node.field_topic", TOPIC_STORAGE),
        ("field.field.node.article.field_topic", TOPIC_FIELD),
    )
    # Fields are made through config import (the entity API), not config:set, which on Drupal
    # stores a field storage without its table.
    ok(site(bed, "config:export"))
    for name, value in model:
        (bed / "config" / "sync" / f"{name}.yml").write_text(value if value.endswith("\n")
                                                             else value + "\n")
    ok(site(bed, "config:import"))

    nodes = [  # title, rank, topic, status
        ("Alpha", "3", "kb", "1"),
        ("Beta", "1", "news", "1"),
        ("Gamma", "2", "kb", "0"),  # unpublished: filtered out
        ("Delta", "0", "kb", "1"),
        ("Epsilon", "5", "kb", "1"),
        ("Zeta", "4", "news", "1"),
    ]
    created: dict[str, dict[str, Any]] = {}
    for title, rank, topic, status in nodes:
        out = ok(site(bed, "entity:create", "node", "article", "--set", f"title={title}",
                      "--set", f"field_rank={rank}", "--set", f"field_topic={topic}",
                      "--set", f"status={status}"))
        created[title] = json.loads(out)
    # A page titled like a kb article: the bundle filter must keep it out.
    ok(site(bed, "entity:create", "node", "page", "--set", "title=Aardvark page"))
    assert [created[t]["id"] for t, *_ in nodes] == [1, 2, 3, 4, 5, 6]
    assert {c["bundle"] for c in created.values()} == {"article"}

    view = ranked_view("kb")
    ok(site(bed, "config:set", "views.view.ranked", "?", json.dumps(view), "--input-format=json"))
    rows = json.loads(ok(site(bed, "views:execute", "ranked", "--format=json")))
    assert rows == [{"id": created[t]["id"], "uuid": created[t]["uuid"], "label": t}
                    for t in ("Delta", "Alpha", "Epsilon")]
    # The page display overrides sorts only; filters still come from the default display.
    assert view_labels(site, bed, "ranked", "page_1") == ["Epsilon", "Delta", "Alpha"]
    assert ok(site(bed, "views:execute", "ranked", "page_1", "--count")) == "3\n"

    # The same view with a wrong (but config-valid) filter value lists the wrong rows.
    ok(site(bed, "config:set", "views.view.ranked", "display.default.display_options.filters."
            "field_topic_value.value", "{news: news}", "--input-format=yaml"))
    assert view_labels(site, bed, "ranked") == ["Beta", "Zeta"]
    assert view_labels(site, bed, "ranked", "page_1") == ["Zeta", "Beta"]

    # Publishing Gamma is visible through the view once the filter is right again.
    ok(site(bed, "config:set", "views.view.ranked", "display.default.display_options.filters."
            "field_topic_value.value", "{kb: kb}", "--input-format=yaml"))
    ok(site(bed, "entity:update", "node", created["Gamma"]["uuid"], "--set", "status=1"))
    assert view_labels(site, bed, "ranked") == ["Delta", "Gamma", "Alpha", "Epsilon"]

    table = ok(site(bed, "views:execute", "ranked"))
    assert table.splitlines()[0].split() == ["id", "uuid", "label"]
    assert [line.split()[2] for line in table.splitlines()[1:]] == [
        "Delta", "Gamma", "Alpha", "Epsilon"]
    refused(site(bed, "views:execute", "ranked", "block_9"), "APG_VIEW_FAILED",
            "view ranked has no display block_9", "known displays: default, page_1")
    refused(site(bed, "views:execute", "nope"), "APG_VIEW_FAILED", "view nope does not exist")


def test_a_field_set_raw_cannot_hold_content_as_on_drupal(bed: Path, site: Site) -> None:
    ok(site(bed, "config:set", "node.type.article", "?", ARTICLE_TYPE, "--input-format=yaml"))
    _, _, err = site(bed, "config:set", "field.storage.node.field_rank", "?", RANK_STORAGE,
                     "--input-format=yaml")
    assert err.startswith("APG_CONFIG_UNUSABLE field.storage.node.field_rank: set with "
                          "config:set, Drupal makes no table for it"), err
    ok(site(bed, "config:set", "field.field.node.article.field_rank", "?", RANK_FIELD,
            "--input-format=yaml"))
    rc, out, err = site(bed, "entity:create", "node", "article", "--set", "title=A",
                        "--set", "field_rank=3")
    assert rc == 0 and err.startswith("APG_ENTITY_FIELD_DROPPED field_rank: "), err
    record = EmbeddedSite(bed).read_state(StateQuery(entities=(json.loads(out)["uuid"],)))
    assert next(iter(record.entities.values())).fields.get("field_rank") is None  # dropped


def test_view_with_an_unknown_field_warns_as_drupal_breaks_the_handler(content_bed: Path,
                                                                      site: Site) -> None:
    view = ranked_view("kb")
    view["display"]["default"]["display_options"]["sorts"] = {
        "x": {"table": "node_field_data", "field": "nope", "order": "ASC"}}
    ok(site(content_bed, "config:set", "views.view.ranked", "?", json.dumps(view),
            "--input-format=json"))
    # Drupal swaps in its Broken handler, adds no ORDER BY and lists the rows: so do we, aloud.
    rc, out, err = site(content_bed, "views:execute", "ranked", "--format=json")
    assert rc == 0 and json.loads(out) == [], err  # content_bed holds no articles
    assert "APG_VIEW_BROKEN_HANDLER sort.x" in err


# ---------------------------------------------------------------------------- 7. config


SITE_YAML = """\
name: AI proving ground
mail: admin@example.com
slogan: ''
page:
  '403': ''
  '404': ''
  front: /home
default_langcode: en
"""


def test_config_get_formats_and_key_wrapping(bed: Path, site: Site) -> None:
    assert ok(site(bed, "config:get", "system.site")) == SITE_YAML
    as_json = json.loads(ok(site(bed, "config:get", "system.site", "--format=json")))
    assert as_json == yaml.safe_load(SITE_YAML)
    assert list(as_json) == ["name", "mail", "slogan", "page", "default_langcode"]
    assert json.loads(ok(site(bed, "cget", "system.site", "page", "--format=json"))) == {
        "system.site:page": {"403": "", "404": "", "front": "/home"}}
    assert json.loads(ok(site(bed, "cget", "system.site", "page.front", "--format=json"))) == {
        "system.site:page.front": "/home"}
    assert yaml.safe_load(ok(site(bed, "cget", "system.site", "name"))) == {
        "system.site:name": "AI proving ground"}
    refused(site(bed, "cget", "system.nope"), "APG_CONFIG_MISSING", "system.nope")
    refused(site(bed, "cget", "system.site", "page.back"), "APG_CONFIG_MISSING",
            "has no key page.back")


def test_config_set_dotted_key_and_delete(bed: Path, site: Site) -> None:
    driver = EmbeddedSite(bed)
    before = driver.all_config()
    _, _, err = site(bed, "config:set", "system.site", "page.front", "/node/1")
    assert err == "APG_SITE_OK [success] Saved system.site.\n"
    ok(site(bed, "cset", "system.site", "page.extra.deep", "7", "--input-format=yaml"))
    page = driver.config_get("system.site")["page"]
    assert page == {"403": "", "404": "", "front": "/node/1", "extra": {"deep": 7}}

    _, _, err = site(bed, "config:delete", "system.site", "page.extra")
    assert err == "APG_SITE_OK [success] Deleted system.site:page.extra.\n"
    assert driver.config_get("system.site")["page"] == {"403": "", "404": "", "front": "/node/1"}
    refused(site(bed, "cdel", "system.site", "page.extra"), "APG_CONFIG_MISSING",
            "system.site has no key page.extra")

    ok(site(bed, "config:set", "system.extra", "?", "{a: 1}", "--input-format=yaml"))
    assert driver.config_get("system.extra") == {"a": 1}
    _, _, err = site(bed, "config:delete", "system.extra")
    assert err == "APG_SITE_OK [success] Deleted system.extra.\n"
    assert driver.config_get("system.extra") is None
    refused(site(bed, "config:delete", "system.extra"), "APG_CONFIG_MISSING",
            "config system.extra does not exist")

    ok(site(bed, "config:set", "system.site", "page.front", "/home"))
    assert driver.all_config() == before


def test_config_refusals_leave_config_unchanged(content_bed: Path, site: Site) -> None:
    driver = EmbeddedSite(content_bed)
    ok(site(content_bed, "entity:create", "node", "article", "--set", "title=A",
            "--set", "field_topic=kb"))
    before = driver.all_config()
    refused(site(content_bed, "config:set", "forum.settings", "?", "{a: 1}",
                 "--input-format=yaml"), "APG_CONFIG_INVALID", "forum.settings",
            "provider forum is not installed", "pm:install forum")
    refused(site(content_bed, "config:delete", "node.type.article"), "APG_CONFIG_IN_USE",
            "node entities of bundle article exist")
    refused(site(content_bed, "config:delete", "field.storage.node.field_rank"),
            "APG_CONFIG_IN_USE", "field.field.node.article.field_rank")
    refused(site(content_bed, "config:set", "node.type.blog", "?", "{type: post, name: B}",
                 "--input-format=yaml"), "APG_CONFIG_INVALID", "type must be 'blog'")
    refused(site(content_bed, "config:set", "core.extension", "module.forum", "0"),
            "APG_CONFIG_INVALID", "pm:install")
    refused(site(content_bed, "config:set", "system.site", "?", "[1, 2]", "--input-format=yaml"),
            "APG_USAGE", "must be a mapping", rc=2)
    refused(site(content_bed, "config:set", "system.site", "?", "{a: [", "--input-format=json"),
            "APG_USAGE", "not valid json", rc=2)
    assert driver.all_config() == before
    # Drupal's config:set stores a field on a bundle that does not exist (its entity API would
    # refuse it): stored, with a warning that Drupal cannot use it.
    rc, _, err = site(content_bed, "config:set", "field.field.node.blog.field_rank", "?",
                      "{entity_type: node, bundle: blog, field_name: field_rank}",
                      "--input-format=yaml")
    assert rc == 0 and err.startswith("APG_CONFIG_UNUSABLE field.field.node.blog.field_rank: "
                                      "Drupal stores this but cannot use it"), err
    ok(site(content_bed, "config:delete", "field.field.node.blog.field_rank"))
    assert driver.all_config() == before
    # An unused bundle can go, and then its config is gone.
    ok(site(content_bed, "config:delete", "node.type.page"))
    assert driver.config_get("node.type.page") is None


def test_config_export_writes_sync_and_removes_stale_files(bed: Path, site: Site) -> None:
    sync = bed / "config" / "sync"
    (sync / "stale.thing.yml").write_text("a: 1\n", encoding="utf-8")
    ok(site(bed, "config:set", "system.site", "slogan", "Prove it"))
    _, _, err = site(bed, "config:export", "-y")
    assert err == f"APG_SITE_OK [success] Config exported to {sync}: 1 written, 1 removed.\n"
    driver = EmbeddedSite(bed)
    active = driver.all_config()
    assert sorted(p.name for p in sync.glob("*.yml")) == sorted(f"{n}.yml" for n in active)
    assert yaml.safe_load((sync / "system.site.yml").read_text(encoding="utf-8")) == \
        active["system.site"]
    assert not (sync / "stale.thing.yml").exists()
    _, _, err = site(bed, "cex")
    assert err == f"APG_SITE_OK [success] Config exported to {sync}: 0 written, 0 removed.\n"

    other = bed.parent / "elsewhere"
    ok(site(bed, "config:export", "--destination", str(other)))
    assert sorted(p.name for p in other.glob("*.yml")) == sorted(f"{n}.yml" for n in active)


def test_config_import_replaces_active_config_and_round_trips(content_bed: Path,
                                                               site: Site) -> None:
    driver = EmbeddedSite(content_bed)
    ok(site(content_bed, "config:export"))
    exported = driver.all_config()

    ok(site(content_bed, "config:set", "system.site", "name", "Changed"))
    ok(site(content_bed, "config:set", "system.added", "?", "{x: 1}", "--input-format=yaml"))
    ok(site(content_bed, "config:delete", "node.type.page"))
    assert driver.all_config() != exported

    _, _, err = site(content_bed, "config:import", "-y")
    sync = content_bed / "config" / "sync"
    assert err == f"APG_SITE_OK [success] Config imported from {sync}: 1 created, 1 updated, 1 deleted.\n"
    assert driver.all_config() == exported
    _, _, err = site(content_bed, "cim")
    assert err.endswith(": 0 created, 0 updated, 0 deleted.\n")

    # Export and import again: nothing changes, byte for byte.
    files_before = {p.name: p.read_bytes() for p in sync.glob("*.yml")}
    ok(site(content_bed, "config:export"))
    assert {p.name: p.read_bytes() for p in sync.glob("*.yml")} == files_before


def test_config_import_refuses_broken_sync_and_keeps_active_config(content_bed: Path,
                                                                   site: Site) -> None:
    driver = EmbeddedSite(content_bed)
    ok(site(content_bed, "config:export"))
    before = driver.all_config()
    sync = content_bed / "config" / "sync"

    # A field instance whose bundle is not in the sync directory.
    (sync / "node.type.article.yml").unlink()
    refused(site(content_bed, "config:import"), "APG_CONFIG_INVALID",
            "node.type.article must exist first")
    assert driver.all_config() == before

    ok(site(content_bed, "config:export"))
    extension = yaml.safe_load((sync / "core.extension.yml").read_text(encoding="utf-8"))
    extension["module"]["ghost"] = 0
    (sync / "core.extension.yml").write_text(yaml.safe_dump(extension), encoding="utf-8")
    refused(site(content_bed, "config:import"), "APG_MODULE_MISSING", "ghost")
    assert driver.all_config() == before

    refused(site(content_bed, "config:import", "--source", str(content_bed / "nowhere")),
            "APG_CONFIG_SYNC_MISSING", "nowhere")


def test_config_import_refuses_to_orphan_content(content_bed: Path, site: Site) -> None:
    driver = EmbeddedSite(content_bed)
    ok(site(content_bed, "config:set", "taxonomy.vocabulary.tags", "?", "{vid: tags}",
            "--input-format=yaml"))
    ok(site(content_bed, "entity:create", "taxonomy_term", "tags", "--set", "name=T"))
    ok(site(content_bed, "entity:create", "node", "article", "--set", "title=A", "--set",
            "field_topic=kb"))
    sync = content_bed / "config" / "sync"
    ok(site(content_bed, "config:export"))
    before = driver.all_config()

    def without_module(module: str) -> None:
        path = sync / "core.extension.yml"
        extension = yaml.safe_load(path.read_text(encoding="utf-8"))
        del extension["module"][module]
        path.write_text(yaml.safe_dump(extension), encoding="utf-8")

    # A bundle that content uses.
    (sync / "node.type.article.yml").unlink()
    for name in ("rank", "topic", "tags", "related"):
        (sync / f"field.field.node.article.field_{name}.yml").unlink()
    refused(site(content_bed, "config:import"), "APG_CONFIG_IN_USE",
            "node entities of bundle article exist; delete them before node.type.article")
    assert driver.all_config() == before

    # A module whose entities exist.
    ok(site(content_bed, "config:export"))
    without_module("taxonomy")
    (sync / "taxonomy.vocabulary.tags.yml").unlink()
    refused(site(content_bed, "config:import"), "APG_CONFIG_IN_USE", "taxonomy_term")
    (sync / "taxonomy.vocabulary.tags.yml").write_text(
        yaml.safe_dump(before["taxonomy.vocabulary.tags"]), encoding="utf-8")
    refused(site(content_bed, "config:import"), "APG_MODULE_HAS_CONTENT",
            "module taxonomy provides taxonomy_term entities")
    assert driver.all_config() == before

    # A module whose field type a field storage still uses.
    ok(site(content_bed, "config:export"))
    without_module("options")
    refused(site(content_bed, "config:import"), "APG_MODULE_IN_USE",
            "field type list_string, used by field.storage.node.field_topic")
    assert driver.all_config() == before


# ---------------------------------------------------------------------------- 8. database


def test_dump_mutate_restore_gives_back_config_and_entities(content_bed: Path, site: Site) -> None:
    driver = EmbeddedSite(content_bed)
    made = json.loads(ok(site(content_bed, "entity:create", "node", "article", "--set",
                              "title=Kept", "--set", "field_topic=kb", "--format=json")))
    config_before = driver.all_config()
    entities_before = driver.entities([made["uuid"]])
    dump = content_bed.parent / "dumps" / "site.sqlite"
    driver.dump_database(dump)
    assert dump.is_file()

    ok(site(content_bed, "config:set", "system.site", "name", "Mutated"))
    ok(site(content_bed, "entity:delete", "node", made["uuid"]))
    extra = json.loads(ok(site(content_bed, "entity:create", "node", "page", "--set",
                               "title=Added")))
    ok(site(content_bed, "pm:uninstall", "canvas"))
    assert driver.all_config() != config_before

    driver.restore_database(dump)
    assert driver.all_config() == config_before
    assert driver.entities([made["uuid"], extra["uuid"]]) == {
        made["uuid"]: entities_before[made["uuid"]], extra["uuid"]: None}
    # Serial ids continue from the restored sequence, not from the discarded state.
    again = json.loads(ok(site(content_bed, "entity:create", "node", "page", "--set",
                               "title=After")))
    assert again["id"] == 2

    bogus = content_bed.parent / "bogus.sqlite"
    bogus.write_bytes(b"not a database at all" * 100)
    for path, token in ((bogus, "APG_DUMP_INVALID"), (content_bed / "none", "APG_DUMP_MISSING")):
        with pytest.raises(ApgError) as info:
            driver.restore_database(path)
        assert info.value.token == token
        assert str(path) in info.value.message
    assert driver.entities([again["uuid"]])[again["uuid"]] is not None


def test_sql_query_prints_tab_separated_rows_without_header(content_bed: Path,
                                                            site: Site) -> None:
    for title in ("One", "Two"):
        ok(site(content_bed, "entity:create", "node", "page", "--set", f"title={title}"))
    out = ok(site(content_bed, "sql:query",
                  "SELECT id, bundle, label, NULL FROM entity ORDER BY id"))
    assert out == "1\tpage\tOne\tNULL\n2\tpage\tTwo\tNULL\n"
    assert ok(site(content_bed, "sqlq", "SELECT 1 WHERE 0")) == ""
    refused(site(content_bed, "sql:query", "SELECT * FROM nope"), "APG_SQL_FAILED", "nope")


def test_status_json_and_field(bed: Path, site: Site) -> None:
    facts = json.loads(ok(site(bed, "status", "--format=json")))
    assert facts["db-status"] == "Connected"
    assert facts["bootstrap"] == "Successful"
    assert facts["db-driver"] == "sqlite"
    assert facts["db-name"] == str(bed / "db" / "site.sqlite")
    assert facts["root"] == str(bed / "web")
    assert facts["files"] == "sites/default/files"
    assert facts["site-name"] == "AI proving ground"
    assert facts["modules"] == 13
    assert ok(site(bed, "st", "--field", "db-status")) == "Connected\n"
    refused(site(bed, "status", "--field", "nope"), "APG_USAGE", "no status field 'nope'", rc=2)

    (bed / "db" / "site.sqlite").unlink()
    facts = json.loads(ok(site(bed, "status", "--format=json")))
    assert facts["db-status"] == "Not installed"
    assert "modules" not in facts
    # Pointing a command at a directory that holds no site is a usage problem: exit 2.
    refused(site(bed, "pm:list"), "APG_SITE_NOT_INSTALLED", "apg bed init", rc=2)


def test_read_state_is_one_round_trip_for_one_or_a_thousand_uuids(content_bed: Path) -> None:
    driver = EmbeddedSite(content_bed)
    with driver.session() as store:
        records = [driver.create_entity(store, "node", "page", {"title": f"n{i}"})
                   for i in range(1000)]
    uuids = tuple(r.uuid for r in records)
    assert driver.round_trips == 0

    one = driver.read_state(StateQuery(entities=uuids[:1]))
    assert driver.round_trips == 1
    assert one.entities == {uuids[0]: records[0]}

    query = StateQuery(entities=(*uuids, "no-such-uuid"), modules=True, config=("system.site",),
                       pending_updates=True, versions=True)
    answer = driver.read_state(query)
    assert driver.round_trips == 2
    assert list(answer.entities) == [*uuids, "no-such-uuid"]
    assert answer.entities["no-such-uuid"] is None
    found = [answer.entities[u] for u in uuids]
    assert all(isinstance(r, EntityRecord) for r in found)
    assert [r.label for r in found if r] == [f"n{i}" for i in range(1000)]
    assert [r.id for r in found if r] == list(range(1, 1001))
    assert answer.config["system.site"]["name"] == "AI proving ground"
    assert answer.modules["node"].enabled
    assert answer.versions is not None and "node" in answer.versions.modules


# ---------------------------------------------------------------------------- entities via CLI


def test_entity_commands_by_id_and_uuid(content_bed: Path, site: Site) -> None:
    first = json.loads(ok(site(content_bed, "entity:create", "node", "article",
                               "--uuid", "aaaaaaaa-0000-4000-8000-000000000001",
                               "--values", "{title: First, field_topic: kb, field_rank: 7}")))
    assert first == {"id": 1, "uuid": "aaaaaaaa-0000-4000-8000-000000000001",
                     "bundle": "article", "label": "First"}
    second = json.loads(ok(site(content_bed, "entity:create", "node", "page",
                                "--set", "title=Second")))
    assert second["id"] == 2

    by_id = yaml.safe_load(ok(site(content_bed, "entity:get", "node", "1")))
    by_uuid = json.loads(ok(site(content_bed, "entity:get", "node", first["uuid"],
                                 "--format=json")))
    assert by_id == by_uuid == {
        "id": 1, "uuid": first["uuid"], "bundle": "article", "label": "First", "status": True,
        "values": {"title": [{"value": "First"}], "status": [{"value": True}],
                   "field_topic": [{"value": "kb"}], "field_rank": [{"value": 7}]}}

    updated = json.loads(ok(site(content_bed, "entity:update", "node", first["uuid"],
                                 "--set", "title=First, renamed", "--set", "field_rank=8")))
    assert updated == {**first, "label": "First, renamed"}
    values = json.loads(ok(site(content_bed, "entity:get", "node", "1", "--format=json")))
    assert values["values"]["field_rank"] == [{"value": 8}]
    assert values["values"]["field_topic"] == [{"value": "kb"}]

    listing = json.loads(ok(site(content_bed, "entity:list", "node", "--format=json")))
    assert listing == {
        "1": {"id": 1, "uuid": first["uuid"], "bundle": "article", "label": "First, renamed",
              "status": True},
        "2": {"id": 2, "uuid": second["uuid"], "bundle": "page", "label": "Second",
              "status": True}}
    only_pages = json.loads(ok(site(content_bed, "entity:list", "node", "--bundle", "page",
                                    "--format=json")))
    assert list(only_pages) == ["2"]

    _, _, err = site(content_bed, "entity:delete", "node", "2", first["uuid"])
    assert err == "APG_SITE_OK [success] Deleted 2 node entities.\n"
    assert json.loads(ok(site(content_bed, "entity:list", "node", "--format=json"))) == {}
    refused(site(content_bed, "entity:get", "node", "1"), "APG_ENTITY_MISSING", "no node entity 1")
    refused(site(content_bed, "entity:delete", "node", first["uuid"]), "APG_ENTITY_MISSING",
            first["uuid"])
    refused(site(content_bed, "entity:update", "node", "99", "--set", "title=x"),
            "APG_ENTITY_MISSING", "no node entity 99")
    # Ids are never reused.
    third = json.loads(ok(site(content_bed, "entity:create", "node", "page", "--set",
                               "title=Third")))
    assert third["id"] == 3


def test_entity_create_refuses_a_duplicate_uuid(content_bed: Path, site: Site) -> None:
    uuid = "bbbbbbbb-0000-4000-8000-000000000001"
    ok(site(content_bed, "entity:create", "node", "page", "--uuid", uuid, "--set", "title=A"))
    refused(site(content_bed, "entity:create", "node", "page", "--uuid", uuid, "--set",
                 "title=B"), "APG_ENTITY_EXISTS", uuid)
    records = EmbeddedSite(content_bed).entities([uuid])
    assert records[uuid] is not None and records[uuid].label == "A"


def test_pm_list_and_cache_rebuild(bed: Path, site: Site) -> None:
    listing = json.loads(ok(site(bed, "pm:list", "--format=json")))
    assert listing["node"] == {"package": "Core", "display_name": "node", "name": "node",
                               "type": "module", "path": "core/modules/node",
                               "status": "Enabled", "version": listing["system"]["version"]}
    enabled = json.loads(ok(site(bed, "pml", "--status=enabled", "--format=json")))
    assert sorted(enabled) == ["canvas", "datetime", "field", "file", "link", "node", "options",
                               "path", "system", "taxonomy", "text", "user", "views"]
    disabled = json.loads(ok(site(bed, "pml", "--status=disabled", "--format=json")))
    assert sorted(disabled) == ["image", "menu_link_content", "telephone"]
    rc, out, err = site(bed, "cr")
    assert (rc, out, err) == (0, "", "APG_SITE_OK [success] Cache rebuild complete.\n")


def test_config_names_that_would_leave_the_sync_directory_are_refused(bed: Path, site: Site) -> None:
    for name in ("system.x/escape", "system.a b", "system.x\\y"):
        result = site(bed, "config:set", name, "k", "v")
        assert result.rc == 1
        assert result.err.startswith(f"APG_CONFIG_INVALID config {name}: use only"), result.err
    assert site(bed, "config:export").rc == 0
    assert not (bed / "config" / "sync" / "system.x").exists()
