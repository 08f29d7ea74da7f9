"""Applying a Drupal recipe to the embedded site, in the order core's RecipeRunner uses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import RecipeReport
from ai_proving_ground.sites.embedded import (
    config_entities,
    config_rules,
    config_schema,
    modules,
    writes,
)
from ai_proving_ground.sites.embedded.default_content import load_content_dir
from ai_proving_ground.sites.embedded.recipe_spec import (
    RecipeSpec,
    load_recipe,
    resolve_subrecipe,
    substitute_inputs,
)
from ai_proving_ground.sites.embedded.store import Store, as_stored
from ai_proving_ground.yamlio import load_yaml

if TYPE_CHECKING:
    from ai_proving_ground.sites.embedded.driver import EmbeddedSite


class RecipeRunner:
    """Sub-recipes, then extensions, then config import and actions, then content.

    The caller holds one transaction around :meth:`apply`, so a failure anywhere leaves
    config (and content) exactly as it was before the recipe, as Drupal's config checkpoint does.
    """

    def __init__(self, site: EmbeddedSite, store: Store) -> None:
        self.site = site
        self.store = store
        self.installed: list[str] = []
        self.config_written: list[str] = []
        self.created: list[str] = []
        self.skipped: list[str] = []
        self._applying: list[Path] = []

    def apply(self, recipe_dir: Path) -> RecipeReport:
        spec = substitute_inputs(load_recipe(recipe_dir))
        self._apply(spec)
        return RecipeReport(
            recipe=spec.name,
            modules_installed=tuple(self.installed),
            config_written=tuple(dict.fromkeys(self.config_written)),
            content_created=tuple(self.created),
            content_skipped=tuple(self.skipped),
        )

    def _apply(self, spec: RecipeSpec) -> None:
        where = spec.path.resolve()
        if where in self._applying:
            chain = " -> ".join(p.name for p in [*self._applying, where])
            raise ApgError("APG_RECIPE_INVALID", f"{spec.path}/recipe.yml: recipes include each "
                           f"other in a cycle ({chain})")
        self._applying.append(where)
        for name in spec.recipes:
            sub = resolve_subrecipe(spec, name, self.site.layout.webroot, self.site.approot)
            self._apply(substitute_inputs(load_recipe(sub)))
        self._applying.pop()
        recipe_file = spec.path / "recipe.yml"
        self._step(recipe_file, "install", lambda: self._install(spec))
        self._import_module_config(spec, recipe_file)
        for name in config_rules.dependency_order(spec.config_files):
            self._step(spec.path / "config" / f"{name}.yml", "config",
                       lambda n=name: self._import_config(spec, n, spec.config_files[n],
                                                          "recipe config"))
        for target, actions in spec.config_actions.items():
            self._step(recipe_file, f"config.actions.{target}",
                       lambda t=target, a=actions: self._run_actions(t, a))
        if spec.content_dir is not None:
            self._import_content(spec.content_dir)

    def _step(self, where: Path, what: str, action: Any) -> None:
        try:
            action()
        except ApgError as exc:
            if exc.token == "APG_RECIPE_INVALID":
                raise
            raise ApgError("APG_RECIPE_FAILED", f"{where}: {what}: {exc.token} {exc.message}",
                           exc.exit_code) from None

    def _install(self, spec: RecipeSpec) -> None:
        self.installed.extend(writes.install_modules(self.site.approot, self.store, list(spec.install)))

    # ---------------------------------------------------------------- config

    def _import_module_config(self, spec: RecipeSpec, recipe_file: Path) -> None:
        available = modules.discover(self.site.approot)
        for extension, selection in spec.config_import.items():
            info = available.get(extension)
            if info is None:
                self._step(recipe_file, f"config.import.{extension}", lambda e=extension: _raise(
                    ApgError("APG_MODULE_MISSING", f"module {e} is not on disk")))
                continue
            for folder in ("install", "optional"):
                self._import_config_folder(spec, info.path / "config" / folder, selection)

    def _import_config_folder(self, spec: RecipeSpec, folder: Path,
                              selection: str | list[str] | None) -> None:
        paths = {path.name[: -len(".yml")]: path for path in folder.glob("*.yml")}
        if selection not in (None, "*"):
            paths = {n: p for n, p in paths.items() if n in (selection or [])}
        files: dict[str, Any] = {}
        for name, path in sorted(paths.items()):
            self._step(path, "config.import", lambda n=name, p=path: files.update(
                {n: load_yaml(p, token="APG_CONFIG_INVALID")}))
        for name in config_rules.dependency_order(files):
            self._step(paths[name], "config.import", lambda n=name: self._import_config(
                spec, n, files[n], "module config"))

    def _import_config(self, spec: RecipeSpec, name: str, data: Any, origin: str) -> None:
        current = self.store.config_get(name)
        created = config_entities.as_created(name, data)
        if current is not None:
            # What the file creates, not the file as written (which Drupal 10.3 compares):
            # fixtures written short (a type with only its name) re-apply on provision.
            if config_entities.same_config(current, as_stored(config_schema.as_saved(name,
                                                                                      created))):
                return
            if _is_strict(spec, name):
                raise ApgError("APG_RECIPE_PREEXISTING_CONFIG",
                               f"{origin} {name} already exists with other values and the recipe "
                               "is strict; set config.strict: false or remove the active config")
            return
        self.site.config_save(self.store, name, created)
        self.config_written.append(name)

    def _run_actions(self, target: str, actions: dict[str, Any]) -> None:
        optional = target.startswith("?")
        name = target.lstrip("?")
        for action_id, args in actions.items():
            handler = _ACTIONS.get(action_id)
            if handler is None:
                raise ApgError("APG_RECIPE_ACTION_UNKNOWN",
                               f"unknown config action {action_id!r} on {name} "
                               f"(supported: {', '.join(sorted(_ACTIONS))})")
            current = self.store.config_get(name)
            if current is None and optional:
                return  # core: an optional target that does not exist skips all its actions
            updated = handler(name, current, args)
            if updated is not None:
                self.site.config_save(self.store, name, updated)
                self.config_written.append(name)

    # ---------------------------------------------------------------- content

    def _import_content(self, content_dir: Path) -> None:
        docs = load_content_dir(content_dir)
        present = self.store.uuids_present(doc.uuid for doc in docs)
        for doc in docs:
            if doc.uuid in present:
                self.skipped.append(doc.uuid)
                continue
            where = doc.path or content_dir
            self._step(where, "content", lambda d=doc: self.site.create_entity(
                self.store, d.entity_type, d.bundle, d.values, d.uuid))
            self.created.append(doc.uuid)


def _raise(exc: ApgError) -> None:
    raise exc


def _is_strict(spec: RecipeSpec, name: str) -> bool:
    strict = spec.config_strict
    return strict if isinstance(strict, bool) else name in strict


def _simple_config_update(name: str, current: Any, args: Any) -> Any:
    if current is None:
        raise ApgError("APG_CONFIG_MISSING", f"simpleConfigUpdate needs {name} to exist")
    if not isinstance(args, dict):
        raise ApgError("APG_RECIPE_INVALID", "simpleConfigUpdate takes a mapping of key: value")
    updated = copy.deepcopy(current)
    for key, value in args.items():
        set_path(updated, str(key), value)
    return updated


def _create(name: str, current: Any, args: Any) -> Any:
    if current is not None:
        raise ApgError("APG_CONFIG_EXISTS", f"create: {name} already exists")
    return _new_object(name, args)


def _create_if_not_exists(name: str, current: Any, args: Any) -> Any:
    return None if current is not None else _new_object(name, args)


# Config entity prefixes and their id key. Core's EntityCreate adds the id, taken from the
# config name, unless the action's values already hold it.
_CONFIG_ENTITY_ID_KEYS = {
    "node.type.": "type",
    "taxonomy.vocabulary.": "vid",
    "views.view.": "id",
    "field.storage.": "id",
    "field.field.": "id",
    "canvas.page_region.": "id",
    "canvas.component.": "id",
}


def _new_object(name: str, args: Any) -> Any:
    if not isinstance(args, dict):
        raise ApgError("APG_RECIPE_INVALID", f"creating {name} takes a mapping of its values")
    created = copy.deepcopy(args)
    for prefix, id_key in _CONFIG_ENTITY_ID_KEYS.items():
        if name.startswith(prefix):
            created.setdefault(id_key, name[len(prefix):])
    return created


_ACTIONS = {
    "simpleConfigUpdate": _simple_config_update,
    "setProperties": _simple_config_update,
    "create": _create,
    "createIfNotExists": _create_if_not_exists,
}


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` inside nested mappings, creating the mappings on the way."""
    parts = dotted.split(".")
    cursor = data
    for part in parts[:-1]:
        nxt = cursor.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cursor[part] = nxt
        cursor = nxt
    cursor[parts[-1]] = value
