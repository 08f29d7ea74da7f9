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
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamlio
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.checks import same_stored

GOLDEN = Path(__file__).parent / "golden" / "config-shapes"
CASES = sorted(GOLDEN.glob("*.json"))
MODULES = ["taxonomy", "text", "options", "datetime", "link", "telephone", "file", "image",
           "menu_link_content"]
# The raw content type every raw field case puts its field on (its own case is kept back).
GRAW = {"type": "graw", "name": "Golden raw type"}

# What the embedded site does not do as Drupal does yet, by case (none now: every case agrees).
NOT_AGREEING: dict[str, str] = {}


def load_case(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _is_field_api(case: dict[str, Any]) -> bool:
    return "commands" not in case and "field_settings" in case["input"]


FIELD_API = [p for p in CASES if _is_field_api(load_case(p))]
# Made through the entity API otherwise: replayed with the command that makes them so, below.
ENTITY_API = [p for p in CASES if "commands" not in load_case(p) and p not in FIELD_API]


def _params(paths: list[Path]) -> list[Any]:
    params = []
    for path in paths:
        reason = NOT_AGREEING.get(path.stem)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.fixture
def shapes_site(corpus_bed: Path) -> Path:
    """The corpus site's bed (kb_docs version 2) with the field type modules installed."""
    EmbeddedSite(corpus_bed).install_modules(MODULES)
    return corpus_bed


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


@pytest.mark.parametrize("path", _params([p for p in CASES if p not in FIELD_API + ENTITY_API]))
def test_config_shape_case_agrees_with_drupal(shapes_site: Path, site: Any, path: Path) -> None:
    case = load_case(path)
    if any(".graw." in name for name in case["input"]):
        assert _config_set(site, shapes_site, "node.type.graw", GRAW) == 0
    codes = _replay(site, shapes_site, case)
    assert codes == [c["exit"] for c in case["commands"]], "accepted or refused as on Drupal"
    if "cr" in case:  # then drush cr: it fails where Drupal could not load the config
        rebuilt = site(shapes_site, "cr")
        assert rebuilt.rc == case["cr"]["exit"], rebuilt.err
        if rebuilt.rc:
            assert rebuilt.err.startswith("APG_SITE_CR_FAILED TypeError: ")
            assert "must be of type array, null given" in rebuilt.err
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
    assert [p.stem for p in ENTITY_API] == ["001-vocabulary-api-with-terms",
                                            "008-content-type-api", "054-content-node-api",
                                            "055-content-node-raw"]


def _created(result: Any) -> str:
    assert result.rc == 0, result
    return str(json.loads(result.out)["uuid"])


def _record(approot: Path, uuid: str) -> Any:
    record = EmbeddedSite(approot).read_state(StateQuery(entities=(uuid,))).entities[uuid]
    assert record is not None, uuid
    return record


def _as_probe_sees(record: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """An embedded record in the probe's terms: what Drupal's probe reported of the entity."""
    return {"entity_type": record.entity_type, "id": record.id, "bundle": record.bundle,
            "label": record.label, "status": record.status,
            "fields": {n: record.fields.get(n) for n in fields if n not in ("title", "status")}}


def _probe_view(entity: dict[str, Any]) -> dict[str, Any]:
    return {**{k: entity[k] for k in ("entity_type", "id", "bundle", "label", "status")},
            "fields": {n: v for n, v in entity["fields"].items() if n not in ("title", "status")}}


def _agrees_on_config(approot: Path, stored: dict[str, Any]) -> None:
    found = _stored(approot, sorted(stored))
    for name in sorted(stored):
        assert _ordered(_same_uuid(found[name], stored[name])) == _ordered(stored[name]), name


def _vocabulary_with_terms(site: Any, approot: Path, case: dict[str, Any]) -> None:
    """Vocabulary::create()->save() as vocabulary:create; each Term::create() as entity:create,
    a parent named by the id its term got."""
    vocabulary, terms = case["input"]["vocabulary"], case["input"]["terms"]
    vid = vocabulary["vid"]
    assert site(approot, "vocabulary:create", vid, f"--name={vocabulary['name']}",
                f"--description={vocabulary['description']}").rc == 0
    _agrees_on_config(approot, case["stored"])
    ids: dict[str, int] = {}
    for term, drupal_uuid in zip(terms, case["api_result"]["uuids"], strict=True):
        values: dict[str, Any] = {"name": term["name"], "weight": term["weight"]}
        if "parent" in term:
            values["parent"] = [{"target_id": ids[term["parent"]]}]
        uuid = _created(site(approot, "entity:create", "taxonomy_term", vid,
                             "--values", json.dumps(values), "--format=json"))
        record, drupal = _record(approot, uuid), case["probe"]["entities"][drupal_uuid]
        ids[term["name"]] = record.id
        assert _as_probe_sees(record, drupal["fields"]) == _probe_view(drupal)
        held = case["to_array"][drupal_uuid]
        for name in values.keys() - {"name"}:
            assert same_stored(held[name], record.fields[name]), name


def _content_type(site: Any, approot: Path, case: dict[str, Any]) -> None:
    """NodeType::create()->save() and node_add_body_field() as node-type:create."""
    given = case["input"]
    result = site(approot, "node-type:create", given["type"], f"--name={given['name']}",
                  f"--description={given['description']}")
    assert result.rc == 0, result
    _agrees_on_config(approot, case["stored"])


def _content_on_raw_fields(site: Any, approot: Path, case: dict[str, Any]) -> None:
    """Node::create() with a value for every raw field: Drupal saves the node with its title
    and status only (it never saw those fields, and knows no field_gr_string at all, whose
    case is kept back); the embedded site saves the same and names each dropped field."""
    assert _config_set(site, approot, "node.type.graw", GRAW) == 0
    for path in CASES:
        raw = load_case(path)
        if "commands" in raw and re.fullmatch(r"\d+-field-.*-raw", path.stem):
            assert _replay(site, approot, raw) == [0] * len(raw["commands"]), path.stem
    given = case["input"]
    attempts = [({"title": given["title"], **given["values"]}, case["probe"]),
                ({"title": f"{given['title']}, title only"}, case["title_only"]["probe"])]
    for values, probe in attempts:
        result = site(approot, "entity:create", "node", given["type"],
                      "--values", json.dumps(values), "--format=json")
        record = _record(approot, _created(result))
        (drupal,) = probe["entities"].values()
        assert {**_as_probe_sees(record, drupal["fields"]), "id": drupal["id"]} == \
            _probe_view(drupal)
        dropped = sorted(re.findall(r"^APG_ENTITY_FIELD_DROPPED (\S+):", result.err, re.M))
        assert dropped == sorted(set(values) - {"title"}), result.err
        assert not record.fields, "no value of a field Drupal does not know is kept"


def _png(width: int, height: int) -> bytes:
    """A black RGB PNG of that size (the image case's golden.png was 4 x 3)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _field_request(name: str) -> dict[str, Any]:
    """The gapi field ``name`` as its -api case made it, or (a case kept back) as the raw
    case of its type set its storage, with Field UI's defaults for the rest."""
    for path in FIELD_API:
        given = load_case(path)["input"]
        if given["name"] == name:
            return dict(given)
    kind = name.removeprefix("field_ga_")
    raw = load_case(next(p for p in CASES if p.stem.endswith(f"-field-{kind}-raw"))) if any(
        p.stem.endswith(f"-field-{kind}-raw") for p in CASES) else {"input": {}}
    storage = raw["input"].get(f"field.storage.node.field_gr_{kind}", {})
    return {"name": name, "type": kind, "storage_settings": storage.get("settings", {}),
            "field_settings": {}, "cardinality": 1, "bundle": "gapi", "label": f"Golden {kind}"}


def _content_on_api_fields(site: Any, approot: Path, case: dict[str, Any]) -> None:
    """Node::create() with a value in every field the entity API made: the node holds each
    value as Drupal read it back (compared as checks compare: by stored text), references by
    id carry their target's UUID, the image its size and the link its options."""
    terms = load_case(GOLDEN / "001-vocabulary-api-with-terms.json")
    assert site(approot, "vocabulary:create", "gtags", "--name=Golden tags").rc == 0
    for term, uuid in zip(terms["input"]["terms"], terms["api_result"]["uuids"], strict=True):
        _created(site(approot, "entity:create", "taxonomy_term", "gtags", "--uuid", uuid,
                      "--set", f"name={term['name']}", "--format=json"))
    assert site(approot, "node-type:create", "gapi", "--name=Golden API type").rc == 0
    given = case["input"]
    for name in sorted(set(given["values"]) - {"body"}):
        field = _field_request(name)
        assert site(approot, "field:create", "node", "gapi", f"--field-name={name}",
                    f"--field-type={field['type']}", f"--cardinality={field['cardinality']}",
                    f"--storage-settings={json.dumps(field['storage_settings'])}",
                    f"--field-settings={json.dumps(field['field_settings'])}").rc == 0, name
    public = EmbeddedSite(approot).public_files_dir() / "golden"
    public.mkdir(parents=True, exist_ok=True)
    (public / "golden.txt").write_text("golden\n")
    (public / "golden.png").write_bytes(_png(4, 3))
    for kind, made in sorted(case["files"].items(), key=lambda file: file[1]["id"]):
        _created(site(approot, "entity:create", "file", "--uuid", made["uuid"],
                      "--set", f"uri=public://golden/golden.{kind}", "--format=json"))
    result = site(approot, "entity:create", "node", given["type"], "--values",
                  json.dumps({"title": given["title"], **given["values"]}), "--format=json")
    assert "APG_" not in result.err, result.err
    record = _record(approot, _created(result))
    (drupal,) = case["probe"]["entities"].values()
    found, expected = _as_probe_sees(record, drupal["fields"]), _probe_view(drupal)
    assert {k: v for k, v in found.items() if k != "fields"} == {
        k: v for k, v in expected.items() if k != "fields"}
    for name, items in expected["fields"].items():
        assert same_stored(items, found["fields"][name]), (name, items, found["fields"][name])


# What a menu link's toArray() and the embedded record are compared on (besides its label and
# status, the probe's): every base field Drupal stores that is not bookkeeping.
_MENU_LINK_FIELDS = ("description", "menu_name", "link", "external", "rediscover", "weight",
                     "expanded", "parent")


def _menu_with_links(site: Any, approot: Path, case: dict[str, Any]) -> None:
    """Menu::create()->save() as menu:create; each MenuLinkContent::create() as entity:create
    with Drupal's UUID, a parent named by its title given as that link's plugin id."""
    menu = case["input"]["menu"]
    (links,) = [v for k, v in case["input"].items() if k != "menu"]
    options = [f"--{key}={menu[key]}" for key in ("label", "description") if key in menu]
    assert site(approot, "menu:create", menu["id"], *options).rc == 0
    _agrees_on_config(approot, case["stored"])
    plugin_ids: dict[str, str] = {}
    for link, drupal_uuid in zip(links, case["api_result"]["uuids"], strict=True):
        values = dict(link)
        if values.get("parent") in plugin_ids:
            values["parent"] = plugin_ids[values["parent"]]
        uuid = _created(site(approot, "entity:create", "menu_link_content", "--uuid",
                             drupal_uuid, "--values", json.dumps(values), "--format=json"))
        plugin_ids[link["title"]] = f"menu_link_content:{uuid}"
        record, drupal = _record(approot, uuid), case["probe"]["entities"][drupal_uuid]
        assert _as_probe_sees(record, drupal["fields"]) == _probe_view(drupal)
        held = case["to_array"][drupal_uuid]
        for name in [n for n in _MENU_LINK_FIELDS if n in held]:
            assert same_stored(held[name], record.fields.get(name, [])), (
                name, held[name], record.fields.get(name))


def _api_replay(path: Path, case: dict[str, Any]) -> Any:
    """The replay for an -api case: by its name, or (a case kept back) by what it made."""
    if path.stem in API_REPLAYS:
        return API_REPLAYS[path.stem]
    if "menu" in case["input"]:
        return _menu_with_links
    raise AssertionError(f"{path.name}: no replay for an -api case of {sorted(case['input'])}")


API_REPLAYS = {"001-vocabulary-api-with-terms": _vocabulary_with_terms,
               "008-content-type-api": _content_type,
               "054-content-node-api": _content_on_api_fields,
               "055-content-node-raw": _content_on_raw_fields}


@pytest.mark.parametrize("path", _params(ENTITY_API))
def test_object_made_through_the_entity_api_agrees_with_drupal(shapes_site: Path, site: Any,
                                                               path: Path) -> None:
    case = load_case(path)
    _api_replay(path, case)(site, shapes_site, case)


MADE_BY_US = Path(__file__).parent / "data" / "menu-api-with-links.json"


def test_menu_made_through_the_entity_api_agrees_with_drupal_code(shapes_site: Path,
                                                                   site: Any) -> None:
    """A case of our own in the corpus's format (read off Drupal's code, not captured; see
    data/README.md), replayed as a kept-back menu case would be."""
    case = load_case(MADE_BY_US)
    assert "not captured" in case["provenance"]
    _api_replay(MADE_BY_US, case)(site, shapes_site, case)
