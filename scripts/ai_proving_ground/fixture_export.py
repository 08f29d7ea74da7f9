"""Fixture export: capture from a live source site what a fixture's fragment declares.

A fixture directory ``fixture_<name>/`` holds a hand-written ``recipe.yml``, exported
``config/<name>.yml`` and ``content/<entity_type>/<uuid>.yml`` files, and
``manifest/fragment.yml``, whose top part (``name``, ``version``, ``description``, ``owns``,
``export`` and any comments) is kept by hand and whose last key, ``facts``, is machine-written.

How the fragment's selectors read:

- ``export.config``: an entry that ends with a dot is a *prefix* and expands to every config
  name on the source site that starts with it (``field.field.node.kb_doc.``); any other entry is
  an *exact name* that must exist (``node.type.kb_doc``). ``field.storage.node.field_kb_`` is
  therefore an exact name, and a missing one: list storages by name, or end the entry with a dot.
- ``owns.config``: every entry is a prefix, matched as a plain string prefix, whether or not it
  ends with a dot (``field.storage.node.field_kb_`` owns every ``field_kb_*`` storage). Every
  exported config name must be owned.
- ``owns.content_namespace``: every exported content UUID must start with it.
- ``export.content``: ``{entity_type, bundle?, uuids?}`` selectors, passed to the site driver.
- ``export.record_fields``: fields copied into each content record of ``facts``, as the items'
  main property (``value``, ``target_uuid``, ...): one value for one item, a list for several,
  null for none. :func:`record_value` is the one definition; the doctor compares with it.

Export computes everything first (through the driver, in a constant number of round trips)
and only then writes, each file new-then-rename, so a refusal changes no file. Files whose
bytes would not change are left alone. A name that resolves to no fixture gets a scaffold.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import (
    FRAGMENT,
    find_fixture,
    load_fragment,
    record_value,
    search_roots,
)
from ai_proving_ground.fsutil import atomic_write_text, safe_name
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import (
    ContentSelector,
    ModuleState,
    SiteDriver,
    StateQuery,
    driver_for,
)
from ai_proving_ground.sites.embedded.default_content import dump_document

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# Top-level keys Drupal's config export for recipes leaves out: they are site-specific.
STRIPPED_CONFIG_KEYS = ("uuid", "_core")
FACTS_MARKER = "# Machine-written by `apg fixture-export {name}` from here down; do not edit.\n"


@dataclass
class ExportResult:
    """What one export did (or, with ``check``, would do)."""

    fixture: str
    directory: Path
    scaffolded: bool = False
    config: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # Diagnostics for stderr (``APG_EXPORT_SCAFFOLD``, ``APG_EXPORT_PREFIX_EMPTY``).
    notes: list[str] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return not self.changed and not self.removed

    def summary(self) -> dict[str, Any]:
        """The JSON summary ``apg fixture-export`` prints on stdout."""
        return {
            "fixture": self.fixture,
            "directory": str(self.directory),
            "scaffolded": self.scaffolded,
            "config": self.config,
            "content": self.content,
            "changed": self.changed,
            "removed": self.removed,
        }


@dataclass(frozen=True)
class _Plan:
    """Every file an export writes (relative path -> text) and every file it removes."""

    files: dict[str, str]
    removed: list[str]
    config: list[str]
    content: list[str]
    notes: list[str]


# ---------------------------------------------------------------------------- helpers


def check_name(name: str) -> str:
    """A fixture name as the fragment schema allows it (exit 2 otherwise)."""
    if not NAME_PATTERN.match(name):
        raise ApgError("APG_FIXTURE_INVALID", f"fixture name {name!r} must be a lower-case "
                       "machine name (a letter, then letters, digits, underscores)", exit_code=2)
    return name


def strip_config(data: Any) -> Any:
    """Config as a recipe ships it: without the site-specific ``uuid`` and ``_core`` keys."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in STRIPPED_CONFIG_KEYS}
    return data


def split_fragment(path: Path) -> str:
    """The hand-kept text of a fragment: every line before the top-level ``facts:`` key.

    ``facts`` must be the last top-level key of a block mapping; a fragment without one gets
    a marker comment (once) so people can see where the machine-written part starts.
    """
    doc = yamlio.load_document(path, token="APG_FRAGMENT_INVALID")
    text = path.read_text(encoding="utf-8")
    root = doc.root
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise ApgError("APG_FRAGMENT_INVALID", f"{path}:1:1: $: a fragment is a block mapping "
                       "(one `key:` per line)")
    keys = [key.value for key, _ in root.value if isinstance(key, yaml.ScalarNode)]
    if "facts" not in keys:
        kept = text if text.endswith("\n") or not text else text + "\n"
        return kept + FACTS_MARKER.format(name=(doc.data or {}).get("name", "NAME"))
    key_node = next(k for k, _ in root.value if isinstance(k, yaml.ScalarNode)
                    and k.value == "facts")
    line, column = key_node.start_mark.line, key_node.start_mark.column
    if keys[-1] != "facts" or column != 0:
        raise ApgError("APG_FRAGMENT_INVALID", f"{path}:{line + 1}:{column + 1}: $.facts: facts "
                       "must be the last top-level key, because export rewrites everything from "
                       "the `facts:` line down; move the hand-kept keys above it")
    return "".join(text.splitlines(keepends=True)[:line])


def _read_install(directory: Path) -> list[str]:
    recipe = directory / "recipe.yml"
    doc = yamlio.load_document(recipe, token="APG_RECIPE_INVALID")
    data = doc.data if isinstance(doc.data, dict) else {}
    install = data.get("install", [])
    if not isinstance(install, list) or not all(isinstance(m, str) for m in install):
        raise ApgError("APG_RECIPE_INVALID", f"{doc.where(['install'])}: install must be a list "
                       "of module names")
    return list(install)


def _owned(name: str, prefixes: Sequence[str]) -> bool:
    return any(name.startswith(prefix) for prefix in prefixes)


def _existing_files(directory: Path, pattern: str) -> set[str]:
    """Relative paths of visible ``*.yml`` files (dot files are the user's, not export's)."""
    if not directory.is_dir():
        return set()
    return {p.relative_to(directory.parent).as_posix() for p in directory.glob(pattern)
            if p.is_file() and not any(part.startswith(".")
                                       for part in p.relative_to(directory).parts)}


# ---------------------------------------------------------------------------- scaffold


def scaffold_directory(name: str, approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where a new fixture goes: the first AI_PG_FIXTURE_PATH entry, else ``<approot>/recipes``."""
    return search_roots(approot, settings)[0] / f"fixture_{name}"


SCAFFOLD_RECIPE = """\
name: 'Fixture {name}'
description: 'TODO: one sentence on what the {name} fixture seeds.'
# Modules this fixture's config and content need; the base recipe may already install them.
install: []
"""

SCAFFOLD_FRAGMENT = """\
# Manifest fragment of the {name} fixture. name, version, description, owns and export are
# kept by hand; `apg fixture-export {name}` rewrites the machine-written facts below them.
name: {name}
# Bump whenever the exported config or content changes: a new version is a new baseline.
version: 1
description: 'TODO: what the {name} fixture holds and which tasks rely on it.'
owns:
  # TODO: config name prefixes this fixture owns (plain string prefixes), e.g. node.type.my_type
  config: []
  # Every content UUID of this fixture starts with this prefix (drawn at random; keep or change).
  content_namespace: {namespace}
export:
  # TODO: exact config names (must exist on the source site) or prefixes ending in a dot.
  config: []
  # TODO: selectors such as {{entity_type: node, bundle: my_type}} or {{entity_type: node, uuids: [...]}}
  content: []
  # Fields copied into each content record of facts, because graders rely on them.
  record_fields: []
"""


def write_scaffold(name: str, directory: Path) -> ExportResult:
    """A schema-valid, empty fixture at ``directory`` for the user to fill in."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ApgError("APG_EXPORT_TARGET_INVALID", f"{directory} exists and is not an empty "
                       "directory, and holds no fixture; remove it or pick another name")
    fragment = SCAFFOLD_FRAGMENT.format(name=name, namespace=secrets.token_hex(4) + "-")
    errors = schema_errors(yamlio.loads(fragment), "fragment")
    if errors:  # pragma: no cover - the template above is tested to be valid
        raise ApgError("APG_FRAGMENT_INVALID", f"scaffold for {name}: {errors[0].message}")
    atomic_write_text(directory / "recipe.yml", SCAFFOLD_RECIPE.format(name=name))
    atomic_write_text(directory / FRAGMENT, fragment)
    note = (f"APG_EXPORT_SCAFFOLD created {directory}: edit recipe.yml (install) and {FRAGMENT} "
            f"(owns, export), then run `apg fixture-export {name}` again against the source site")
    return ExportResult(fixture=name, directory=directory, scaffolded=True,
                        changed=["recipe.yml", FRAGMENT.as_posix()], notes=[note])


# ---------------------------------------------------------------------------- export


def resolve_directory(name: str, approot: Path, into: Path | None,
                      settings: Settings = DEFAULT_SETTINGS) -> Path | None:
    """The fixture directory to export into, or ``None`` when a scaffold is due.

    Without ``into``, lookup is relative to the project being exported into (``approot``):
    AI_PG_FIXTURE_PATH entries, ``<approot>/recipes``, then the shipped ``fixtures/``.
    """
    if into is not None:
        if into.name != f"fixture_{name}":
            raise ApgError("APG_USAGE", f"--into {into}: a fixture directory is named "
                           f"fixture_{name}", exit_code=2)
        if (into / FRAGMENT).is_file():
            return into
        if into.exists() and (not into.is_dir() or any(into.iterdir())):
            raise ApgError("APG_EXPORT_TARGET_INVALID", f"--into {into} holds no {FRAGMENT}; "
                           "point it at a fixture directory, or at a new or empty directory "
                           "for a scaffold")
        return None
    try:
        return find_fixture(name, approot, settings)
    except ApgError as exc:
        if exc.token == "APG_FIXTURE_NOT_FOUND":
            return None
        raise


def export_fixture(name: str, approot: Path, source: Path | None = None,
                   into: Path | None = None, check: bool = False,
                   driver: SiteDriver | None = None,
                   settings: Settings = DEFAULT_SETTINGS) -> ExportResult:
    """Export fixture ``name`` from the site at ``source`` (default: ``approot``).

    With ``check``, nothing is written: the result says what would change.
    """
    check_name(name)
    directory = resolve_directory(name, approot, into, settings)
    if directory is None:
        target = into if into is not None else scaffold_directory(name, approot, settings)
        if check:
            raise ApgError("APG_FIXTURE_NOT_FOUND", f"no fixture {name} to check; "
                           f"exporting without --check would scaffold {target}", exit_code=2)
        return write_scaffold(name, target)
    fragment_path = directory / FRAGMENT
    if not fragment_path.is_file():
        raise ApgError("APG_FRAGMENT_INVALID", f"{fragment_path}: missing; every fixture needs "
                       "manifest/fragment.yml (export into a new directory writes a scaffold)")
    fragment = load_fragment(fragment_path)
    if fragment["name"] != name:
        raise ApgError("APG_FRAGMENT_INVALID", f"{fragment_path}:1:1: $.name: is "
                       f"{fragment['name']!r} but the fixture is {name}")
    hand_kept = split_fragment(fragment_path)
    install = _read_install(directory)
    site = driver or driver_for(source or approot, settings)
    plan = _plan(site, fragment, install, hand_kept, directory)
    result = ExportResult(fixture=name, directory=directory, config=plan.config,
                          content=plan.content, removed=plan.removed, notes=plan.notes)
    result.changed = [rel for rel, text in plan.files.items()
                      if not _same(directory / rel, text)]
    if not check:
        _write(directory, plan, result.changed)
    return result


def _same(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == text.encode("utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return False


def _plan(site: SiteDriver, fragment: dict[str, Any], install: list[str], hand_kept: str,
          directory: Path) -> _Plan:
    owns, export = fragment["owns"], fragment["export"]
    entries: list[str] = list(export["config"])
    exact = [e for e in entries if not e.endswith(".")]
    prefixes = [e for e in entries if e.endswith(".")]
    first = site.read_state(StateQuery(modules=True, config=tuple(exact),
                                       config_prefixes=tuple(prefixes)))
    missing = [n for n in exact if first.config.get(n) is None]
    if missing:
        raise ApgError("APG_EXPORT_CONFIG_MISSING", "export.config names config the source site "
                       "does not have: " + ", ".join(missing) + "; create it there, or end an "
                       "entry with a dot to make it a prefix")
    names = set(exact)
    notes: list[str] = []
    for prefix in prefixes:
        expanded = first.config_names.get(prefix, [])
        if not expanded:
            notes.append(f"APG_EXPORT_PREFIX_EMPTY export.config prefix {prefix} matches no "
                         "config on the source site")
        names.update(expanded)
    config_names = sorted(names)
    unowned = [n for n in config_names if not _owned(n, owns["config"])]
    if unowned:
        raise ApgError("APG_EXPORT_NOT_OWNED", "export.config selects config that owns.config "
                       "does not claim: " + ", ".join(unowned) + "; add a prefix to owns.config "
                       "or narrow export.config")
    files: dict[str, str] = {}
    config_data = site.export_config(config_names) if config_names else {}
    absent = [n for n in config_names if config_data.get(n) is None]
    if absent:
        raise ApgError("APG_EXPORT_CONFIG_MISSING", "config vanished from the source site "
                       "during export: " + ", ".join(absent))
    for config_name in config_names:
        files[f"config/{safe_name(config_name, 'config name')}.yml"] = yamlio.dumps(
            strip_config(config_data[config_name]))

    selectors = [ContentSelector(entity_type=s["entity_type"], bundle=s.get("bundle"),
                                 uuids=tuple(s.get("uuids") or ())) for s in export["content"]]
    docs = site.export_content(selectors) if selectors else []
    namespace = owns["content_namespace"]
    outside = [str(d["_meta"]["uuid"]) for d in docs
               if not str(d["_meta"]["uuid"]).startswith(namespace)]
    if outside:
        raise ApgError("APG_EXPORT_NAMESPACE", f"content outside the namespace {namespace}: "
                       + ", ".join(outside) + "; give it a UUID that starts with "
                       f"{namespace} on the source site, or narrow export.content")
    uuids: list[str] = []
    for doc in docs:
        meta = doc["_meta"]
        entity_type = safe_name(str(meta["entity_type"]), "entity type")
        uuid = safe_name(str(meta["uuid"]), "content uuid")
        files[f"content/{entity_type}/{uuid}.yml"] = dump_document(doc)
        uuids.append(uuid)

    facts = _facts(site, first.modules, install, config_names, docs,
                   list(export.get("record_fields") or []))
    fragment_text = hand_kept + yamlio.dumps({"facts": facts})
    errors = schema_errors(yamlio.loads(fragment_text), "fragment")
    if errors:  # facts are built to fit; hand-kept keys were validated on load
        raise ApgError("APG_FRAGMENT_INVALID", f"{directory / FRAGMENT}: the rewritten fragment "
                       f"would not validate: {errors[0].message}")
    files[FRAGMENT.as_posix()] = fragment_text

    existing = (_existing_files(directory / "config", "*.yml")
                | _existing_files(directory / "content", "**/*.yml"))
    removed = sorted(existing - set(files))
    return _Plan(files=files, removed=removed, config=config_names, content=uuids, notes=notes)


def _facts(site: SiteDriver, modules: Mapping[str, ModuleState], install: list[str],
           config_names: list[str], docs: list[dict[str, Any]],
           record_fields: list[str]) -> dict[str, Any]:
    providers = {n.split(".", 1)[0] for n in config_names}
    module_names = set(install) | {p for p in providers
                                   if p in modules and modules[p].enabled}
    counts: dict[str, dict[str, int]] = {}
    for doc in docs:
        meta = doc["_meta"]
        bundles = counts.setdefault(str(meta["entity_type"]), {})
        bundle = str(meta.get("bundle") or meta["entity_type"])
        bundles[bundle] = bundles.get(bundle, 0) + 1
    uuids = tuple(str(doc["_meta"]["uuid"]) for doc in docs)
    entities = site.read_state(StateQuery(entities=uuids)).entities if uuids else {}
    content: list[dict[str, Any]] = []
    for uuid in uuids:
        record = entities.get(uuid)
        if record is None:
            raise ApgError("APG_EXPORT_FAILED", f"content {uuid} vanished from the source site "
                           "during export; run the export again")
        entry: dict[str, Any] = {"uuid": uuid, "entity_type": record.entity_type,
                                 "bundle": record.bundle, "label": record.label,
                                 "status": bool(record.status)}
        if record_fields:
            entry["fields"] = {
                name: (bool(record.status) if name == "status"
                       else record_value(record.fields.get(name, [])))
                for name in record_fields}
        content.append(entry)
    return {
        "modules": sorted(module_names),
        "config": config_names,
        "counts": {t: dict(sorted(b.items())) for t, b in sorted(counts.items())},
        "content": sorted(content, key=lambda r: (r["entity_type"], r["uuid"])),
    }


def _write(directory: Path, plan: _Plan, changed: list[str]) -> None:
    """Write what changed, remove what is stale, rewrite the fragment last."""
    fragment = FRAGMENT.as_posix()
    for rel in changed:
        if rel != fragment:
            atomic_write_text(directory / rel, plan.files[rel])
    for rel in plan.removed:
        path = directory / rel
        path.unlink()
        # Drop directories the removal emptied, up to (not including) config/ and content/.
        tops = {directory / "config", directory / "content"}
        parent = path.parent
        while parent not in tops and directory in parent.parents and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    if fragment in changed:
        atomic_write_text(directory / fragment, plan.files[fragment])
