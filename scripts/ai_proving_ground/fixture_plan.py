"""What a fixture export would write: the source site's config and content the fragment declares,
checked against the fixture's ownership claims, and the machine-written facts, all computed
through the driver before any file is touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import (
    FRAGMENT,
    record_value,
)
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.sites.base import (
    ContentSelector,
    EntityRecord,
    ModuleState,
    SiteDriver,
    StateQuery,
)
from ai_proving_ground.sites.embedded.default_content import dump_document

# Top-level keys Drupal's config export for recipes leaves out: they are site-specific.
STRIPPED_CONFIG_KEYS = ("uuid", "_core")
# Base fields every Drupal site fills itself on a node (its author, the revision's author and
# log, promotion and stickiness defaults, the translation flag): Drupal's exporter writes them,
# the embedded site has none, and they say nothing about a fixture's content. An export leaves
# them out unless the fragment's export.keep_fields keeps one.
SITE_FIELDS = ("uid", "revision_uid", "revision_log", "revision_translation_affected", "promote",
               "sticky")


@dataclass(frozen=True)
class ExportPlan:
    """Every file an export writes (relative path -> text) and every file it removes."""

    files: dict[str, str]
    removed: list[str]
    config: list[str]
    content: list[str]
    notes: list[str]


def strip_config(data: Any) -> Any:
    """Config as a recipe ships it: without the site-specific ``uuid`` and ``_core`` keys."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in STRIPPED_CONFIG_KEYS}
    return data


def comparable_config(data: Any) -> Any:
    """Shipped config in a form two sites agree on: stripped, every empty list or map ``{}``.

    PHP has one empty array, so Drupal hands an empty mapping back as ``[]`` through JSON (and
    writes every empty array ``{  }`` in its own YAML export), while the embedded site keeps the
    two apart. Config that differs only there is the same config.
    """
    return _empty_as_map(strip_config(data))


def _empty_as_map(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _empty_as_map(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_empty_as_map(v) for v in value] if value else {}
    return value


def _owned(name: str, prefixes: Sequence[str]) -> bool:
    return any(name.startswith(prefix) for prefix in prefixes)


def _existing_files(directory: Path, pattern: str) -> set[str]:
    """Relative paths of visible ``*.yml`` files (dot files are the user's, not export's)."""
    if not directory.is_dir():
        return set()
    return {p.relative_to(directory.parent).as_posix() for p in directory.glob(pattern)
            if p.is_file() and not any(part.startswith(".")
                                       for part in p.relative_to(directory).parts)}


def plan_export(site: SiteDriver, fragment: dict[str, Any], install: list[str], hand_kept: str,
          directory: Path) -> ExportPlan:
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
        # Spelled as comparable_config spells it, so both drivers export the same bytes.
        files[f"config/{safe_name(config_name, 'config name')}.yml"] = yamldump.dumps(
            comparable_config(config_data[config_name]))

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
    entities = _exported_entities(site, docs)
    keep = list(export.get("keep_fields") or [])
    uuids: list[str] = []
    for doc in docs:
        meta = doc["_meta"]
        entity_type = safe_name(str(meta["entity_type"]), "entity type")
        uuid = safe_name(str(meta["uuid"]), "content uuid")
        files[f"content/{entity_type}/{uuid}.yml"] = dump_document(
            canonical_document(doc, keep, entities[uuid]))
        uuids.append(uuid)

    facts = _facts(first.modules, install, config_names, docs, entities,
                   list(export.get("record_fields") or []))
    fragment_text = hand_kept + yamldump.dumps({"facts": facts})
    errors = schema_errors(yamlio.loads(fragment_text), "fragment")
    if errors:  # facts are built to fit; hand-kept keys were validated on load
        raise ApgError("APG_FRAGMENT_INVALID", f"{directory / FRAGMENT}: the rewritten fragment "
                       f"would not validate: {errors[0].message}")
    files[FRAGMENT.as_posix()] = fragment_text

    existing = (_existing_files(directory / "config", "*.yml")
                | _existing_files(directory / "content", "**/*.yml"))
    removed = sorted(existing - set(files))
    return ExportPlan(files=files, removed=removed, config=config_names, content=uuids, notes=notes)


def _exported_entities(site: SiteDriver, docs: list[dict[str, Any]]) -> dict[str, EntityRecord]:
    """The exported entities as records (one round trip): their creation time and the facts."""
    uuids = tuple(str(doc["_meta"]["uuid"]) for doc in docs)
    found = site.read_state(StateQuery(entities=uuids)).entities if uuids else {}
    missing = [uuid for uuid in uuids if found.get(uuid) is None]
    if missing:
        raise ApgError("APG_EXPORT_FAILED", f"content {missing[0]} vanished from the source site "
                       "during export; run the export again")
    return {uuid: record for uuid, record in found.items() if record is not None}


def canonical_document(doc: dict[str, Any], keep: Sequence[str],
                       record: EntityRecord) -> dict[str, Any]:
    """A content document as a fixture ships it, the same from either driver: fields sorted by
    name, the site's own bookkeeping fields left out, and ``created`` kept when asked for
    (Drupal's exporter omits it; the record has it)."""
    default = {name: items for name, items in doc["default"].items()
               if name not in SITE_FIELDS or name in keep}
    if "created" in keep:
        default["created"] = [{"value": record.created}]
    return {**doc, "default": dict(sorted(default.items()))}


def _facts(modules: Mapping[str, ModuleState], install: list[str],
           config_names: list[str], docs: list[dict[str, Any]],
           entities: Mapping[str, EntityRecord], record_fields: list[str]) -> dict[str, Any]:
    providers = {n.split(".", 1)[0] for n in config_names}
    module_names = set(install) | {p for p in providers
                                   if p in modules and modules[p].enabled}
    counts: dict[str, dict[str, int]] = {}
    for doc in docs:
        meta = doc["_meta"]
        bundles = counts.setdefault(str(meta["entity_type"]), {})
        bundle = str(meta.get("bundle") or meta["entity_type"])
        bundles[bundle] = bundles.get(bundle, 0) + 1
    content: list[dict[str, Any]] = []
    for doc in docs:
        record = entities[str(doc["_meta"]["uuid"])]
        entry: dict[str, Any] = {"uuid": record.uuid, "entity_type": record.entity_type,
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
