"""The embedded site: a complete, Drupal-shaped site whose state lives in one SQLite file."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.report import say
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
from ai_proving_ground.sites.embedded import reads, router
from ai_proving_ground.sites.embedded.entity_types import export_values
from ai_proving_ground.sites.embedded.field_load import unloadable_field_configs
from ai_proving_ground.sites.embedded.reads import EXTENSION_CONFIG, SCHEMA_COLLECTION
from ai_proving_ground.sites.embedded.store import Store, open_session


@register_driver("sqlite")
class EmbeddedSite(SiteDriver):
    """The embedded site driver; also the engine behind ``apg site``.

    Reads run here. Each write method imports the write side (``writes``) when it runs, lazy
    for start-up time: a read-only command never loads the validators and rules of a write.
    """

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
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        site = cls(approot)
        with site.session() as store:
            store.config_set(EXTENSION_CONFIG, {"module": {}, "theme": {"olivero": 0},
                                                "profile": "embedded"})
            writes.install_modules(approot, store, ["system", "user"])
            router.rebuild(store)  # a site install builds its router
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
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        with self.session() as store:
            installed = writes.install_modules(self.approot, store, list(names))
            router.rebuild(store)  # as ModuleInstaller sets the router's rebuild needed
            return installed

    def uninstall_modules(self, names: Sequence[str]) -> list[str]:
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        with self.session() as store:
            removed = writes.uninstall_modules(self.approot, store, names)
            router.rebuild(store)
            return removed

    def run_updates(self) -> list[PendingUpdate]:
        with self.session() as store:
            facts = reads.ModuleFacts.read(self.approot, store)
            pending = reads.pending_updates(facts)
            for name in {p.module for p in pending}:
                store.kv_set(SCHEMA_COLLECTION, name, facts.available[name].schema_version)
            if pending:  # drush updatedb ends with a cache rebuild when it ran updates
                router.rebuild(store)
            return pending

    # ------------------------------------------------------------------ config

    def config_save(self, store: Store, name: str, data: Any, *, raw: bool = False) -> list[str]:
        """Validate and save one config object (the single write path for config).

        ``raw`` is ``drush config:set``: Drupal stores what it is given (cast by its schema),
        looser than its entity API, and a field storage set so gets no table. What Drupal
        would store but cannot use is stored, and the returned warnings say why.
        """
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        return writes.config_save(store, name, data, raw=raw)

    def config_delete(self, store: Store, name: str) -> None:
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        writes.config_delete(store, name)

    def config_import(self, objects: Mapping[str, Any]) -> dict[str, list[str]]:
        """Make active config equal ``objects`` (``drush config:import``), all or nothing."""
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        with self.session() as store:
            changes = writes.config_import(self.approot, store, objects)
            # A config import saves each View through its entity API, which rebuilds the router.
            router.rebuild(store)
            return changes

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
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        return writes.create_entity(store, self.layout.public_files, entity_type, bundle,
                                    values, uuid, drop_unknown)

    def update_entity(self, store: Store, record: EntityRecord,
                      values: Mapping[str, Any]) -> EntityRecord:
        """Merge ``values`` into an entity and validate the result as a whole."""
        from ai_proving_ground.sites.embedded import writes  # lazy for start-up time: see the class

        return writes.update_entity(store, self.layout.public_files, record, values)

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
                    values = export_values(record)
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
            report = RecipeRunner(self, store).apply(recipe_dir)
            # A recipe installs modules and saves config entities: the router is rebuilt.
            router.rebuild(store)
            return report

    # ------------------------------------------------------------------ database and files

    def dump_database(self, dest: Path) -> None:
        # Lazy for start-up time: dump and restore need fsutil's file machinery; reads do not.
        from ai_proving_ground.sites.embedded import database

        database.dump_database(self.layout.database, dest)

    def keep_database(self, dest: Path, level: int) -> None:
        """The database's image (``sqlite3_serialize``, inside the session's transaction: a
        consistent copy, the db/ path checked as every session checks it), gzipped.
        No file is dumped first and nothing is synced: about 1 ms on a 12-node bed, where a
        backup to a synced file costs 2.5 (bench best of 50)."""
        # Lazy for start-up time, as dump_database's: reads need neither.
        import gzip

        from ai_proving_ground.fsutil import atomic_target  # lazy for start-up time, as above

        with self.session() as store:
            image = store.conn.serialize()
        with atomic_target(dest) as tmp:
            tmp.write_bytes(gzip.compress(image, compresslevel=level, mtime=0))

    def restore_database(self, src: Path) -> None:
        from ai_proving_ground.sites.embedded import database  # lazy for start-up time, as above

        for path in database.restore_database(self.layout.database, src):
            say("APG_RESET_REPAIRED", f"{path} removed: db/ holds the database alone, in a real "
                "folder")

    def rebuild_caches(self) -> None:
        """``drush cr``: clear the caches, after the rebuild's own load of every field config,
        and rebuild the router (the only way a view set by ``config:set`` gets its route)."""
        with self.session() as store:
            broken = unloadable_field_configs(store)
            if broken:
                raise ApgError("APG_SITE_CR_FAILED", broken[0] + "; the cache rebuild stopped "
                               "there (drush cr exits 1 on such config). Give the config its "
                               "settings mapping, e.g. config:set NAME settings '{}' "
                               "--input-format=yaml, or delete it")
            store.cache_clear()
            router.rebuild(store)

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

