"""Fixtures: lookup, manifest fragments, ownership claims, fixture sets and the manifest union.

A set's key is computed by `set_key` from the base version and the fixtures' ``name@version`` pins.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import BASE_RECIPE_NAME, project_dir
from ai_proving_ground.schemas import validate_document
from ai_proving_ground.set_key import canonical_set, set_key
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.yamlio import load_document

DEFAULT_FIXTURES = ("kb_docs", "canvas_home")
FRAGMENT = Path("manifest") / "fragment.yml"


# Field item properties, in the order a facts record and the doctor read a field's value.
MAIN_PROPERTIES = ("value", "target_uuid", "target_id", "uri", "alias")


def main_property(item: dict[str, Any]) -> Any:
    """``value``, else ``target_uuid``, ``target_id``, ``uri``, ``alias``; else the whole item."""
    for prop in MAIN_PROPERTIES:
        if prop in item:
            return item[prop]
    return dict(item)


def record_value(items: list[dict[str, Any]]) -> Any:
    """A field's value in a facts record: the items' main property, one value or a list."""
    values = [main_property(item) for item in items]
    if not values:
        return None
    return values[0] if len(values) == 1 else values


@dataclass(frozen=True)
class Fixture:
    """One resolved fixture and its validated manifest fragment."""

    name: str
    directory: Path
    fragment: dict[str, Any]
    with_facts: bool = True

    @property
    def version(self) -> int:
        return int(self.fragment["version"])

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def owned_config(self) -> list[str]:
        return list(self.fragment["owns"]["config"])

    @property
    def namespace(self) -> str:
        return str(self.fragment["owns"]["content_namespace"])

    @property
    def facts(self) -> dict[str, Any]:
        if not self.with_facts:
            raise RuntimeError(f"fixture {self.name} was loaded without its facts")
        facts: dict[str, Any] = self.fragment.get("facts") or {
            "modules": [], "config": [], "counts": {}, "content": []}
        return facts


@dataclass(frozen=True)
class FixtureSet:
    """The fixtures a target needs, plus the base version: together they make the set key."""

    base_version: str
    fixtures: tuple[Fixture, ...]

    @property
    def names(self) -> list[str]:
        return sorted(f.name for f in self.fixtures)

    @property
    def canonical(self) -> str:
        return canonical_set(self.base_version, [f.pin for f in self.fixtures])

    @property
    def key(self) -> str:
        return set_key(self.base_version, [f.pin for f in self.fixtures])


def requested_names(arguments: Sequence[str], settings: Settings = DEFAULT_SETTINGS) -> list[str]:
    """Fixture names from arguments, else AI_PG_FIXTURES, else the shipped default set."""
    if arguments:
        return list(dict.fromkeys(arguments))
    return list(dict.fromkeys(settings.fixtures)) if settings.fixtures else list(DEFAULT_FIXTURES)


def search_roots(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> list[Path]:
    """AI_PG_FIXTURE_PATH entries (relative to the app root), the bed's recipes/, shipped fixtures/."""
    roots = [approot / entry if not os.path.isabs(entry) else Path(entry)
             for entry in settings.fixture_path]
    roots.append(approot / "recipes")
    roots.append(project_dir("fixtures"))
    return roots


def available_fixtures(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> list[str]:
    """Names of every ``fixture_<name>/recipe.yml`` in the search roots, sorted."""
    names: set[str] = set()
    for root in search_roots(approot, settings):
        if root.is_dir():
            names.update(p.name.removeprefix("fixture_") for p in root.glob("fixture_*")
                         if (p / "recipe.yml").is_file())
    return sorted(names)


def find_fixture(name: str, approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """The one directory ``fixture_<name>/`` holding a recipe.yml; symlinks to it count once."""
    if not name or not name.replace("_", "").isalnum() or not name[0].isalpha():
        raise ApgError("APG_FIXTURE_INVALID", f"fixture name {name!r} must be a machine name "
                       "(letters, digits, underscores)", exit_code=2)
    hits: dict[Path, Path] = {}
    roots = search_roots(approot, settings)
    for root in roots:
        candidate = root / f"fixture_{name}"
        if (candidate / "recipe.yml").is_file():
            hits.setdefault(candidate.resolve(), candidate)
    if not hits:
        searched = ", ".join(str(r) for r in roots)
        raise ApgError("APG_FIXTURE_NOT_FOUND", f"no fixture_{name}/recipe.yml in: {searched}",
                       exit_code=2)
    # Copies with the same files are one fixture (say the shipped one copied into recipes/ to be
    # tracked with the project): the first in lookup order is used. Copies that differ are not.
    first, *others = hits.values()
    for other in others:
        difference = _first_difference(first, other)
        if difference is not None:
            raise ApgError(
                "APG_FIXTURE_AMBIGUOUS",
                f"fixture {name} exists in {first} and in {other}, and they differ ({difference}); "
                f"keep the one you mean and delete the other, or give a variant a new name "
                f"(rename its directory to fixture_<new name> and its fragment's name)",
                exit_code=2)
    return first


def _first_difference(one: Path, other: Path) -> str | None:
    """The first relative path whose bytes differ between two fixture trees, or ``None``."""
    def tree(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}

    left, right = tree(one), tree(other)
    for relative in sorted(left.keys() | right.keys()):
        if relative not in left or relative not in right:
            return f"{relative} is only in {one if relative in left else other}"
        if left[relative].read_bytes() != right[relative].read_bytes():
            return f"{relative} differs"
    return None


_FACTS_LINE = re.compile(r"^facts:", re.MULTILINE)
_TOP_LEVEL_KEY = re.compile(r"^[^\s#-]", re.MULTILINE)


def _hand_kept_text(text: str) -> str | None:
    """The text before a final top-level ``facts:`` key; None when facts is not last."""
    found = _FACTS_LINE.search(text)
    if found is None:
        return text
    if _TOP_LEVEL_KEY.search(text, found.end()):
        return None
    return text[: found.start()]


def load_fragment(path: Path, with_facts: bool = True) -> dict[str, Any]:
    """A validated manifest fragment; errors carry file:line:col: $.path.

    Without facts only the hand-kept head is parsed: on a fixture of 10,000 items the facts are
    most of the file, and provision, reset and grade need just the name, version and claims.
    """
    head = None
    if not with_facts:
        try:
            head = _hand_kept_text(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            head = None  # load_document reports it with the file name
    doc = load_document(path, token="APG_FRAGMENT_INVALID", text=head)
    validate_document(doc, "fragment", token="APG_FRAGMENT_INVALID")
    data: dict[str, Any] = doc.data
    return data


def load_fixture(name: str, approot: Path, with_facts: bool = True,
                 settings: Settings = DEFAULT_SETTINGS) -> Fixture:
    directory = find_fixture(name, approot, settings)
    fragment_path = directory / FRAGMENT
    if not fragment_path.is_file():
        raise ApgError("APG_FRAGMENT_INVALID", f"{fragment_path}: missing; every fixture needs "
                       "manifest/fragment.yml (apg fixture-export writes a scaffold)")
    fragment = load_fragment(fragment_path, with_facts)
    if fragment["name"] != name:
        raise ApgError("APG_FRAGMENT_INVALID", f"{fragment_path}:1:1: $.name: is "
                       f"{fragment['name']!r} but the directory is fixture_{name}")
    return Fixture(name=name, directory=directory, fragment=fragment, with_facts=with_facts)


BASE_VERSION_FILE = "apg.yml"
"""Beside the base recipe's recipe.yml: ``version``, where no Drupal recipe validator looks."""


def base_version(approot: Path) -> str:
    """The base recipe's version: the bed's own copy's, else the shipped recipe's.

    A bed's copy says it in ``apg.yml`` or, in beds made before that file, in recipe.yml's
    ``extra: ai_proving_ground: version``; a copy that says neither (Drupal 10 refuses a
    top-level ``extra``, so it may have been removed) has the shipped recipe's version.
    """
    in_bed = approot / "recipes" / BASE_RECIPE_NAME
    shipped = project_dir("recipes") / BASE_RECIPE_NAME
    for recipe_dir in (in_bed, shipped):
        found = _declared_base_version(recipe_dir)
        if found is not None:
            return found
    if not (shipped / BASE_VERSION_FILE).is_file():
        raise ApgError("APG_INSTALL_BROKEN", f"no {BASE_RECIPE_NAME}/{BASE_VERSION_FILE} in {shipped.parent}")
    raise ApgError("APG_RECIPE_INVALID", f"{shipped / BASE_VERSION_FILE}:1:1: $.version: "
                   "the base recipe's version is missing; write version: '<n>'")


def _declared_base_version(recipe_dir: Path) -> str | None:
    sidecar = recipe_dir / BASE_VERSION_FILE
    if sidecar.is_file():
        doc = load_document(sidecar, token="APG_RECIPE_INVALID")
        version = doc.data.get("version") if isinstance(doc.data, dict) else None
        if version is None or isinstance(version, (dict, list)):
            raise ApgError("APG_RECIPE_INVALID", f"{doc.where(['version'])}: the base recipe "
                           "needs version: '<n>'")
        return str(version)
    recipe = recipe_dir / "recipe.yml"
    if not recipe.is_file():
        return None
    data = load_document(recipe, token="APG_RECIPE_INVALID").data
    legacy = data.get("extra", {}) if isinstance(data, dict) else {}
    version = legacy.get("ai_proving_ground", {}).get("version") if isinstance(legacy, dict) else None
    return None if version is None else str(version)


@dataclass(frozen=True)
class Overlap:
    """Two fixtures claiming overlapping ground."""

    first: str
    second: str
    kind: str  # "config" or "content_namespace"
    claim: str

    def describe(self) -> str:
        return f"{self.first} and {self.second} both claim {self.kind} {self.claim!r}"


def _overlaps(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def find_overlaps(fixtures: tuple[Fixture, ...] | list[Fixture]) -> list[Overlap]:
    """Every pair of ownership claims that intersect: one prefix contains the other."""
    found: list[Overlap] = []
    for i, first in enumerate(fixtures):
        for second in fixtures[i + 1:]:
            for a in first.owned_config:
                found.extend(Overlap(first.name, second.name, "config", f"{a} / {b}" if a != b
                                     else a)
                             for b in second.owned_config if _overlaps(a, b))
            if _overlaps(first.namespace, second.namespace):
                found.append(Overlap(first.name, second.name, "content_namespace",
                                     f"{first.namespace} / {second.namespace}"))
    return found


def load_set(names: Sequence[str], approot: Path, check_overlap: bool = True,
             with_facts: bool = False, settings: Settings = DEFAULT_SETTINGS) -> FixtureSet:
    """Resolve and validate a fixture set; overlapping claims are refused before anything changes.

    ``with_facts`` also loads the machine-written facts (the doctor and the union need them).
    """
    fixtures = tuple(load_fixture(name, approot, with_facts, settings)
                     for name in dict.fromkeys(names))
    if check_overlap:
        overlaps = find_overlaps(fixtures)
        if overlaps:
            raise ApgError("APG_FIXTURE_OVERLAP", "; ".join(o.describe() for o in overlaps)
                           + "; give each fixture its own config prefixes and UUID namespace")
    return FixtureSet(base_version=base_version(approot), fixtures=fixtures)


def union_manifest(fixture_set: FixtureSet) -> dict[str, Any]:
    """The unioned manifest the doctor reads: every fixture's facts, with where they came from."""
    modules: set[str] = set()
    config: dict[str, str] = {}
    counts: dict[str, dict[str, int]] = {}
    content: list[dict[str, Any]] = []
    for fixture in sorted(fixture_set.fixtures, key=lambda f: f.name):
        facts = fixture.facts
        modules.update(facts["modules"])
        config.update(dict.fromkeys(facts["config"], fixture.name))
        for entity_type, bundles in facts["counts"].items():
            for bundle, count in bundles.items():
                merged = counts.setdefault(entity_type, {})
                merged[bundle] = merged.get(bundle, 0) + int(count)
        content.extend({**record, "fixture": fixture.name} for record in facts["content"])
    return {
        "set_key": fixture_set.key,
        "canonical": fixture_set.canonical,
        "base_version": fixture_set.base_version,
        "fixtures": [{"name": f.name, "version": f.version, "directory": str(f.directory),
                      "owns": f.fragment["owns"]} for f in sorted(fixture_set.fixtures,
                                                                  key=lambda f: f.name)],
        "modules": sorted(modules),
        "config": dict(sorted(config.items())),
        "counts": {t: dict(sorted(b.items())) for t, b in sorted(counts.items())},
        "content": sorted(content, key=lambda r: (r["entity_type"], r["uuid"])),
    }
