"""The stub ``ddev``'s site: Drupal state in one JSON file, changed and read as drush would.

Used when the scenario names ``"site": "<state.json>"`` and no rule matched. What it models:
``drush recipe`` (install, ``config/*.yml``, ``simpleConfigUpdate``, default content with
existing UUIDs skipped), ``config:set``/``config:get``/``pm:list``/``cr``/``core:status``/
``updatedb:status`` in their real output shapes (tests/ddev/golden), ``sql:dump --gzip`` and
``ddev import-db`` (the state is the database), and the probe. Stored field values are strings,
as Drupal's PDO returns them; the probe's answer for entities comes from the project's real
``probe.php`` (its ``fieldItems``, run by php on probe_harness.php), so the casting tested is
the probe's own. Views and served pages: see stub_views.py.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import stub_menus
import stub_views
import yaml

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
PROBE = HERE.parent.parent / "scripts" / "ai_proving_ground" / "sites" / "ddev" / "probe.php"

# Declared property types per field type (core's FieldItem propertyDefinitions), for the probe.
PROPERTY_TYPES = {
    "integer": {"value": "integer"},
    "list_integer": {"value": "integer"},
    "boolean": {"value": "boolean"},
    "float": {"value": "float"},
    "timestamp": {"value": "timestamp"},
    "entity_reference": {"target_id": "integer"},
}
# enabled is a menu link's published key
BASE_FIELDS = {"title": "string", "status": "boolean", "enabled": "boolean"}
# MenuLinkContent's typed base fields (the probe casts their stored strings by these).
MENU_LINK_FIELDS = {"expanded": "boolean", "external": "boolean", "rediscover": "boolean",
                    "weight": "integer", "link": "link"}
CREATED = 1796112808  # the corpus site's request time, which content without created gets
# What Drupal 10.3's exporter (the probe's fallback) writes for a node besides its stored fields,
# in the node's field order: the site's own author, revision author, promote, sticky and
# translation flag (created, changed and revision metadata it leaves out).
NODE_EXPORT_BASE = (("revision_uid", [{"target_id": 1}]), ("status", None), ("uid", [{"target_id": 1}]),
                    ("title", None), ("promote", [{"value": True}]), ("sticky", [{"value": False}]),
                    ("revision_translation_affected", [{"value": True}]))


def capture(name: str) -> dict[str, Any]:
    (path,) = sorted((GOLDEN / "drush").glob(f"[0-9][0-9]-{name}.json"))
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def stored(value: Any) -> str | None:
    """A value as the database hands it back through PDO: a string (or NULL). A mapping is a
    JSON column (Canvas stores a component's inputs so)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class RecipeFailed(Exception):
    """What a recipe's content import throws: drush prints the message and exits 1."""


class ProbeFailed(Exception):
    """What probe.php throws: drush prints its [error] line and exits 1."""


class Site:
    def __init__(self, path: Path, project: Path) -> None:
        self.path, self.project = path, project
        self.state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))

    def save(self) -> None:
        self.path.write_text(json.dumps(self.state), encoding="utf-8")

    def host(self, container_path: str) -> Path:
        return self.project / container_path.removeprefix("/var/www/html").lstrip("/")

    # ------------------------------------------------------------------ commands

    def answer(self, command: list[str], request: Any) -> tuple[str, str, int] | None:
        if command[:1] == ["import-db"]:
            return self.import_db(command)
        if command[:2] != ["exec", "drush"]:
            return None
        verb, args = command[2], command[3:]
        if verb == "php:script":
            try:
                return json.dumps(self.probe(request), separators=(",", ":")) + "\n", "", 0
            except ProbeFailed as exc:
                return "", f" [error]  InvalidArgumentException: {exc}\n", 1
        handler = getattr(self, "drush_" + verb.replace(":", "_").replace("-", "_"), None)
        return None if handler is None else handler(args)

    def golden_answer(self, name: str) -> tuple[str, str, int]:
        data = capture(name)
        return data["stdout"], data["stderr"], data["exit"]

    def drush_core_status(self, args: list[str]) -> tuple[str, str, int]:
        return self.golden_answer("core-status-json")

    def drush_cr(self, args: list[str]) -> tuple[str, str, int]:
        stub_views.rebuild_router(self.state)
        self.save()
        return self.golden_answer("cr")

    def drush_updatedb_status(self, args: list[str]) -> tuple[str, str, int]:
        return self.golden_answer("updatedb-status-none-pending-json")

    def drush_pm_list(self, args: list[str]) -> tuple[str, str, int]:
        rows = json.loads(capture("pm-list-module-enabled-json")["stdout"])
        template = next(iter(rows.values()))
        enabled = {n: m for n, m in self.state["modules"].items() if m["enabled"]}
        out = {
            n: template | {"name": n, "display_name": f"{n} ({n})", "path": m["path"]}
            for n, m in enabled.items()
        }
        return json.dumps(out, indent=4) + "\n", "", 0

    def drush_config_set(self, args: list[str]) -> tuple[str, str, int]:
        positional = [a for a in args if not a.startswith("-")]
        name, key, value = positional[:3]
        data = yaml.safe_load(value) if "--input-format=yaml" in args else value
        if key == "?":
            self.state["config"][name] = data
        else:  # a dotted key names a nested key, as drush's config:set reads it
            *parents, last = key.split(".")
            cursor = self.state["config"].setdefault(name, {})
            for part in parents:
                cursor = cursor.setdefault(part, {})
            cursor[last] = data
        self.save()
        return capture("config-set-view-yaml")["stdout"], "", 0

    def drush_config_delete(self, args: list[str]) -> tuple[str, str, int]:
        (name,) = [a for a in args if not a.startswith("-")][:1]
        if self.state["config"].pop(name, None) is None:
            stdout, _stderr, code = self.golden_answer("config-delete-missing")
            return stdout, f" [error]  Config {name} does not exist \n", code
        self.save()
        return self.golden_answer("config-delete")

    def drush_entity_delete(self, args: list[str]) -> tuple[str, str, int]:
        """``drush entity:delete TYPE IDS`` (no capture: its success line as Drush 13 words it)."""
        entity_type, ids = [a for a in args if not a.startswith("-")][:2]
        wanted = set(ids.split(","))
        doomed = [u for u, e in self.state["entities"].items()
                  if e["entity_type"] == entity_type and str(e["id"]) in wanted]
        for uuid in doomed:
            del self.state["entities"][uuid]
        self.save()
        return "", f" [success] Deleted {entity_type} entity Ids: {ids}\n", 0

    def drush_sql_dump(self, args: list[str]) -> tuple[str, str, int]:
        (target,) = [a.split("=", 1)[1] for a in args if a.startswith("--result-file=")]
        data = json.dumps(self.state).encode()
        if "--gzip" in args:  # drush appends .gz then; without it the file is the one named
            target, data = target + ".gz", gzip.compress(data)
        self.host(target).write_bytes(data)
        return "", f" [success] Database dump saved to {target}\n", 0

    def import_db(self, command: list[str]) -> tuple[str, str, int]:
        (source,) = [a.split("=", 1)[1] for a in command if a.startswith("--file=")]
        data = Path(source).read_bytes()
        if source.endswith(".gz"):
            data = gzip.decompress(data)
        self.state = json.loads(data)
        self.save()
        return "Successfully imported database 'db' for bed\n", "", 0

    def drush_recipe(self, args: list[str]) -> tuple[str, str, int]:
        recipe = self.host(args[0])
        spec = yaml.safe_load((recipe / "recipe.yml").read_text(encoding="utf-8"))
        for module in spec.get("install") or []:
            self.state["modules"].setdefault(
                module,
                {
                    "name": module,
                    "enabled": True,
                    "version": "10.3.7",
                    "package": "Core",
                    "path": f"core/modules/{module}",
                    "schema_installed": 10000,
                    "schema_code": 10000,
                },
            )
            self.state["modules"][module]["enabled"] = True
        imported = {}
        for path in sorted((recipe / "config").glob("*.yml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            active = self.state["config"].get(path.stem)
            if active is None:
                imported[path.stem] = drupal_stored(path.stem, data)
                continue
            # Drupal 10.3 compares existing config with the recipe's, strictly (key order too),
            # leaving out uuid and _core; on a mismatch nothing is changed.
            if not php_identical({k: v for k, v in active.items() if k not in ("uuid", "_core")}, data):
                return "", pre_existing_config_error(path.stem), 1
        self.state["config"].update(imported)
        for name, actions in ((spec.get("config") or {}).get("actions") or {}).items():
            for key, value in (actions.get("simpleConfigUpdate") or {}).items():
                self.state["config"].setdefault(name, {})[key] = value
        try:
            for path in sorted((recipe / "content").glob("**/*.yml")):
                self.import_content(yaml.safe_load(path.read_text(encoding="utf-8")))
        except RecipeFailed as exc:
            return "", f"\nIn Importer.php line 150:\n\n  {exc}\n\n", 1
        stub_views.rebuild_router(self.state)  # modules installed, config entities saved
        self.save()
        return f"\n [OK] {spec['name']} applied successfully\n\n", "", 0

    def import_content(self, document: dict[str, Any]) -> None:
        meta = document["_meta"]
        if meta["uuid"] in self.state["entities"]:
            return  # Existing::Skip, as recipes import content
        values = dict(document.get("default") or {})
        # created is a base field Drupal takes as given, else the request time (the corpus's).
        created = int((values.pop("created", None) or [{"value": CREATED}])[0]["value"])
        self.validate_content(meta, values)
        self.state["next_id"] = self.state.get("next_id", 0) + 1
        self.state["entities"][meta["uuid"]] = {
            "entity_type": meta["entity_type"],
            "uuid": meta["uuid"],
            "id": self.state["next_id"],
            "bundle": meta.get("bundle", meta["entity_type"]),
            "fields": {name: stored_items(items) for name, items in values.items()},
            "created": created,
        }

    def validate_content(self, meta: dict[str, Any], values: dict[str, Any]) -> None:
        """What core's default-content Importer refuses (InvalidEntityException, the recipe
        fails): a node of a type the site lacks, a field it lacks, a required field left empty,
        a list value it does not allow."""
        if meta["entity_type"] != "node":
            return
        bundle, config = meta.get("bundle"), self.state["config"]
        if f"node.type.{bundle}" not in config:
            raise RecipeFailed(f"Missing bundle entity, entity type node, entity id {bundle}.")
        instances = {n.rsplit(".", 1)[1]: c for n, c in config.items()
                     if n.startswith(f"field.field.node.{bundle}.")}
        for name, items in values.items():
            if name not in instances and name not in BASE_FIELDS:
                raise RecipeFailed(f"Field {name} is unknown.")
            storage = config.get(f"field.storage.node.{name}") or {}
            allowed = [a["value"] for a in (storage.get("settings") or {}).get("allowed_values") or []]
            for item in items:
                if allowed and item.get("value") not in allowed:
                    raise RecipeFailed(f"{name}.0.value: The value you selected is not a valid choice.")
        for name, instance in instances.items():
            if instance.get("required") and not values.get(name):
                raise RecipeFailed(f"{name}: This value should not be null.")

    def drush_field_create(self, args: list[str]) -> tuple[str, str, int]:
        """drush field:create with every answer given as an option: the storage and the field
        (the form and view display components it adds are left to config:set here)."""
        entity_type, bundle = [a for a in args if not a.startswith("-")][:2]
        options = dict(a.removeprefix("--").split("=", 1) for a in args if a.startswith("--") and "=" in a)
        name, field_type = options["field-name"], options["field-type"]
        config = self.state["config"]
        config.setdefault(f"field.storage.{entity_type}.{name}", {
            "id": f"{entity_type}.{name}", "field_name": name, "entity_type": entity_type,
            "type": field_type, "settings": {}, "cardinality": int(options.get("cardinality", 1))})
        config[f"field.field.{entity_type}.{bundle}.{name}"] = {
            "id": f"{entity_type}.{bundle}.{name}", "field_name": name, "entity_type": entity_type,
            "bundle": bundle, "label": options.get("field-label", name),
            "required": "--is-required" in args, "field_type": field_type}
        self.save()
        note = f"Successfully created field '{name}' on {entity_type} type with bundle '{bundle}'"
        return "", f" [success] {note}\n", 0

    # --------------------------------------------------------------------- probe

    def field_type(self, entity: dict[str, Any], name: str) -> str:
        if name in BASE_FIELDS:
            return BASE_FIELDS[name]
        if entity["entity_type"] == "menu_link_content" and name in MENU_LINK_FIELDS:
            return MENU_LINK_FIELDS[name]
        storage = self.state["config"].get(f"field.storage.{entity['entity_type']}.{name}") or {}
        return str(storage.get("type", "string"))

    def probe(self, request: dict[str, Any]) -> dict[str, Any]:
        uuids = [str(u) for u in request.get("entities") or []]
        found = {u: self.state["entities"][u] for u in uuids if u in self.state["entities"]}
        fields = cast_fields(self, found)
        entities: dict[str, Any] = dict.fromkeys(uuids)
        for uuid, entity in found.items():
            title = fields.get(f"{uuid}|title") or [{"value": ""}]
            # isPublished(): a menu link's published key is its enabled field
            published = "enabled" if entity["entity_type"] == "menu_link_content" else "status"
            status = fields.get(f"{uuid}|{published}") or [{"value": True}]
            entities[uuid] = {
                "entity_type": entity["entity_type"],
                "uuid": uuid,
                "id": entity["id"],
                "bundle": entity["bundle"],
                "label": title[0]["value"],
                "status": bool(status[0]["value"]),
                "fields": {name: fields[f"{uuid}|{name}"] for name in sorted(entity["fields"])},
                "created": entity.get("created", CREATED),
                "changed": entity.get("created", CREATED),
            }
        config = self.state["config"]
        exported = (
            {"content_export": self.export(request["content_export"])} if "content_export" in request else {}
        )
        if "entity_update" in request:
            exported["entity_update"] = self.update_entity(request["entity_update"])
        if "entity_create" in request:
            exported["entity_create"] = self.create_entity(request["entity_create"])
        return exported | {
            "modules": self.state["modules"] if request.get("modules") else {},
            "config": {n: config.get(n) for n in request.get("config") or []},
            "config_names": {
                p: sorted(n for n in config if n.startswith(p)) for p in request.get("config_prefixes") or []
            },
            "entities": entities,
            "counts": [self.count(q) for q in request.get("counts") or []],
            "views": [stub_views.view_answer(self.state, q) for q in request.get("views") or []],
            "canvas": [self.canvas(ref) for ref in request.get("canvas") or []],
            "pages": [stub_views.page_answer(self.state, q) for q in request.get("pages") or []],
            "menus": stub_menus.menus_answer(self.state, request.get("menus") or []),
            "pending_updates": [],
            "versions": self.state["versions"] if request.get("versions") else None,
        }

    def create_entity(self, create: dict[str, Any]) -> dict[str, Any]:
        """The probe's entity_create: a new entity of the type (and bundle), its values set as
        entity_update sets them; an unknown type or bundle, or an existing UUID, is refused."""
        entity_type = str(create["entity_type"])
        bundle = str(create.get("bundle") or entity_type)
        if entity_type not in ("node", "taxonomy_term", "menu_link_content", "canvas_page"):
            raise ProbeFailed(f"APG probe: no entity type {entity_type}.")
        bundles = {"node": "node.type.", "taxonomy_term": "taxonomy.vocabulary."}
        if entity_type in bundles and f"{bundles[entity_type]}{bundle}" not in self.state["config"]:
            raise ProbeFailed(f"Missing bundle entity, entity type {entity_type}, entity id {bundle}.")
        uuid = str(create.get("uuid") or f"00000000-0000-4000-8000-{self.state.get('next_id', 0) + 1:012d}")
        if uuid in self.state["entities"]:
            raise ProbeFailed(f"APG probe: an entity with uuid {uuid} exists.")
        self.state["next_id"] = self.state.get("next_id", 0) + 1
        self.state["entities"][uuid] = {"entity_type": entity_type, "uuid": uuid,
                                        "id": self.state["next_id"], "bundle": bundle, "fields": {}}
        return self.update_entity({"entity_type": entity_type, "target": uuid,
                                   "values": create["values"], "new": True})

    def update_entity(self, update: dict[str, Any]) -> dict[str, Any]:
        """The probe's entity_update: values merged into the stored entity, as strings."""
        target = str(update["target"])
        entity = next(
            (e for u, e in self.state["entities"].items()
             if e["entity_type"] == update["entity_type"] and target in (u, str(e["id"]))),
            None,
        )
        if entity is None:
            raise ProbeFailed(f"APG probe: no {update['entity_type']} entity with id or uuid {target}.")
        for name, items in update["values"].items():
            menu_base = entity["entity_type"] == "menu_link_content" and name in stub_menus.BASE_FIELDS
            if (name not in entity["fields"] and name not in BASE_FIELDS and not menu_base
                    and not update.get("new")):
                what = f"{entity['entity_type']} {entity['bundle']}"
                raise ProbeFailed(f"APG probe: {what} has no field {name}.")
            # A scalar sets the item's main property, as FieldItemBase::setValue() does: a link's is uri.
            main = "uri" if self.field_type(entity, name) == "link" else "value"
            entity["fields"][name] = stored_items(field_items(items, main))
        self.save()
        label = entity["fields"].get("title") or [{"value": ""}]
        summary = {key: entity[key] for key in ("id", "uuid", "bundle")}
        return summary | {"label": label[0]["value"]}

    def canvas(self, ref: dict[str, Any]) -> dict[str, Any] | None:
        """A page entity's or a region's component tree, items read by the probe's componentItems."""
        if not self.state["modules"].get("canvas", {}).get("enabled"):
            return None
        if ref["kind"] == "region":
            region = self.state["config"].get(ref["key"])
            if region is None:
                return None
            label, items = str(region.get("region", ref["key"])), region.get("component_tree") or []
            status = bool(region.get("status", True))
        else:
            page = self.state["entities"].get(ref["key"])
            if page is None or page["entity_type"] != "canvas_page":
                return None
            label, items = page["fields"]["title"][0]["value"], page["fields"].get("components", [])
            status = (page["fields"].get("status") or [{"value": "1"}])[0]["value"] == "1"
        return {"kind": ref["kind"], "key": ref["key"], "label": label,
                "components": probe_method("componentItems", items), "status": status}

    def export(self, selectors: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Default-content documents, field values cast by the probe's own fieldItems."""
        chosen = {
            u: e
            for u, e in self.state["entities"].items()
            for s in selectors
            if e["entity_type"] == s["entity_type"]
            and s.get("bundle") in (None, e["bundle"])
            and (not s.get("uuids") or u in s["uuids"])
        }
        fields = cast_fields(self, chosen)
        return [
            {
                "_meta": {
                    "version": "1.0",
                    "entity_type": e["entity_type"],
                    "uuid": u,
                    "bundle": e["bundle"],
                    "default_langcode": "en",
                },
                "default": drupal_export_order(e, {name: fields[f"{u}|{name}"] for name in e["fields"]}),
            }
            for u, e in sorted(chosen.items(), key=lambda pair: pair[1]["id"])
        ]

    def count(self, question: dict[str, Any]) -> int:
        return sum(
            1
            for e in self.state["entities"].values()
            if e["entity_type"] == question["entity_type"] and question.get("bundle") in (None, e["bundle"])
            and all(self.meets(e, c) for c in question.get("conditions") or [])
        )

    @staticmethod
    def meets(entity: dict[str, Any], condition: dict[str, Any]) -> bool:
        """An entity query's ``=`` condition on the stored strings (any item matches, as the
        query's join does; the label is the type's label field, status a boolean's "1"/"0").
        Other operators are not modelled here: they match everything."""
        if condition.get("operator", "=") != "=":
            return True
        labels = {"taxonomy_term": "name"}  # the label key; title for the others here
        field = condition["field"]
        name = labels.get(entity["entity_type"], "title") if field == "label" else field
        # An entity saved without a status is published, as its base field's default is.
        items = entity["fields"].get(name) or ([{"value": "1"}] if name == "status" else [])
        return any(item.get("value") == stored(condition.get("value")) for item in items)


def drupal_export_order(entity: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A node's exported fields as Drupal writes them: its base fields first, in the node's order."""
    if entity["entity_type"] != "node":
        return values
    base = {name: values.get(name) if added is None else added for name, added in NODE_EXPORT_BASE}
    return {k: v for k, v in base.items() if v is not None} | {
        k: v for k, v in values.items() if k not in base}


def php_identical(a: Any, b: Any) -> bool:
    """PHP's ``===`` on arrays: same keys in the same order, same values; {} and [] are one."""
    if isinstance(a, (dict, list)) and isinstance(b, (dict, list)):
        pairs_a = list(a.items()) if isinstance(a, dict) else list(enumerate(a))
        pairs_b = list(b.items()) if isinstance(b, dict) else list(enumerate(b))
        return len(pairs_a) == len(pairs_b) and all(
            ka == kb and php_identical(va, vb) for (ka, va), (kb, vb) in zip(pairs_a, pairs_b, strict=True)
        )
    return type(a) is type(b) and a == b


def drupal_stored(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """What Drupal stores for imported config: the real capture of that object where one exists
    (defaults filled in, a uuid and _core added), else the data with a uuid."""
    captured = GOLDEN / "config" / f"{name}.yml"
    if captured.is_file():
        stored_shape: dict[str, Any] = yaml.safe_load(captured.read_text(encoding="utf-8"))
        return stored_shape
    return {"uuid": f"00000000-0000-4000-8000-{abs(hash(name)) % 10**12:012d}", **data}


def pre_existing_config_error(name: str) -> str:
    """Drush's report of core's RecipePreExistingConfigException, as a console block."""
    message = f"The configuration '{name}' exists already and does not match the recipe's configuration"
    width = max(len(message) + 4, 40)
    return f"\nIn ConfigConfigurator.php line 48:\n{' ' * width}\n  {message}  \n{' ' * width}\n\n"


def field_items(value: Any, main: str = "value") -> list[dict[str, Any]]:
    """A value as ``$entity->set()`` takes it: a scalar (the main property), an item, or a list
    of either."""
    listed = value if isinstance(value, list) else [value]
    return [item if isinstance(item, dict) else {main: item} for item in listed]


def stored_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # A link's options are a serialized map that Drupal unserializes on load: a map, not a string.
    return [{k: v if k == "options" else stored(v) for k, v in item.items()} for item in items]


def probe_method(name: str, *arguments: Any) -> Any:
    """One of the real probe's methods on plain JSON arguments (probe_harness.php)."""
    done = subprocess.run(
        ["php", str(HERE / "probe_harness.php"), str(PROBE)],
        input=json.dumps({"call": "method", "method": name, "arguments": list(arguments)}),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def cast_fields(site: Site, entities: dict[str, Any]) -> dict[str, Any]:
    """Every field of every entity through the real probe's fieldItems, in one php run."""
    batch = {}
    for uuid, entity in entities.items():
        for name, items in entity["fields"].items():
            field_type = site.field_type(entity, name)
            types = PROPERTY_TYPES.get(field_type, {"value": "string"})
            batch[f"{uuid}|{name}"] = {
                "type": field_type,
                "items": [
                    {"values": item, "types": {k: t for k, t in types.items() if k in item}} for item in items
                ],
            }
    if not batch:
        return {}
    done = subprocess.run(
        ["php", str(HERE / "probe_harness.php"), str(PROBE)],
        input=json.dumps({"call": "fieldItemsMany", "fields": batch}),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
