"""Every config-shapes case of the Drupal 10.3.7 corpus (golden/config-shapes/), replayed on the
embedded site: was the input accepted, is what is stored what Drupal stored (values and key
order), and can a node then hold a value in the field. One test per case, named for it.

Raw cases replay their ``drush config:set`` commands through ``apg site config:set``. Cases the
embedded site does not agree with yet are marked xfail(strict) with the reason, so the count
of agreeing cases is what the suite reports and a case that starts agreeing is noticed.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamlio
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

GOLDEN = Path(__file__).parent / "golden" / "config-shapes"
CASES = sorted(GOLDEN.glob("*.json"))
MODULES = ["taxonomy", "text", "options", "datetime", "link", "telephone", "file", "image",
           "menu_link_content"]
# The raw content type every raw field case puts its field on (its own case is kept back).
GRAW = {"type": "graw", "name": "Golden raw type"}

# What the embedded site does not do as Drupal does yet, by case.
NO_ENTITY_API = ("objects made through the entity API (as Field UI saves them) are not built:"
                 " no field:create command fills uuid, dependencies, defaults and displays")
NOT_AGREEING: dict[str, str] = {
    "054-content-node-api": "content in the fields the entity API made: those fields are not"
                            " built (see the -api cases)",
    "055-content-node-raw": "Drupal silently drops values for fields it does not know (here"
                            " field_gr_string, whose case is kept back); the embedded site"
                            " refuses an undefined field, as its design says",
}


def load_case(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _reason(path: Path, case: dict[str, Any]) -> str | None:
    if path.stem in NOT_AGREEING:
        return NOT_AGREEING[path.stem]
    if "commands" not in case:
        return NO_ENTITY_API
    return None


def _is_field_api(case: dict[str, Any]) -> bool:
    return "commands" not in case and "field_settings" in case["input"]


FIELD_API = [p for p in CASES if _is_field_api(load_case(p))]


def _params() -> list[Any]:
    params = []
    for path in CASES:
        if path in FIELD_API:  # replayed through field:create below
            continue
        reason = _reason(path, load_case(path))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.fixture
def shapes_site(fixtures_bed: Path) -> Path:
    """The shared kb_docs bed (as the corpus site) with the field type modules installed."""
    EmbeddedSite(fixtures_bed).install_modules(MODULES)
    return fixtures_bed


def _config_set(site: Any, approot: Path, name: str, data: Any) -> int:
    return int(site(approot, "config:set", name, "?", json.dumps(data),
                    "--input-format=json").rc)


def _set_key(site: Any, approot: Path, name: str, key: str, value: str) -> int:
    return int(site(approot, "config:set", name, key, value).rc)


def _replay(site: Any, approot: Path, case: dict[str, Any]) -> list[int]:
    codes = []
    for command in case["commands"]:
        argv = shlex.split(command["argv"])
        if command.get("yaml"):  # drush config:set NAME '?' YAML
            data = yamlio.loads(command["yaml"])
            name = next(n for n in case["input"] if case["input"][n] == data)
            codes.append(_config_set(site, approot, name, data))
        else:  # drush config:set NAME KEY VALUE
            name, key, value = argv[-3:]
            codes.append(_set_key(site, approot, name, key, value))
    return codes


def _stored(approot: Path, names: list[str]) -> dict[str, Any]:
    return dict(EmbeddedSite(approot).read_state(StateQuery(config=tuple(names))).config)


def _ordered(data: Any) -> Any:
    """A mapping with its key order made visible, so that order is compared too."""
    if isinstance(data, dict):
        return [[k, _ordered(v)] for k, v in data.items()]
    if isinstance(data, list):
        return [_ordered(v) for v in data]
    return data


def _node_holds(site: Any, approot: Path, bundle: str, field: str) -> bool:
    """Whether a node created with a value in ``field`` keeps it."""
    rc, out, _ = site(approot, "entity:create", "node", bundle, "--set", "title=Probe",
                      "--set", f"{field}=1", "--format=json")
    if rc != 0:
        return False
    uuid = json.loads(out)["uuid"]
    record = EmbeddedSite(approot).read_state(StateQuery(entities=(uuid,))).entities[uuid]
    return record is not None and bool(record.fields.get(field))


@pytest.mark.parametrize("path", _params())
def test_config_shape_case_agrees_with_drupal(shapes_site: Path, site: Any, path: Path) -> None:
    case = load_case(path)
    if any(".graw." in name for name in case["input"]):
        assert _config_set(site, shapes_site, "node.type.graw", GRAW) == 0
    codes = _replay(site, shapes_site, case)
    assert codes == [c["exit"] for c in case["commands"]], "accepted or refused as on Drupal"
    stored = case["stored"]
    if path.stem == "007-system-site":  # site-specific keys (uuid, mail) differ by design
        found = _stored(shapes_site, ["system.site"])["system.site"]
        assert {k: found[k] for k in ("name", "slogan", "page")} == {
            k: stored["system.site"][k] for k in ("name", "slogan", "page")}
        return
    assert _ordered(_stored(shapes_site, sorted(stored))) == _ordered(
        {name: stored[name] for name in sorted(stored)}), "stored as Drupal stores it"
    after = case.get("after") or {}
    tables = {t.removeprefix("node__"): exists
              for t, exists in (after.get("tables_exist") or {}).items() if t.startswith("node__")}
    # Every field set raw on graw: Drupal made no table (or never saw the field), so a node
    # cannot hold a value in it, whatever the variant's flaw.
    raw_fields = {n.rsplit(".", 1)[1]: False for n in case["input"]
                  if n.startswith("field.field.node.graw.")}
    for field, exists in {**raw_fields, **tables}.items():
        assert _node_holds(site, shapes_site, "graw", field) == exists, \
            "a node holds a value in the field exactly when Drupal made its table"


def _same_uuid(found: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """``found`` with Drupal's uuid in place of its own, once its own is shown to be a uuid."""
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}",
                        found["uuid"]), found["uuid"]
    return {**found, "uuid": stored["uuid"]}


@pytest.mark.parametrize("path", FIELD_API, ids=[p.stem for p in FIELD_API])
def test_field_made_as_field_ui_agrees_with_drupal(shapes_site: Path, site: Any,
                                                   path: Path) -> None:
    """The case's field made with ``field:create``: storage and field are stored as Drupal
    stored them; the default form and view displays get the component Drupal gave it (its
    weight follows the fields made before it, some of them kept back from the corpus, so it is
    checked to come last) and other displays list it as hidden."""
    case = load_case(path)
    given, stored = case["input"], case["stored"]
    # The content type as case 008 left it (type, body field, its displays).
    for name, data in sorted(load_case(GOLDEN / "008-content-type-api.json")["stored"].items(),
                             key=lambda item: ".entity_" in item[0]):
        assert _config_set(site, shapes_site, name, data) == 0, name
    result = site(shapes_site, "field:create", "node", given["bundle"],
                  f"--field-name={given['name']}", f"--field-type={given['type']}",
                  f"--field-label={given['label']}", f"--cardinality={given['cardinality']}",
                  f"--storage-settings={json.dumps(given['storage_settings'])}",
                  f"--field-settings={json.dumps(given['field_settings'])}")
    assert result.rc == 0, result
    objects = [n for n in stored if n.startswith("field.")]
    found = _stored(shapes_site, objects)
    for name in objects:
        assert _ordered(_same_uuid(found[name], stored[name])) == _ordered(stored[name]), name
    displays = _stored(shapes_site, [n for n in stored if ".entity_" in n])
    for name, display in displays.items():
        expected, got = stored[name], display
        if name.endswith(".default"):
            component = dict(got["content"][given["name"]])
            weight = component.pop("weight")
            assert weight == max(c["weight"] for c in got["content"].values()), name
            assert _ordered(component) == _ordered(
                {k: v for k, v in expected["content"][given["name"]].items() if k != "weight"})
        else:
            assert got["hidden"][given["name"]] is expected["hidden"][given["name"]] is True
        assert set(got["dependencies"]["module"]) <= set(expected["dependencies"]["module"])
        assert f"field.field.node.gapi.{given['name']}" in got["dependencies"]["config"]


def test_the_corpus_is_all_here() -> None:
    assert len(CASES) == 52
