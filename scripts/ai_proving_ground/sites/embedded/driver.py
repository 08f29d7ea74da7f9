"""The embedded site: a complete, Drupal-shaped site whose state lives in one SQLite file."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.sites.base import (
    ContentSelector,
    EntityRecord,
    PendingUpdate,
    RecipeReport,
    SiteDriver,
    StateAnswer,
    StateQuery,
    register_driver,
)
from ai_proving_ground.sites.embedded import (
    config_rules,
    config_schema,
    content_model,
    modules,
    raw_config,
    reads,
)
from ai_proving_ground.sites.embedded.reads import EXTENSION_CONFIG, SCHEMA_COLLECTION
from ai_proving_ground.sites.embedded.store import Store, as_stored, open_session


@register_driver("sqlite")
class EmbeddedSite(SiteDriver):
    """The embedded site driver; also the engine behind ``apg site``."""

    def __init__(self, approot: Path) -> None:
        super().__init__(approot)
        self.layout = BedLayout(approot)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def install(cls, approot: Path) -> EmbeddedSite:
        """Create the database with the required modules (system, user) installed."""
        layout = BedLayout(approot)
        if layout.database.exists():
            raise ApgError("APG_SITE_EXISTS", f"{layout.database} already exists")
        Store.create(layout.database).close()
        site = cls(approot)
        with site.session() as store:
            store.config_set(EXTENSION_CONFIG, {"module": {}, "theme": {"olivero": 0},
                                                "profile": "embedded"})
            site._install(store, ["system", "user"])
        return site

    @contextlib.contextmanager
    def session(self) -> Iterator[Store]:
        """One open database connection; writes inside it are all-or-nothing."""
        with open_session(self.layout.database) as store:
            yield store

    # ------------------------------------------------------------------ reads

    def read_state(self, query: StateQuery) -> StateAnswer:
        self.round_trips += 1
        with self.session() as store:
            return reads.answer(self.approot, store, query)

    def enabled_modules(self, store: Store) -> set[str]:
        return reads.enabled_modules(store)

    # ------------------------------------------------------------------ modules

    def install_modules(self, names: Sequence[str]) -> list[str]:
        with self.session() as store:
            return self._install(store, list(names))

    def _install(self, store: Store, names: list[str]) -> list[str]:
        available = modules.discover(self.approot)
        enabled = self.enabled_modules(store)
        order = modules.install_order(names, available, enabled)
        for name in order:
            info = available[name]
            extension = store.config_get(EXTENSION_CONFIG)
            extension["module"][name] = 0
            extension["module"] = dict(sorted(extension["module"].items()))
            store.config_set(EXTENSION_CONFIG, extension)
            if info.schema_version is not None:
                store.kv_set(SCHEMA_COLLECTION, name, info.schema_version)
            self._install_module_config(store, info)
        return order

    def _install_module_config(self, store: Store, info: modules.ModuleInfo) -> None:
        enabled = self.enabled_modules(store)
        shipped = {path.name[: -len(".yml")]: _load_config_file(path)
                   for path in sorted((info.path / "config" / "install").glob("*.yml"))}
        for name in config_rules.dependency_order(shipped):
            data = as_stored(shipped[name])
            current = store.config_get(name)
            if current is not None and current != data:
                raise ApgError("APG_CONFIG_EXISTS", f"module {info.name} ships {name}, which "
                               "already exists with other values; delete it first")
            config_rules.validate(name, data, store, enabled)
            store.config_set(name, data)

    def uninstall_modules(self, names: Sequence[str]) -> list[str]:
        with self.session() as store:
            enabled = self.enabled_modules(store)
            available = modules.discover(self.approot)
            removing = [n for n in names if n in enabled]
            for name in names:
                if name not in enabled:
                    raise ApgError("APG_MODULE_NOT_INSTALLED", f"module {name} is not installed")
                info = available.get(name)
                if info is not None and info.required:
                    raise ApgError("APG_MODULE_REQUIRED", f"module {name} is required by the site")
                for other in sorted(enabled - set(removing)):
                    if other in available and name in available[other].dependencies:
                        raise ApgError("APG_MODULE_DEPENDED_ON", f"module {other} depends on "
                                       f"{name}; uninstall {other} first")
                self._refuse_if_content(store, name)
                self._refuse_if_field_type_used(store, name)
            for name in removing:
                self._uninstall_one(store, name)
            return removing

    def _refuse_if_content(self, store: Store, module: str) -> None:
        for definition in content_model.ENTITY_TYPES.values():
            if definition.provider == module and store.entity_count(definition.id):
                raise ApgError("APG_MODULE_HAS_CONTENT", f"module {module} provides "
                               f"{definition.id} entities that still exist; delete them first")

    def _refuse_if_field_type_used(self, store: Store, module: str) -> None:
        # Drupal's FieldModuleUninstallValidator: a field type cannot go while fields use it.
        storages = store.config_get_many(store.config_names("field.storage."))
        for config_name, data in storages.items():
            field_type = data.get("type") if isinstance(data, dict) else None
            if content_model.FIELD_TYPES.get(str(field_type)) == module:
                raise ApgError("APG_MODULE_IN_USE", f"module {module} provides field type "
                               f"{field_type}, used by {config_name}; delete that field first")

    def _uninstall_one(self, store: Store, name: str) -> None:
        # The module's own config, config that depends on the module, and (as Drupal's
        # dependency removal does) config that depends on any of that, transitively.
        everything = store.config_all()
        doomed = set(store.config_names(name + "."))
        grew = True
        while grew:
            grew = False
            for config_name, data in everything.items():
                if config_name in doomed or config_name == EXTENSION_CONFIG:
                    continue
                if config_rules.depends_on(config_name, data, name, doomed):
                    doomed.add(config_name)
                    grew = True
        order = config_rules.dependency_order({n: everything[n] for n in doomed})
        for config_name in reversed(order):  # dependents first
            self._refuse_if_in_use(store, config_name)
            store.config_delete(config_name)
        extension = store.config_get(EXTENSION_CONFIG)
        extension["module"].pop(name, None)
        store.config_set(EXTENSION_CONFIG, extension)
        store.kv_delete(SCHEMA_COLLECTION, name)

    def run_updates(self) -> list[PendingUpdate]:
        with self.session() as store:
            facts = reads.ModuleFacts.read(self.approot, store)
            pending = reads.pending_updates(facts)
            for name in {p.module for p in pending}:
                store.kv_set(SCHEMA_COLLECTION, name, facts.available[name].schema_version)
            return pending

    # ------------------------------------------------------------------ config

    def config_save(self, store: Store, name: str, data: Any, *, raw: bool = False) -> list[str]:
        """Validate and save one config object (the single write path for config).

        ``raw`` is ``drush config:set``: Drupal stores what it is given (cast by its schema),
        looser than its entity API, and a field storage set so gets no table. What Drupal
        would store but cannot use is stored, and the returned warnings say why.
        """
        if name == EXTENSION_CONFIG:
            raise ApgError("APG_CONFIG_INVALID", "core.extension changes only through "
                           "pm:install and pm:uninstall")
        data = config_schema.as_saved(name, data)
        warnings = []
        try:
            config_rules.validate(name, data, store, self.enabled_modules(store))
        except config_rules.LooserRefusal as exc:
            if not raw:
                raise
            warnings.append(f"{name}: Drupal stores this but cannot use it: {exc.message}")
        is_new = store.config_get(name) is None
        store.config_set(name, data)
        warnings.extend(raw_config.record_save(store, name, raw=raw, is_new=is_new))
        return warnings

    def config_delete(self, store: Store, name: str) -> None:
        if name == EXTENSION_CONFIG:
            raise ApgError("APG_CONFIG_INVALID", "core.extension cannot be deleted")
        if store.config_get(name) is None:
            raise ApgError("APG_CONFIG_MISSING", f"config {name} does not exist")
        self._refuse_if_in_use(store, name)
        store.config_delete(name)
        raw_config.forget(store, name)

    def _refuse_if_in_use(self, store: Store, name: str) -> None:
        self._refuse_if_bundle_in_use(store, name)
        if name.startswith("field.storage."):
            _, _, entity_type, field_name = name.split(".", 3)
            users = [n for n in store.config_names(f"field.field.{entity_type}.")
                     if n.endswith("." + field_name)]
            if users:
                raise ApgError("APG_CONFIG_IN_USE", f"{name} is used by {', '.join(users)}; "
                               "delete those first")

    def _refuse_if_bundle_in_use(self, store: Store, name: str) -> None:
        for definition in content_model.ENTITY_TYPES.values():
            prefix = definition.bundle_prefix
            if prefix and name.startswith(prefix):
                bundle = name[len(prefix):]
                if store.entity_count(definition.id, bundle):
                    raise ApgError("APG_CONFIG_IN_USE", f"{definition.id} entities of bundle "
                                   f"{bundle} exist; delete them before {name}")

    def config_import(self, objects: Mapping[str, Any]) -> dict[str, list[str]]:
        """Make active config equal ``objects`` (``drush config:import``), all or nothing."""
        with self.session() as store:
            current = store.config_all()
            extension = objects.get(EXTENSION_CONFIG) or current.get(EXTENSION_CONFIG)
            wanted_modules = set((extension or {}).get("module") or {})
            missing = sorted(wanted_modules - set(modules.discover(self.approot)))
            if missing:
                raise ApgError("APG_MODULE_MISSING", "core.extension lists modules not on disk: "
                               + ", ".join(missing))
            staged = dict(objects)
            staged[EXTENSION_CONFIG] = extension
            # Drupal refuses an import that uninstalls a module whose content or field types
            # are still in use; deleting a bundle that content uses is refused like cdel.
            for name in sorted(set(current) - set(staged)):
                self._refuse_if_bundle_in_use(store, name)
            store.config_replace_all(staged)
            raw_config.imported(store, current, staged)
            for module in sorted(reads.enabled_in(current) - wanted_modules):
                self._refuse_if_content(store, module)
                self._refuse_if_field_type_used(store, module)
            for name, data in sorted(staged.items()):
                if name != EXTENSION_CONFIG:
                    config_rules.validate(name, data, store, wanted_modules)
            return {
                "created": sorted(set(staged) - set(current)),
                "updated": sorted(n for n in set(staged) & set(current) if staged[n] != current[n]),
                "deleted": sorted(set(current) - set(staged)),
            }

    def export_config(self, names: Sequence[str]) -> dict[str, Any]:
        with self.session() as store:
            found = store.config_get_many(names)
        missing = [n for n, data in found.items() if data is None]
        if missing:
            raise ApgError("APG_CONFIG_MISSING", "config does not exist: " + ", ".join(missing))
        return found

    def all_config(self) -> dict[str, Any]:
        with self.session() as store:
            return store.config_all()

    # ------------------------------------------------------------------ content

    def create_entity(self, store: Store, entity_type: str, bundle: str | None,
                      values: Mapping[str, Any], uuid: str | None = None) -> EntityRecord:
        """Validate and insert one entity; the serial id is assigned here, at import."""
        return self.create_entity_via_api(store, entity_type, bundle, values, uuid, False)[0]

    def create_entity_via_api(self, store: Store, entity_type: str, bundle: str | None,
                              values: Mapping[str, Any], uuid: str | None = None,
                              drop_unknown: bool = True) -> tuple[EntityRecord, tuple[str, ...]]:
        """``Entity::create($values)->save()``: the entity, and the fields whose values Drupal
        drops (fields it does not know, or whose storage it never saw)."""
        enabled = self.enabled_modules(store)
        definition = content_model.entity_type(entity_type, enabled)
        bundle = bundle or definition.id
        valid = content_model.validate_values(
            definition, bundle, values, store, enabled, raw_config.raw_storages(store),
            drop_unknown=drop_unknown, public=self.layout.public_files)
        import uuid as uuidlib  # lazy for start-up time: uuid imports platform, slow to load
        new_uuid = uuid or str(uuidlib.uuid4())
        if store.uuids_present([new_uuid]):
            raise ApgError("APG_ENTITY_EXISTS", f"an entity with uuid {new_uuid} already exists")
        now = int(time.time())
        record = EntityRecord(entity_type, new_uuid, store.next_id(entity_type), bundle,
                              valid.label, valid.status, valid.fields, created=now, changed=now)
        store.entity_insert(record)
        return record, valid.ignored

    def update_entity(self, store: Store, record: EntityRecord,
                      values: Mapping[str, Any]) -> EntityRecord:
        """Merge ``values`` into an entity and validate the result as a whole."""
        enabled = self.enabled_modules(store)
        definition = content_model.entity_type(record.entity_type, enabled)
        merged: dict[str, Any] = copy.deepcopy(record.fields)
        merged[definition.label_field] = [{"value": record.label}]
        merged[definition.status_field] = [{"value": record.status}]
        merged.update(values)
        valid = content_model.validate_values(definition, record.bundle, merged, store, enabled,
                                              raw_config.raw_storages(store),
                                              public=self.layout.public_files)
        updated = dataclasses.replace(record, label=valid.label, status=valid.status,
                                      fields=valid.fields, changed=int(time.time()))
        store.entity_update(updated)
        return updated

    def find_entity(self, store: Store, entity_type: str, key: str) -> EntityRecord:
        """An entity by UUID or by serial id."""
        record = (store.entity_by_id(entity_type, int(key)) if key.isdigit()
                  else store.entities_by_uuid([key]).get(key))
        if record is None or record.entity_type != entity_type:
            raise ApgError("APG_ENTITY_MISSING", f"no {entity_type} entity {key}")
        return record

    def export_content(self, selectors: Sequence[ContentSelector]) -> list[dict[str, Any]]:
        # Lazy for start-up time: only fixture export reads content documents.
        from ai_proving_ground.sites.embedded.default_content import references, to_document

        docs: list[dict[str, Any]] = []
        seen: set[str] = set()
        with self.session() as store:
            for selector in selectors:
                for record in self._select(store, selector):
                    if record.uuid in seen:
                        continue
                    seen.add(record.uuid)
                    values = content_model.export_values(record)
                    targets = store.entities_by_uuid(references(values))
                    ref_types = {u: r.entity_type for u, r in targets.items()}
                    docs.append(to_document(record.entity_type, record.uuid, record.bundle,
                                            values, ref_types=ref_types))
        return docs

    def _select(self, store: Store, selector: ContentSelector) -> list[EntityRecord]:
        if selector.uuids:
            found = store.entities_by_uuid(selector.uuids)
            missing = [u for u in selector.uuids if u not in found]
            if missing:
                raise ApgError("APG_ENTITY_MISSING", "export selector names missing entities: "
                               + ", ".join(missing))
            return [found[u] for u in selector.uuids]
        return store.entities_of(selector.entity_type, selector.bundle)

    # ------------------------------------------------------------------ recipes

    def apply_recipe(self, recipe_dir: Path) -> RecipeReport:
        # Lazy for start-up time: only recipe commands need the recipe reader.
        from ai_proving_ground.sites.embedded.recipes import RecipeRunner

        with self.session() as store:
            return RecipeRunner(self, store).apply(recipe_dir)

    # ------------------------------------------------------------------ database and files

    def dump_database(self, dest: Path) -> None:
        # Lazy for start-up time: dump and restore need fsutil's file machinery; reads do not.
        from ai_proving_ground.sites.embedded import database

        database.dump_database(self.layout.database, dest)

    def restore_database(self, src: Path) -> None:
        from ai_proving_ground.sites.embedded import database  # lazy for start-up time, as above

        database.restore_database(self.layout.database, src)

    def rebuild_caches(self) -> None:
        with self.session() as store:
            store.cache_clear()

    def public_files_dir(self) -> Path:
        return self.layout.public_files

    def private_files_dir(self) -> Path | None:
        private = self.layout.private_files
        return private if private.is_dir() else None

    def status(self) -> dict[str, Any]:
        where = (self.layout.database, self.layout.webroot, self.private_files_dir())
        if not self.layout.database.is_file():
            return reads.status_facts(*where, None)
        with self.session() as store:
            return reads.status_facts(*where, store)


def _load_config_file(path: Path) -> Any:
    # Lazy for start-up time: most commands never read a config file, and yaml is slow to load.
    from ai_proving_ground.yamlio import load_yaml

    return load_yaml(path, token="APG_CONFIG_INVALID")
