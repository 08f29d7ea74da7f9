"""A DDEV bed as a proving bed: the operator's own provisioned project, reset before every build
through the ddev driver, read and written as drush and the probe read and write it.

Reads batch as the driver wants: every config object (its names, then their values) and every
entity (their UUIDs from one content export of each entity type the embedded site knows, then
their records) in four round trips; a mutant's objects alone in one. A mutant's writes are what
an agent would run: ``drush config:set NAME ? YAML --input-format=yaml`` (the reference's own
form) or ``config:delete``, and for an entity only the values that differ from what the site
holds, through apg's ``entity:update`` / ``entity:create`` (the probe), or ``entity:delete``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.reset import require_baseline, reset
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.layout import is_ddev_project
from ai_proving_ground.mutation.beds import apply_steps
from ai_proving_ground.mutation.state import EntityState, SiteState, Writes
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import ContentSelector, StateQuery
from ai_proving_ground.sites.ddev import DdevSite
from ai_proving_ground.sites.ddev.entity_update import COMMAND as ENTITY_UPDATE
from ai_proving_ground.sites.ddev.entity_update import CREATE_COMMAND as ENTITY_CREATE
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES

# An entity is named by its UUID, a config object by a dotted name: never the same shape.
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
WRITE_REFUSED = "APG_MUTATE_WRITE_REFUSED"


@dataclass
class DdevBed:
    """The operator's DDEV bed, which must hold the task's fixture set's baseline."""

    path: Path
    fixtures: tuple[str, ...]
    settings: Settings
    driver: DdevSite
    kind = "ddev"

    @classmethod
    def make(cls, path: Path, fixtures: Sequence[str], settings: Settings) -> DdevBed:
        if not is_ddev_project(path):
            raise UsageError(f"{path} is not a DDEV project (no .ddev/config.yaml): a DDEV bed "
                             "is one, provisioned with `apg provision --approot DIR FIXTURE...`")
        require_baseline(path, fixtures, settings)  # APG_RESET_NO_BASELINE names the command
        return cls(path=path, fixtures=tuple(fixtures), settings=settings, driver=DdevSite(path))

    @property
    def site(self) -> DdevSite:
        return self.driver

    def fresh(self) -> DdevSite:
        outcome = reset(self.path, self.fixtures, self.driver, self.settings)
        if outcome.failures:
            raise ApgError("APG_MUTATE_BED", f"{self.path} does not reset: "
                           f"{'; '.join(outcome.failures)}")
        return self.driver

    def read(self) -> SiteState:
        config = self.driver.all_config()
        documents = self.driver.export_content([ContentSelector(t) for t in ENTITY_TYPES])
        uuids = [str(d["_meta"]["uuid"]) for d in documents]
        return SiteState(config=config, entities=self._entities(uuids))

    def read_names(self, names: Iterable[str]) -> SiteState:
        names = sorted(set(names))
        uuids = tuple(n for n in names if _UUID.match(n))
        config = tuple(n for n in names if not _UUID.match(n))
        answer = self.driver.read_state(StateQuery(config=config, entities=uuids))
        return SiteState(config={n: v for n, v in answer.config.items() if v is not None},
                         entities={u: EntityState.of(r) for u, r in answer.entities.items()
                                   if r is not None})

    def _entities(self, uuids: Sequence[str]) -> dict[str, EntityState]:
        if not uuids:
            return {}
        found = self.driver.entities(uuids)
        return {u: EntityState.of(r) for u, r in found.items() if r is not None}

    def write(self, writes: Writes) -> None:
        for name, data in writes.config.items():
            if data is None:
                self._drush("config:delete", name, "-y")
            else:  # JSON is YAML: the reference's own config:set form
                self._drush("config:set", name, "?", json.dumps(data), "--input-format=yaml", "-y")
        if not writes.entities:
            return
        existing = self.driver.entities(list(writes.entities))
        for uuid, entity in writes.entities.items():
            record = existing.get(uuid)
            if entity is None:
                if record is not None:
                    self._drush("entity:delete", record.entity_type, str(record.id), "-y")
            elif record is None:
                create = [ENTITY_CREATE, entity.entity_type]
                if ENTITY_TYPES[entity.entity_type].bundle_prefix is not None:
                    create.append(entity.bundle)  # a type with bundles names one
                self._drush(*create, "--uuid", uuid, "--values", json.dumps(_values(entity)))
            else:
                changed = _changes(EntityState.of(record), entity)
                if changed:
                    self._drush(ENTITY_UPDATE, entity.entity_type, uuid, "--values",
                                json.dumps(changed))

    def _drush(self, *args: str) -> None:
        done = self.driver.drush(list(args))
        if done.returncode != 0:
            raise ApgError(WRITE_REFUSED, f"drush {args[0]} {args[1]} failed (exit "
                           f"{done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")

    def apply_steps(self, steps: Sequence[Sequence[str]], env: Mapping[str, str]) -> str | None:
        return apply_steps(self.path, steps, env)


def _values(entity: EntityState) -> dict[str, Any]:
    """The entity as entity:create values: its fields, its label and its published state."""
    definition = ENTITY_TYPES[entity.entity_type]
    values: dict[str, Any] = dict(entity.fields)
    values[definition.label_field] = [{"value": entity.label}]
    values[definition.status_field] = [{"value": entity.status}]
    return values


def _changes(now: EntityState, wanted: EntityState) -> dict[str, Any]:
    """The values entity:update must set to make ``now`` into ``wanted``: a field the mutant
    lacks is emptied (the update merges, so it would stay)."""
    definition = ENTITY_TYPES[wanted.entity_type]
    changed: dict[str, Any] = {name: items for name, items in wanted.fields.items()
                               if now.fields.get(name) != items}
    changed.update({name: [] for name in now.fields if name not in wanted.fields})
    if now.label != wanted.label:
        changed[definition.label_field] = [{"value": wanted.label}]
    if now.status != wanted.status:
        changed[definition.status_field] = [{"value": wanted.status}]
    return changed
