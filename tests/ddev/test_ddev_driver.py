"""The ddev site driver against a stub ``ddev`` that answers in drush's real output shapes."""

from __future__ import annotations

import dataclasses
import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Stub, expect_error, golden

from ai_proving_ground.sites.base import (
    CanvasRef,
    Condition,
    ContentSelector,
    CountQuery,
    PendingUpdate,
    StateQuery,
    ViewQuery,
)
from ai_proving_ground.sites.ddev import DdevSite
from ai_proving_ground.sites.ddev import driver as ddev_driver

NODE_UUID = "e1714f23-70c0-4493-8e92-af1901771921"
TERM_UUID = "550f86ad-aa11-4047-953f-636d42889f85"
PAGE_UUID = "0b4a51c1-1111-4c4c-9b9b-6a3a1f7c0001"
MISSING_UUID = "00000000-0000-4000-8000-000000000000"
REGION = "canvas.page_region.olivero.header"

FULL_QUERY = StateQuery(
    modules=True,
    config=("system.site", "missing.thing", "empty.thing"),
    config_prefixes=("node.type.",),
    entities=(NODE_UUID, MISSING_UUID),
    counts=(CountQuery("node", "kb_doc", (Condition("status", "=", True),)),),
    views=(ViewQuery("kb_index", "page_1"), ViewQuery("gone")),
    canvas=(CanvasRef("page", PAGE_UUID), CanvasRef("region", REGION)),
    pending_updates=True,
    versions=True,
)

FULL_ANSWER: dict[str, Any] = {
    "modules": {
        "node": {
            "name": "node",
            "enabled": True,
            "version": "11.2.3",
            "package": "Core",
            "path": "core/modules/node",
            "schema_installed": 11201,
            "schema_code": 11201,
        },
        "kb_docs": {
            "name": "kb_docs",
            "enabled": False,
            "version": None,
            "package": "Custom",
            "path": "modules/custom/kb_docs",
            "schema_installed": None,
            "schema_code": None,
        },
    },
    "config": {
        "system.site": {"name": "Eval bed", "page": {"403": "", "front": "/node"}},
        "empty.thing": [],
    },
    "config_names": {"node.type.": ["node.type.kb_doc", "node.type.page"]},
    "entities": {
        NODE_UUID: {
            "entity_type": "node",
            "uuid": NODE_UUID,
            "id": 7,
            "bundle": "kb_doc",
            "label": "Resetting a password",
            "status": True,
            "fields": {
                "field_section": [{"target_id": "3", "target_uuid": TERM_UUID}],
                "title": [{"value": "Resetting a password"}],
            },
            "created": 1700000000,
            "changed": 1700000100,
        },
        MISSING_UUID: None,
    },
    "counts": [12],
    "views": [
        {
            "view_id": "kb_index",
            "display_id": "page_1",
            "rows": [{"id": 7, "uuid": NODE_UUID, "label": "Resetting a password"}],
            "total_rows": 1,
            "error": None,
            "outcome": "rows",
        },
        {
            "view_id": "gone",
            "display_id": "default",
            "rows": [],
            "total_rows": 0,
            "error": "view gone does not exist",
            "outcome": "no such view or display",
        },
    ],
    "canvas": [
        {
            "kind": "page",
            "key": PAGE_UUID,
            "label": "Home",
            "components": [
                {
                    "uuid": "c-1",
                    "component_id": "sdc.olivero.hero",
                    "parent_uuid": None,
                    "slot": None,
                    "inputs": {"heading": "Welcome"},
                },
                {
                    "uuid": "c-2",
                    "component_id": "sdc.olivero.card",
                    "parent_uuid": "c-1",
                    "slot": "content",
                    "inputs": [],
                },
            ],
        },
        None,
    ],
    "pending_updates": [{"module": "kb_docs", "update_id": "10001", "description": "Add a field."}],
    "versions": {
        "core": "11.2.3",
        "runtime": {"php": "8.3.10", "database": "mysql 10.11.8-MariaDB"},
        "modules": {"node": {"version": "11.2.3", "project": None, "reference": None}},
        "schema": {"node": 11201},
    },
}

CORE_STATUS = {
    "drupal-version": "11.2.3",
    "uri": "https://bed.ddev.site",
    "db-driver": "mysql",
    "db-status": "Connected",
    "bootstrap": "Successful",
    "root": "/var/www/html/web",
    "site": "sites/default",
    "files": "sites/default/files",
    "temp": "/tmp",
    "private": "../private",
    "config-sync": "../config/sync",
}


def pm_list(*enabled: str) -> str:
    """``drush pm:list --status=enabled --format=json``: an object keyed by module name."""
    return json.dumps(
        {
            name: {
                "package": "Core",
                "project": "",
                "display_name": f"{name.title()} ({name})",
                "name": name,
                "type": "module",
                "path": f"core/modules/{name}",
                "status": "Enabled",
                "version": "11.2.3",
            }
            for name in enabled
        }
    )


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def assert_exec_only(stub: Stub) -> None:
    for call in stub.calls():
        assert call["argv"][0] in {"exec", "import-db", "mutagen"}
        assert call["argv"][0] != "drush"


# ---------------------------------------------------------------------------- read_state


@pytest.mark.parametrize("how_many", [1, 500])
def test_read_state_is_one_round_trip_whatever_the_batch(
    ddev_site: DdevSite, stub: Stub, how_many: int
) -> None:
    uuids = tuple(str(uuid.UUID(int=i + 1)) for i in range(how_many))
    stub.probe_answers({"entities": {uuids[0]: FULL_ANSWER["entities"][NODE_UUID] | {}}})
    query = StateQuery(entities=uuids)

    answer = ddev_site.read_state(query)

    calls = stub.calls()
    assert len(calls) == 1
    assert ddev_site.round_trips == 1
    argv = calls[0]["argv"]
    assert argv[:3] == ["exec", "drush", "php:script"]
    assert calls[0]["request"] == as_json(dataclasses.asdict(query))
    assert set(answer.entities) == set(uuids)
    assert sum(record is not None for record in answer.entities.values()) == 1


def test_read_state_parses_every_answer_kind(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers(FULL_ANSWER)

    answer = ddev_site.read_state(FULL_QUERY)

    assert stub.calls()[0]["request"] == as_json(dataclasses.asdict(FULL_QUERY))
    assert answer.modules["node"].enabled and answer.modules["node"].schema_installed == 11201
    assert not answer.modules["kb_docs"].enabled
    assert answer.config["system.site"]["page"]["403"] == ""
    assert answer.config.get("missing.thing") is None
    assert answer.config["empty.thing"] == {}
    assert answer.config_names == {"node.type.": ["node.type.kb_doc", "node.type.page"]}
    node = answer.entities[NODE_UUID]
    assert node is not None and node.id == 7 and node.bundle == "kb_doc" and node.status
    assert node.fields["field_section"][0]["target_uuid"] == TERM_UUID
    assert answer.entities[MISSING_UUID] is None
    assert answer.counts == [12]
    assert [row.uuid for row in answer.views[0].rows] == [NODE_UUID]
    assert answer.views[1].error == "view gone does not exist" and not answer.views[1].rows
    page = answer.canvas[0]
    assert page is not None and page.kind == "page" and page.label == "Home"
    assert page.components[1].parent_uuid == "c-1" and page.components[1].slot == "content"
    assert page.components[0].inputs == {"heading": "Welcome"}
    assert page.components[1].inputs == {}  # PHP's empty map arrives as []
    assert answer.canvas[1] is None
    assert answer.pending_updates == [PendingUpdate("kb_docs", "10001", "Add a field.")]
    assert answer.versions is not None and answer.versions.core == "11.2.3"
    assert answer.versions.schema == {"node": 11201}


def test_php_notices_before_the_answer_are_tolerated(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers({"counts": [3]}, stdout_prefix="Deprecated: something in foo.php\n")
    answer = ddev_site.read_state(StateQuery(counts=(CountQuery("node"),)))
    assert answer.counts == [3]


def test_a_huge_batch_travels_as_a_file_still_in_one_round_trip(
    ddev_site: DdevSite, stub: Stub, approot: Path
) -> None:
    uuids = tuple(str(uuid.UUID(int=i + 1)) for i in range(3000))
    stub.probe_answers({})
    query = StateQuery(entities=uuids)

    ddev_site.read_state(query)

    (call,) = stub.calls()
    argument = call["command"][call["command"].index("--") + 1]
    assert argument.startswith("@/var/www/html/.ai-proving-ground/requests/")
    assert call["request"] == as_json(dataclasses.asdict(query))
    assert not any((approot / ".ai-proving-ground" / "requests").iterdir())


def test_probe_outside_the_project_is_staged_into_it(ddev_site: DdevSite, stub: Stub, approot: Path) -> None:
    stub.probe_answers({})
    ddev_site.read_state(StateQuery())
    staged = approot / ".ai-proving-ground" / "probe.php"
    assert staged.read_bytes() == ddev_driver.PROBE_FILE.read_bytes()
    command = stub.commands()[0]
    assert command[3] == "/var/www/html/.ai-proving-ground/probe.php"
    assert "--script-path=/var/www/html/.ai-proving-ground" in command


def test_probe_inside_the_project_is_used_in_place(
    ddev_site: DdevSite, stub: Stub, approot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = approot / "vendor" / "apg" / "probe.php"
    inside.parent.mkdir(parents=True)
    inside.write_bytes(ddev_driver.PROBE_FILE.read_bytes())
    monkeypatch.setattr(ddev_driver, "PROBE_FILE", inside)
    stub.probe_answers({})

    ddev_site.read_state(StateQuery())

    assert stub.commands()[0][3] == "/var/www/html/vendor/apg/probe.php"
    assert not (approot / ".ai-proving-ground" / "probe.php").exists()


# ---------------------------------------------------------------------------- failures


def test_drush_error_exit_is_ddev_failed_with_the_error_line(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on(
        "exec",
        "drush",
        "php:script",
        exit=1,
        stderr=" [error]  Drupal\\Core\\Database\\ConnectionNotDefinedException: The specified "
        "database connection is not defined: default\n"
        "Failed to execute command `drush php:script ...`: exit status 1\n",
    )
    error = expect_error("APG_DDEV_FAILED", lambda: ddev_site.read_state(StateQuery(modules=True)))
    assert "[error]" in error.message and "ConnectionNotDefinedException" in error.message
    assert "exit 1" in error.message and "php:script" in error.message


def test_missing_drush_is_ddev_failed_with_a_hint(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", exit=127, stderr="bash: line 1: drush: command not found\n")
    error = expect_error("APG_DDEV_FAILED", ddev_site.rebuild_caches)
    assert "exit 127" in error.message and "composer require drush/drush" in error.message


def test_ddev_failed_to_run_line_is_reported(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on(
        "exec",
        exit=1,
        stderr="Failed to run drush cr: exit status 3\n",
    )
    error = expect_error("APG_DDEV_FAILED", ddev_site.rebuild_caches)
    assert "Failed to run drush cr: exit status 3" in error.message


def test_stopped_project_suggests_ddev_start(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", exit=1, stderr="Project is not currently running. Try 'ddev start'.\n")
    error = expect_error("APG_DDEV_FAILED", ddev_site.status)
    assert "ddev start" in error.message


def test_garbage_probe_output_is_probe_invalid(ddev_site: DdevSite, stub: Stub) -> None:
    garbage = "<br />\n<b>Fatal error</b>: Allowed memory size exhausted " + "x" * 400
    stub.on("exec", "drush", "php:script", stdout=garbage)
    error = expect_error("APG_DDEV_PROBE_INVALID", lambda: ddev_site.read_state(StateQuery()))
    assert repr(garbage[:200]) in error.message
    assert garbage[:201] not in error.message


def test_empty_probe_output_is_probe_invalid(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "php:script", stdout="")
    expect_error("APG_DDEV_PROBE_INVALID", lambda: ddev_site.read_state(StateQuery()))


def test_misshapen_probe_answer_is_probe_invalid(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers({"counts": "twelve"})
    query = StateQuery(counts=(CountQuery("node"),))
    error = expect_error("APG_DDEV_PROBE_INVALID", lambda: ddev_site.read_state(query))
    assert "counts" in error.message


def test_answer_count_must_match_the_questions(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers({"counts": [1]})
    query = StateQuery(counts=(CountQuery("node"), CountQuery("user")))
    expect_error("APG_DDEV_PROBE_INVALID", lambda: ddev_site.read_state(query))


def test_missing_ddev_is_ddev_missing(approot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    driver = DdevSite(approot)
    error = expect_error("APG_DDEV_MISSING", lambda: driver.read_state(StateQuery()))
    assert error.exit_code == 2
    assert "AI_PG_SITE_DRIVER=sqlite" in error.message and "https://ddev.com" in error.message
    assert driver.round_trips == 0


def test_unserialisable_condition_is_refused_before_any_call(ddev_site: DdevSite, stub: Stub) -> None:
    query = StateQuery(counts=(CountQuery("node", conditions=(Condition("x", "=", object()),)),))
    expect_error("APG_DDEV_QUERY_INVALID", lambda: ddev_site.read_state(query))
    assert stub.calls() == []


# ---------------------------------------------------------------------------- commands


def test_status_and_files_dirs_come_from_core_status(ddev_site: DdevSite, stub: Stub, approot: Path) -> None:
    stub.on("exec", "drush", "core:status", stdout=json.dumps(CORE_STATUS))
    assert ddev_site.status()["drupal-version"] == "11.2.3"
    assert ddev_site.public_files_dir() == approot / "web" / "sites" / "default" / "files"
    assert ddev_site.private_files_dir() == approot / "private"
    assert stub.commands()[0] == ["exec", "drush", "core:status", "--format=json"]
    assert_exec_only(stub)


def test_no_private_dir_is_none(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "core:status", stdout=json.dumps(CORE_STATUS | {"private": ""}))
    assert ddev_site.private_files_dir() is None


def test_files_dir_outside_the_mount_is_refused(ddev_site: DdevSite, stub: Stub) -> None:
    status = CORE_STATUS | {"files": "/srv/files"}
    stub.on("exec", "drush", "core:status", stdout=json.dumps(status))
    expect_error("APG_DDEV_PATH_UNMAPPED", ddev_site.public_files_dir)


def test_run_updates_with_nothing_pending_runs_nothing(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers(golden("probe", "pending-updates")["answer"])
    assert ddev_site.run_updates() == []
    assert [c[:3] for c in stub.commands()] == [["exec", "drush", "php:script"]]


def test_run_updates_runs_updb_and_returns_the_probes_list(ddev_site: DdevSite, stub: Stub) -> None:
    pending = [
        {"module": "kb_docs", "update_id": "10001", "description": "Add a field."},
        {"module": "kb_docs", "update_id": "fix_titles", "description": "Fix titles. "},
    ]
    stub.probe_answers({"pending_updates": pending})
    stub.on("exec", "drush", "updatedb", stderr=" [success] Finished performing updates.\n")

    ran = ddev_site.run_updates()

    assert ran == [
        PendingUpdate("kb_docs", "10001", "Add a field."),
        PendingUpdate("kb_docs", "fix_titles", "Fix titles."),
    ]
    assert stub.calls()[0]["request"]["pending_updates"] is True
    assert stub.commands()[1] == ["exec", "drush", "updatedb", "-y"]
    assert ["exec", "drush", "updatedb:status", "--format=json"] not in stub.commands()


def test_install_modules_returns_what_became_enabled(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "pm:list", stdout=pm_list("node", "system"), once=True)
    stub.on("exec", "drush", "pm:install", stderr=" [success] Module kb_docs has been installed.\n")
    stub.on("exec", "drush", "pm:list", stdout=pm_list("node", "system", "field", "kb_docs"))

    assert ddev_site.install_modules(["kb_docs", "node"]) == ["field", "kb_docs"]
    assert stub.commands()[1] == ["exec", "drush", "pm:install", "-y", "kb_docs", "node"]
    assert ddev_site.round_trips == 3
    assert_exec_only(stub)


def test_install_unknown_module_is_ddev_failed(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "pm:list", stdout=pm_list("node"))
    stub.on(
        "exec",
        "drush",
        "pm:install",
        exit=1,
        stderr=" [error]  Unable to install modules nope due to missing modules nope.\n",
    )
    error = expect_error("APG_DDEV_FAILED", lambda: ddev_site.install_modules(["nope"]))
    assert "missing modules nope" in error.message


def test_module_names_are_checked_before_any_call(ddev_site: DdevSite, stub: Stub) -> None:
    expect_error("APG_NAME_INVALID", lambda: ddev_site.install_modules(["kb docs; rm -rf /"]))
    assert stub.calls() == []


def test_uninstall_skips_modules_that_are_not_installed(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "pm:list", stdout=pm_list("node", "kb_docs"), once=True)
    stub.on("exec", "drush", "pm:uninstall", stderr=" [success] Successfully uninstalled\n")
    stub.on("exec", "drush", "pm:list", stdout=pm_list("node"))

    assert ddev_site.uninstall_modules(["kb_docs", "ghost"]) == ["kb_docs"]
    assert stub.commands()[1] == ["exec", "drush", "pm:uninstall", "-y", "kb_docs"]


def test_uninstall_of_nothing_installed_calls_nothing_else(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "pm:list", stdout="[]")
    assert ddev_site.uninstall_modules(["ghost"]) == []
    assert len(stub.calls()) == 1


def test_rebuild_caches_is_drush_cr(ddev_site: DdevSite, stub: Stub) -> None:
    stub.on("exec", "drush", "cr", stderr=" [success] Cache rebuild complete.\n")
    ddev_site.rebuild_caches()
    assert stub.calls()[0]["argv"] == ["exec", "drush", "cr"]


def write_recipe(approot: Path) -> Path:
    recipe = approot / "recipes" / "fixture_kb_docs"
    (recipe / "config").mkdir(parents=True)
    (recipe / "content" / "node").mkdir(parents=True)
    (recipe / "recipe.yml").write_text(
        "name: KB docs\ntype: Content\ninstall: [kb_docs]\n"
        "config:\n  actions:\n    '?user.role.editor': {grantPermissions: [x]}\n"
    )
    (recipe / "config" / "node.type.kb_doc.yml").write_text("type: kb_doc\nname: KB doc\n")
    for uid in (NODE_UUID, TERM_UUID):
        (recipe / "content" / "node" / f"{uid}.yml").write_text(
            f"_meta:\n  version: '1.0'\n  entity_type: node\n  uuid: {uid}\n"
        )
    return recipe


def test_apply_recipe_runs_drush_recipe_on_the_container_path(
    ddev_site: DdevSite, stub: Stub, approot: Path
) -> None:
    recipe = write_recipe(approot)
    before = {
        "modules": {"node": FULL_ANSWER["modules"]["node"]},
        "entities": {NODE_UUID: None, TERM_UUID: FULL_ANSWER["entities"][NODE_UUID]},
    }
    after = {"modules": FULL_ANSWER["modules"] | {"kb_docs": FULL_ANSWER["modules"]["kb_docs"]}}
    after["modules"]["kb_docs"] = after["modules"]["kb_docs"] | {"enabled": True}
    stub.on("exec", "drush", "php:script", stdout=json.dumps(before), once=True)
    stub.on("exec", "drush", "recipe", stderr=" [OK] KB docs applied successfully\n")
    stub.probe_answers(after)
    stub.drush_capture("core-status-json")

    report = ddev_site.apply_recipe(recipe)

    assert stub.commands()[0] == ["exec", "drush", "core:status", "--format=json"]
    assert stub.commands()[2] == ["exec", "drush", "recipe", "/var/www/html/recipes/fixture_kb_docs"]
    assert report.recipe == "fixture_kb_docs"
    assert report.modules_installed == ("kb_docs",)
    assert report.config_written == ("node.type.kb_doc", "user.role.editor")
    assert report.content_created == (NODE_UUID,)
    assert report.content_skipped == (TERM_UUID,)
    assert ddev_site.round_trips == 4


def test_recipe_path_with_shell_characters_is_refused(ddev_site: DdevSite, stub: Stub, approot: Path) -> None:
    odd = approot / "recipes" / "it's $(here)"
    odd.mkdir()
    (odd / "recipe.yml").write_text("name: x\n")
    expect_error("APG_DDEV_ARG_UNSAFE", lambda: ddev_site.apply_recipe(odd))
    assert stub.calls() == []


def test_dump_database_moves_the_gzipped_dump_into_place(
    ddev_site: DdevSite, stub: Stub, approot: Path, tmp_path: Path
) -> None:
    stub.on("exec", "drush", "sql:dump", result_file="CREATE TABLE node (nid int);\n")
    dest = tmp_path / "baselines" / "base.sql.gz"

    ddev_site.dump_database(dest)

    assert gzip.decompress(dest.read_bytes()).decode() == "CREATE TABLE node (nid int);\n"
    command = stub.commands()[0]
    assert command[:3] == ["exec", "drush", "sql:dump"] and "--gzip" in command
    result_file = next(a for a in command if a.startswith("--result-file="))
    assert result_file.startswith("--result-file=/var/www/html/.ai-proving-ground/tmp/dump-")
    assert not any((approot / ".ai-proving-ground" / "tmp").iterdir())


def test_dump_that_never_appears_is_ddev_failed(ddev_site: DdevSite, stub: Stub, tmp_path: Path) -> None:
    stub.describe(mutagen=True)
    stub.on("exec", "drush", "sql:dump", stderr=" [success] Database dump saved\n")
    stub.on("mutagen", "sync", stdout="")
    dest = tmp_path / "base.sql.gz"
    expect_error("APG_DDEV_FAILED", lambda: ddev_site.dump_database(dest))
    assert not dest.exists()
    assert stub.commands()[1] == ["mutagen", "sync"]  # with Mutagen, synced before looking


def test_restore_database_imports_the_host_file(ddev_site: DdevSite, stub: Stub, tmp_path: Path) -> None:
    src = tmp_path / "base.sql.gz"
    src.write_bytes(gzip.compress(b"INSERT INTO node VALUES (1);\n"))
    stub.on("import-db", stdout="Successfully imported database 'db'\n")

    ddev_site.restore_database(src)

    (call,) = stub.calls()
    assert call["argv"] == ["import-db", f"--file={src.resolve()}", "--no-progress"]
    assert call["imported"] == "INSERT INTO node VALUES (1);\n"


def test_restore_gives_an_unsuffixed_dump_a_name_import_db_reads(
    ddev_site: DdevSite, stub: Stub, tmp_path: Path, approot: Path
) -> None:
    src = tmp_path / "baseline-dump"
    src.write_bytes(gzip.compress(b"SELECT 1;\n"))
    stub.on("import-db")

    ddev_site.restore_database(src)

    (call,) = stub.calls()
    assert call["argv"][1].endswith(".sql.gz") and call["imported"] == "SELECT 1;\n"
    # Issue 19: staged beside the dump (outside the project), never where the container writes.
    assert Path(call["argv"][1].split("=", 1)[1]).parent == tmp_path
    assert not (approot / ".ai-proving-ground" / "tmp").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".restore-")) == []


def test_restore_without_a_dump_calls_nothing(ddev_site: DdevSite, stub: Stub, tmp_path: Path) -> None:
    expect_error("APG_DDEV_DUMP_MISSING", lambda: ddev_site.restore_database(tmp_path / "none.sql"))
    assert stub.calls() == []


def test_export_config_keeps_existing_objects_only(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers({"config": {"system.site": {"name": "Eval bed"}, "gone.thing": None}})
    exported = ddev_site.export_config(["system.site", "gone.thing"])
    assert exported == {"system.site": {"name": "Eval bed"}}
    assert stub.calls()[0]["request"]["config"] == ["system.site", "gone.thing"]


def test_export_content_asks_the_probe_for_default_content(ddev_site: DdevSite, stub: Stub) -> None:
    document = {
        "_meta": {
            "version": "1.0",
            "entity_type": "node",
            "uuid": NODE_UUID,
            "bundle": "kb_doc",
            "default_langcode": "en",
            "depends": {TERM_UUID: "taxonomy_term"},
        },
        "default": {"title": [{"value": "Resetting a password"}]},
    }
    stub.probe_answers({"content_export": [document]})
    selector = ContentSelector("node", "kb_doc", (NODE_UUID,))

    assert ddev_site.export_content([selector]) == [document]
    request = stub.calls()[0]["request"]
    assert request == {"content_export": [as_json(dataclasses.asdict(selector))]}
    assert ddev_site.round_trips == 1


def test_export_content_without_documents_is_probe_invalid(ddev_site: DdevSite, stub: Stub) -> None:
    stub.probe_answers({"content_export": [{"default": {}}]})
    selector = ContentSelector("node")
    expect_error("APG_DDEV_PROBE_INVALID", lambda: ddev_site.export_content([selector]))


def test_driver_is_registered_as_ddev(approot: Path) -> None:
    from ai_proving_ground.sites.base import driver_names, get_driver

    assert "ddev" in driver_names()
    assert isinstance(get_driver("ddev", approot), DdevSite)
