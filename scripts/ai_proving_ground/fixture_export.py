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

`fixture_plan` computes what an export would write; this module resolves the fixture,
scaffolds a new one, and writes.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixture_plan import ExportPlan, plan_export
from ai_proving_ground.fixtures import (
    FRAGMENT,
    find_fixture,
    load_fragment,
    search_roots,
)
from ai_proving_ground.fsutil import atomic_write_text, resolved_within
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import (
    SiteDriver,
    driver_for,
)

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


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


def check_name(name: str) -> str:
    """A fixture name as the fragment schema allows it (exit 2 otherwise)."""
    if not NAME_PATTERN.match(name):
        raise ApgError("APG_FIXTURE_INVALID", f"fixture name {name!r} must be a lower-case "
                       "machine name (a letter, then letters, digits, underscores)", exit_code=2)
    return name


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
    for rel in (FRAGMENT, Path("recipe.yml")):  # read before anything else: never through a way out
        resolved_within(directory / rel, "fixture file", directory)
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
    plan = plan_export(site, fragment, install, hand_kept, directory)
    for planned in [*plan.files, *plan.removed]:  # all checked before any is read or written
        resolved_within(directory / planned, "fixture file", directory)
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


def _write(directory: Path, plan: ExportPlan, changed: list[str]) -> None:
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
