"""Core's default-content format: ``content/**/*.yml`` with ``_meta`` and ``default``.

Loading mirrors ``Drupal\\Core\\DefaultContent\\Finder`` (dependency order, ``_meta`` only);
``to_document`` mirrors ``Exporter::export`` for what it leaves out.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within, resolved_within
from ai_proving_ground.yamlio import PathPart, YamlDocument

TOKEN = "APG_CONTENT_INVALID"
FORMAT_VERSION = "1.0"


@dataclass(frozen=True)
class ContentDoc:
    """One content entity file; ``values`` is its ``default:`` mapping."""

    path: Path | None
    entity_type: str
    uuid: str
    bundle: str
    langcode: str
    depends: dict[str, str]
    values: dict[str, list[dict[str, Any]]]
    translations: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------- entity keys


@dataclass(frozen=True)
class _Keys:
    """Field names of the entity keys the exporter leaves out, per entity type."""

    id: str = "id"
    integer_id: bool = True
    revision: str | None = "revision_id"
    bundle: str | None = None
    revision_created: str | None = "revision_created"


_ENTITY_KEYS: dict[str, _Keys] = {
    "node": _Keys(id="nid", revision="vid", bundle="type", revision_created="revision_timestamp"),
    "taxonomy_term": _Keys(id="tid", bundle="vid"),
    "user": _Keys(id="uid", revision=None, revision_created=None),
    "file": _Keys(id="fid", revision=None, revision_created=None),
    "media": _Keys(id="mid", revision="vid", bundle="bundle"),
    "block_content": _Keys(bundle="type"),
    "comment": _Keys(id="cid", revision=None, bundle="comment_type", revision_created=None),
    "menu_link_content": _Keys(bundle="bundle"),
    "path_alias": _Keys(),
    "canvas_page": _Keys(),
}
# Unknown types: guess the conventional names, and drop `id` only when it holds integers.
_FALLBACK_KEYS = _Keys(integer_id=False, bundle="bundle")
_ALWAYS_OMITTED = ("uuid", "langcode", "default_langcode", "revision_default", "changed", "created")


# ---------------------------------------------------------------------------- errors


def _fail(doc: YamlDocument, parts: Sequence[PathPart], message: str) -> NoReturn:
    yamlio.fail_at(doc, TOKEN, parts, message)


def _kind(value: Any) -> str:
    return yamlio.describe_kind(value)


# ---------------------------------------------------------------------------- references


def _item_refs(item: Mapping[str, Any]) -> Iterator[str]:
    for key in ("entity", "target_uuid"):
        # An `entity` that is a mapping is an inline entity, not a reference.
        if isinstance(item.get(key), str):
            yield item[key]


def references(values: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """UUIDs referenced by ``{entity: uuid}`` or ``target_uuid`` items, in first-seen order."""
    seen: dict[str, None] = {}
    for items in values.values():
        for item in items:
            for uuid in _item_refs(item):
                seen.setdefault(uuid, None)
    return list(seen)


# ---------------------------------------------------------------------------- parsing


def _string(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        _fail(doc, parts, f"must be a non-empty string, not {_kind(value)}")
    return value


def _mapping(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> dict[str, Any]:
    return yamlio.require_mapping(doc, TOKEN, parts, value)


def _fields(
    doc: YamlDocument, parts: Sequence[PathPart], value: Any
) -> dict[str, list[dict[str, Any]]]:
    data = _mapping(doc, parts, value)
    for name, items in data.items():
        if not isinstance(items, list):
            _fail(doc, [*parts, name], f"a field must be a list of items, not {_kind(items)}")
        for delta, item in enumerate(items):
            _mapping(doc, [*parts, name, delta], item)
    return data


def _depends(doc: YamlDocument, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    data = _mapping(doc, ["_meta", "depends"], value)
    for uuid, entity_type in data.items():
        _string(doc, ["_meta", "depends", uuid], entity_type)
    return dict(data)


def _translations(doc: YamlDocument, value: Any) -> dict[str, dict[str, list[dict[str, Any]]]]:
    if value is None:
        return {}
    data = _mapping(doc, ["translations"], value)
    return {code: _fields(doc, ["translations", code], v) for code, v in data.items()}


def _from_document(doc: YamlDocument) -> ContentDoc:
    data = _mapping(doc, [], doc.data)
    meta = _mapping(doc, ["_meta"], data.get("_meta"))
    for required in ("uuid", "entity_type"):
        if required not in meta:
            _fail(doc, ["_meta", required], "is required")
    entity_type = _string(doc, ["_meta", "entity_type"], meta["entity_type"])
    if "default" not in data:
        _fail(doc, ["default"], "is required")
    return ContentDoc(
        path=doc.path,
        entity_type=entity_type,
        uuid=_string(doc, ["_meta", "uuid"], meta["uuid"]),
        # Core creates a bundle-less entity under its type's name, and 'en' is its default.
        bundle=_string(doc, ["_meta", "bundle"], meta.get("bundle", entity_type)),
        langcode=_string(doc, ["_meta", "default_langcode"], meta.get("default_langcode", "en")),
        depends=_depends(doc, meta.get("depends")),
        values=_fields(doc, ["default"], data["default"]),
        translations=_translations(doc, data.get("translations")),
    )


def load_content_file(path: Path) -> ContentDoc:
    """Parse and check one default-content file."""
    return _from_document(yamlio.load_document(path, TOKEN))


def _content_files(content_dir: Path) -> list[Path]:
    # Symfony's Finder, which core uses, skips dot files and dot directories.
    def visible(path: Path) -> bool:
        return not any(part.startswith(".") for part in path.relative_to(content_dir).parts)

    found = sorted(path for path in content_dir.rglob("*.yml") if path.is_file() and visible(path))
    # No file may lead out of the content directory, resolved once for all of them (a campaign
    # reads the baseline's content dir every attempt; resolving it per file doubled the cost).
    base = content_dir.resolve()
    for path in found:
        if not is_within(path.resolve(), base):
            resolved_within(path, "content file", content_dir)  # says which, and where it leads
    return found


# ---------------------------------------------------------------------------- ordering


def _edges(docs: Mapping[str, ContentDoc]) -> dict[str, set[str]]:
    """uuid -> the in-set uuids it must come after."""
    out: dict[str, set[str]] = {}
    for uuid, doc in docs.items():
        wanted = set(doc.depends) | set(references(doc.values))
        for fields in doc.translations.values():
            wanted |= set(references(fields))
        out[uuid] = {dep for dep in wanted if dep in docs and dep != uuid}
    return out


def _find_cycle(pending: Mapping[str, set[str]]) -> list[str]:
    # Every node left after Kahn's pass has a pending predecessor; walking back must loop.
    node = min(pending)
    path: list[str] = []
    while node not in path:
        path.append(node)
        node = min(dep for dep in pending[node] if dep in pending)
    return path[path.index(node):]


def _sort(docs: Mapping[str, ContentDoc]) -> list[ContentDoc]:
    after = _edges(docs)
    dependents: dict[str, list[str]] = {uuid: [] for uuid in docs}
    for uuid, deps in after.items():
        for dep in deps:
            dependents[dep].append(uuid)
    waiting = {uuid: len(deps) for uuid, deps in after.items()}
    ready = [(doc.entity_type, uuid) for uuid, doc in docs.items() if not waiting[uuid]]
    heapq.heapify(ready)
    ordered: list[ContentDoc] = []
    while ready:
        _, uuid = heapq.heappop(ready)
        ordered.append(docs[uuid])
        for child in dependents[uuid]:
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, (docs[child].entity_type, child))
    if len(ordered) < len(docs):
        _cycle_error(docs, {u: after[u] for u, n in waiting.items() if n})
    return ordered


def _ref_parts(doc: ContentDoc, dep: str) -> list[PathPart]:
    """Where in ``doc`` the dependency on ``dep`` is written."""
    if dep in doc.depends:
        return ["_meta", "depends", dep]
    sections = [(["default"], doc.values)]
    sections += [(["translations", code], fields) for code, fields in doc.translations.items()]
    for prefix, fields in sections:
        for name, items in fields.items():
            for delta, item in enumerate(items):
                if dep in _item_refs(item):
                    return [*prefix, name, delta]
    return ["_meta"]


def _cycle_error(docs: Mapping[str, ContentDoc], pending: Mapping[str, set[str]]) -> NoReturn:
    cycle = _find_cycle(pending)
    first = docs[cycle[0]]
    assert first.path is not None  # docs in a directory always have one
    where = yamlio.load_document(first.path, TOKEN).where(_ref_parts(first, cycle[1 % len(cycle)]))
    files = ", ".join(str(docs[uuid].path) for uuid in cycle)
    chain = " -> ".join([*cycle, cycle[0]])
    raise ApgError(TOKEN, f"{where}: dependency cycle (each needs the next): {chain} "
                          f"(files: {files})", exit_code=1)


def load_content_dir(content_dir: Path) -> list[ContentDoc]:
    """Every ``content/**/*.yml`` document, dependencies first; a missing dir gives ``[]``."""
    if not content_dir.is_dir():
        return []
    docs: dict[str, ContentDoc] = {}
    for path in _content_files(content_dir):
        yaml_doc = yamlio.load_document(path, TOKEN)
        doc = _from_document(yaml_doc)
        if doc.uuid in docs:
            _fail(yaml_doc, ["_meta", "uuid"],
                  f"uuid {doc.uuid} is used by both {docs[doc.uuid].path} and {path}")
        docs[doc.uuid] = doc
    return _sort(docs)


# ---------------------------------------------------------------------------- export


def _omitted(entity_type: str, values: Mapping[str, Sequence[Mapping[str, Any]]]) -> set[str]:
    keys = _ENTITY_KEYS.get(entity_type, _FALLBACK_KEYS)
    names = set(_ALWAYS_OMITTED)
    names.update(key for key in (keys.revision, keys.bundle, keys.revision_created) if key)
    if keys.integer_id or _holds_integers(values.get(keys.id, ())):
        names.add(keys.id)
    return names


def _holds_integers(items: Sequence[Mapping[str, Any]]) -> bool:
    def integral(value: Any) -> bool:
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.isdigit())
    return bool(items) and all(integral(item.get("value")) for item in items)


def _reference_types(
    values: Mapping[str, Sequence[Mapping[str, Any]]], ref_types: Mapping[str, str]
) -> dict[str, str]:
    depends: dict[str, str] = {}
    for name, items in values.items():
        for delta, item in enumerate(items):
            for uuid in _item_refs(item):
                entity_type = ref_types.get(uuid, item.get("target_type"))
                if not isinstance(entity_type, str):
                    raise ApgError(TOKEN, f"$.default.{name}[{delta}]: the entity type of "
                                          f"referenced uuid {uuid} is unknown; pass it in "
                                          "ref_types", exit_code=1)
                depends[uuid] = entity_type
    return dict(sorted(depends.items()))


def to_document(
    entity_type: str,
    uuid: str,
    bundle: str,
    values: Mapping[str, list[dict[str, Any]]],
    langcode: str = "en",
    *,
    ref_types: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An entity as the exporter writes it. ``ref_types`` maps referenced uuids to types."""
    omit = _omitted(entity_type, values)
    kept = {name: copy.deepcopy(list(items)) for name, items in sorted(values.items())
            if name not in omit and items}
    meta: dict[str, Any] = {
        "version": FORMAT_VERSION, "entity_type": entity_type, "uuid": uuid, "bundle": bundle,
        "default_langcode": langcode,
    }
    depends = _reference_types(kept, ref_types or {})
    if depends:
        meta["depends"] = depends
    return {"_meta": meta, "default": kept}


def dump_document(doc: Mapping[str, Any]) -> str:
    """YAML text for a content document; ``_meta`` first so files read the same everywhere."""
    order = ("_meta", "default", "translations")
    ordered = {key: doc[key] for key in order if key in doc}
    ordered.update({key: value for key, value in doc.items() if key not in order})
    return yamldump.dumps(ordered)
