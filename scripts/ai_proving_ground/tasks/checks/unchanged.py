"""The ``site_unchanged`` check: nothing outside what the task allows differs from the baseline.

Config: the whole live config is compared with the baseline's config export (every object the
site held when provision captured the baseline, ``baselines/config_export``), so an edit to a
config object no fixture owns (another view, the site's settings) and a new object anywhere are
changes. A baseline captured before provision recorded that export is compared as it used to
be: the task's fixtures' config files, no object added under their owned prefixes, and the base
recipe's config actions (the site name, the front page). Both sides are compared as
``fixture_plan.comparable_config`` spells them, so the embedded site and Drupal compare alike.

Content: the fixtures' content files by label, status and every configurable field, and an
aliased entity must still be what a visitor of its alias gets (a page moved off its path or
unpublished). Counts: every watched content entity type's total and each of its bundles' counts
against the counts provision recorded (``baselines/content_counts``), so a new user, a file, a
term in a vocabulary no fixture ships or a node of a bundle no fixture declares is a change; a
baseline captured before provision recorded them compares the fixtures' declared counts. A task
declares what it may change in ``allow``: config names (an entry ending in a dot is a prefix),
and content by UUID, ``<entity_type>.<bundle>`` or ``<entity_type>``; an allowed bundle's items
are left out of its type's total, and an allowed UUID the site gained or lost is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines import config_export, content_counts
from ai_proving_ground.baselines.store import Baseline as BaselineFiles
from ai_proving_ground.fixture_plan import comparable_config
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.paths import BASE_RECIPE_NAME, project_dir
from ai_proving_ground.sites.base import CountQuery, EntityRecord, PageQuery, StateAnswer
from ai_proving_ground.sites.embedded.content_model import normalize_items
from ai_proving_ground.sites.embedded.default_content import ContentDoc, load_content_dir
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES
from ai_proving_ground.tasks.checks.base import (
    MISSING,
    Check,
    CheckContext,
    CheckResult,
    QueryPlan,
    check_type,
    dig,
)
from ai_proving_ground.tasks.checks.state import same_stored
from ai_proving_ground.yamlio import load_yaml


@dataclass
class Baseline:
    """What provision imported, as the check compares it."""

    config: dict[str, Any] = field(default_factory=dict)  # name -> shipped data
    actions: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {key: value}
    prefixes: list[str] = field(default_factory=list)  # owned config prefixes
    content: list[ContentDoc] = field(default_factory=list)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    # The baseline's config export, name -> comparable data; None for an older baseline.
    exported: dict[str, Any] | None = None
    # Whether ``counts`` are provision's recorded counts ((type, "") a type's total) rather
    # than the fixtures' declared ones (an older baseline).
    recorded: bool = False


def load_baseline(context: CheckContext) -> Baseline:
    baseline = Baseline()
    fixture_set = load_set(list(context.fixtures), context.approot, with_facts=True,
                           settings=context.settings)
    files = BaselineFiles.of(context.approot, fixture_set.key, context.settings)
    exported = config_export.load(files)
    recorded = content_counts.load(files)
    if recorded is not None:
        baseline.counts, baseline.recorded = recorded, True
    if exported is not None:
        baseline.exported = {name: comparable_config(data) for name, data in exported.items()}
    for fixture in fixture_set.fixtures:
        if exported is None:  # the export holds the fixtures' config; an older baseline reads it
            for path in sorted((fixture.directory / "config").glob("*.yml")):
                baseline.config[path.stem] = load_yaml(path, token="APG_CONFIG_INVALID")
            baseline.prefixes += fixture.owned_config
        baseline.content += load_content_dir(fixture.directory / "content")
        for entity_type, bundles in ({} if recorded is not None else fixture.facts["counts"]).items():
            for bundle, count in bundles.items():
                key = (entity_type, bundle)
                baseline.counts[key] = baseline.counts.get(key, 0) + int(count)
    if exported is None:
        baseline.actions = base_actions(context.approot)
    return baseline


def base_actions(approot: Path) -> dict[str, dict[str, Any]]:
    """The base recipe's ``simpleConfigUpdate`` actions: config keys provision set."""
    recipe = approot / "recipes" / BASE_RECIPE_NAME / "recipe.yml"
    if not recipe.is_file():
        recipe = project_dir("recipes") / BASE_RECIPE_NAME / "recipe.yml"
    data = load_yaml(recipe, token="APG_RECIPE_INVALID") or {}
    actions = ((data.get("config") or {}).get("actions") or {}) if isinstance(data, dict) else {}
    return {name: dict(action["simpleConfigUpdate"]) for name, action in actions.items()
            if isinstance(action, dict) and isinstance(action.get("simpleConfigUpdate"), dict)}


@check_type("site_unchanged")
class SiteUnchanged(Check):
    """The rest of the site equals its baseline: config, content and counts."""

    baseline: Baseline
    _counts: dict[tuple[str, str], int]  # (type, bundle or "" for the total) -> answer index
    _aliases: dict[tuple[str, str], int]

    def prepare(self, context: CheckContext) -> None:
        self.baseline = load_baseline(context)

    def _allowed_config(self, name: str) -> bool:
        return any(name == entry or (entry.endswith(".") and name.startswith(entry))
                   for entry in (self.spec.get("allow") or {}).get("config") or [])

    def _allowed_content(self, entity_type: str, bundle: str, uuid: str = "") -> bool:
        return bool({uuid, entity_type, f"{entity_type}.{bundle}"} & self._allowed())

    def _allowed(self) -> set[str]:
        return set((self.spec.get("allow") or {}).get("content") or [])

    def plan(self, plan: QueryPlan) -> None:
        self._aliases = {(alias, f"{doc.entity_type}:{doc.uuid}"): plan.add(plan.pages,
                                                                           PageQuery(alias))
                         for doc in self.baseline.content
                         if not self._allowed_content(doc.entity_type, doc.bundle, doc.uuid)
                         for alias in _aliases(doc)}
        if self.baseline.exported is not None:
            # Every object the baseline held, and every name the site has now ("" lists all).
            known = set(plan.config)
            plan.config += [n for n in self.baseline.exported if n not in known]
            plan.add(plan.config_prefixes, "")
        else:
            for name in [*self.baseline.config, *self.baseline.actions]:
                plan.add(plan.config, name)
            for prefix in self.baseline.prefixes:
                plan.add(plan.config_prefixes, prefix)
        for doc in self.baseline.content:
            plan.add(plan.entities, doc.uuid)
        keys = set(self.baseline.counts)
        if self.baseline.recorded:
            # An allowed bundle is counted too (it may be new), to leave it out of the total;
            # an allowed UUID is read, to leave it out of the counts wherever it now is.
            keys |= {(t, b) for t, _, b in (e.partition(".") for e in self._allowed()) if b}
            for entry in sorted(self._allowed()):
                if _is_uuid(entry):
                    plan.add(plan.entities, entry)
        self._counts = {key: plan.add(plan.counts, CountQuery(key[0], key[1] or None))
                        for key in sorted(keys)}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        changes = [*self._config_changes(answer), *self._content_changes(answer)]
        expected = {"unchanged_but": self.spec.get("allow") or {}}
        return self.result(not changes, expected, {"changed": changes},
                           "; ".join(changes[:5]) + (f"; and {len(changes) - 5} more"
                                                     if len(changes) > 5 else ""))

    def _config_changes(self, answer: StateAnswer) -> list[str]:
        if self.baseline.exported is not None:
            return self._export_changes(self.baseline.exported, answer)
        changes = []
        for name, shipped in sorted(self.baseline.config.items()):
            if self._allowed_config(name):
                continue
            live = answer.config.get(name)
            if live is None:
                changes.append(f"config {name} was deleted")
            elif comparable_config(live) != comparable_config(shipped):
                where = _first_key(comparable_config(shipped), comparable_config(live))
                changes.append(f"config {name} was changed{where}")
        for name, updates in sorted(self.baseline.actions.items()):
            if self._allowed_config(name):
                continue
            live = answer.config.get(name)
            for key, value in sorted(updates.items()):
                now = MISSING if live is None else dig(live, key)
                if now != value:
                    changes.append(f"config {name}:{key} is {now!r}, the baseline has {value!r}")
        for prefix in self.baseline.prefixes:
            for name in answer.config_names.get(prefix, []):
                if name not in self.baseline.config and not self._allowed_config(name):
                    changes.append(f"config {name} was added")
        return changes

    def _export_changes(self, exported: dict[str, Any], answer: StateAnswer) -> list[str]:
        """The whole config against the baseline's export: deleted, changed and added objects."""
        changes = []
        for name, data in sorted(exported.items()):
            if self._allowed_config(name):
                continue
            live = answer.config.get(name)
            if live is None:
                changes.append(f"config {name} was deleted")
            elif (now := comparable_config(live)) != data:
                changes.append(f"config {name} was changed{_first_key(data, now)}")
        changes += [f"config {name} was added" for name in answer.config_names.get("", [])
                    if name not in exported and not self._allowed_config(name)]
        return changes

    def _content_changes(self, answer: StateAnswer) -> list[str]:
        changes = []
        for doc in self.baseline.content:
            if self._allowed_content(doc.entity_type, doc.bundle, doc.uuid):
                continue
            record = answer.entities.get(doc.uuid)
            what = f"{doc.entity_type} {doc.uuid}"
            if record is None:
                changes.append(f"{what} was deleted")
                continue
            changes += [f"{what} {change}" for change in _entity_changes(doc, record)]
        for (alias, claim), index in self._aliases.items():
            page = answer.pages[index]
            if page.served != claim or page.outcome != "entity":
                got = page.served if page.outcome == "entity" else page.outcome
                changes.append(f"{claim} is no longer what a visitor of {alias} gets ({got})")
        if self.baseline.recorded:
            return changes + self._recorded_count_changes(answer)
        for key, index in self._counts.items():
            if self._allowed_content(*key):
                continue
            count, baseline = answer.counts[index], self.baseline.counts[key]
            if count != baseline:
                changes.append(f"{key[0]} {key[1]}: {count} items, the baseline has {baseline}")
        return changes

    def _recorded_count_changes(self, answer: StateAnswer) -> list[str]:
        """Each bundle's count, then each type's total outside its allowed bundles, against the
        recorded counts; an allowed UUID added or deleted is not counted where it is or was."""
        live = {key: answer.counts[index] for key, index in self._counts.items()}
        base = dict(self.baseline.counts)
        was = {doc.uuid: (doc.entity_type, doc.bundle) for doc in self.baseline.content}
        for uuid in self._allowed():
            record = answer.entities.get(uuid) if _is_uuid(uuid) else None
            if record is not None and uuid not in was:
                counted, where = live, (record.entity_type, record.bundle)
            elif record is None and uuid in was:
                counted, where = base, was[uuid]
            else:
                continue
            for key in (where, (where[0], content_counts.TOTAL)):
                if key in counted:
                    counted[key] -= 1
        changes = []
        for (entity_type, bundle), count in sorted(live.items()):
            if bundle and not self._allowed_content(entity_type, bundle) \
                    and count != base.get((entity_type, bundle), 0):
                changes.append(f"{entity_type} {bundle}: {count} items, the baseline has "
                               f"{base.get((entity_type, bundle), 0)}")
        for entity_type in sorted(t for t, b in live if b == content_counts.TOTAL):
            if entity_type in self._allowed() or any(c.startswith(f"{entity_type} ")
                                                     for c in changes):
                continue  # allowed whole, or a bundle's change already says it
            left_out = [b for t, b in live if t == entity_type and b
                        and f"{entity_type}.{b}" in self._allowed()]
            now, then = (_outside(counts, entity_type, left_out) for counts in (live, base))
            if now != then:
                changes.append(f"{entity_type}: {now} items, the baseline has {then}"
                               + (f" (besides {', '.join(left_out)})" if left_out else ""))
        return changes


def _outside(counts: dict[tuple[str, str], int], entity_type: str, bundles: list[str]) -> int:
    """A type's total, less its items in ``bundles``."""
    return counts.get((entity_type, content_counts.TOTAL), 0) - sum(
        counts.get((entity_type, bundle), 0) for bundle in bundles)


def _is_uuid(entry: str) -> bool:
    """An ``allow.content`` entry naming one entity (types and bundles have no hyphen)."""
    return "-" in entry and "." not in entry


def _aliases(doc: ContentDoc) -> list[str]:
    """The path aliases a content file gives its entity: where a visitor must still find it."""
    return [str(item["alias"]) for item in normalize_items(doc.values.get("path"))
            if isinstance(item.get("alias"), str) and item["alias"]]


def _first_key(shipped: Any, live: Any) -> str:
    """Where two config objects first differ, as a dotted path (`` (at page.front)``)."""
    path = []
    while isinstance(shipped, dict) and isinstance(live, dict):
        key = next((k for k in [*shipped, *(k for k in live if k not in shipped)]
                    if shipped.get(k, MISSING) != live.get(k, MISSING)), None)
        if key is None:
            break
        path.append(str(key))
        shipped, live = shipped.get(key, MISSING), live.get(key, MISSING)
    return f" (at {'.'.join(path)})" if path else ""


def _entity_changes(doc: ContentDoc, record: EntityRecord) -> list[str]:
    definition = ENTITY_TYPES.get(doc.entity_type)
    label_field = definition.label_field if definition else "title"
    status_field = definition.status_field if definition else "status"
    values = {name: normalize_items(items) for name, items in doc.values.items()}
    label = (values.get(label_field) or [{}])[0].get("value", "")
    status = (values.get(status_field) or [{"value": True}])[0].get("value", True)
    changes = []
    if str(label) != record.label:
        changes.append(f"was retitled {record.label!r} (the baseline has {label!r})")
    if not same_stored(bool(status), record.status):
        changes.append("was " + ("published" if record.status else "unpublished"))
    base = definition.base_fields if definition else frozenset()
    for name, items in sorted(values.items()):
        if name in base or name in (label_field, status_field):
            continue  # base fields are read by the checks that need them (a page's path)
        if not _same_items(items, record.fields.get(name, [])):
            changes.append(f"field {name} was changed")
    for name in sorted(set(record.fields) - set(values) - base):
        if record.fields[name]:
            changes.append(f"field {name} was set")
    return changes


def _same_items(shipped: list[dict[str, Any]], live: list[dict[str, Any]]) -> bool:
    """Equal as stored, on the properties the fixture writes (a site adds its own)."""
    return len(shipped) == len(live) and all(
        all(same_stored(value, got.get(key)) for key, value in item.items())
        for item, got in zip(shipped, live, strict=True))
