"""The site's state as a mutation sees it: every config object and content entity of an
embedded bed, the difference the reference made, and the writes that make a mutant.

A mutant is the reference's state plus a few writes: config objects saved as ``drush
config:set`` saves them (stored as given, cast by schema: the reference's own steps write so)
or deleted, and entities updated, created or deleted through the embedded site's entity API.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES

# Which modules are installed: changing it is an install, not a config edit, so no operator does.
MODULE_STATE = "core.extension"


@dataclass(frozen=True)
class EntityState:
    """A content entity without what import assigns (serial id, times)."""

    entity_type: str
    bundle: str
    label: str
    status: bool
    fields: dict[str, Any]

    @classmethod
    def of(cls, record: EntityRecord) -> EntityState:
        return cls(record.entity_type, record.bundle, record.label, record.status,
                   copy.deepcopy(record.fields))

    def as_json(self) -> dict[str, Any]:
        return {"entity_type": self.entity_type, "bundle": self.bundle, "label": self.label,
                "status": self.status, "fields": self.fields}


@dataclass(frozen=True)
class SiteState:
    """All config (name -> data) and all content (UUID -> entity) of a bed."""

    config: dict[str, Any]
    entities: dict[str, EntityState]

    def changed_config(self, other: SiteState) -> list[str]:
        """Config names whose data differ between ``other`` and this state (either side)."""
        names = sorted(self.config.keys() | other.config.keys())
        return [n for n in names if self.config.get(n) != other.config.get(n)]

    def changed_entities(self, other: SiteState) -> list[str]:
        uuids = sorted(self.entities.keys() | other.entities.keys())
        return [u for u in uuids if self.entities.get(u) != other.entities.get(u)]


@dataclass
class Writes:
    """What a mutant changes on top of the reference: None deletes."""

    config: dict[str, Any] = field(default_factory=dict)
    entities: dict[str, EntityState | None] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [*self.config, *self.entities]


def read_site(site: EmbeddedSite) -> SiteState:
    """Every config object and every entity of every type the embedded site knows."""
    with site.session() as store:
        config = store.config_all()
        entities = {r.uuid: EntityState.of(r) for entity_type in ENTITY_TYPES
                    for r in store.entities_of(entity_type)}
    return SiteState(config=config, entities=entities)


def apply_writes(site: EmbeddedSite, writes: Writes) -> None:
    """Make the writes in one session (all or nothing); a refusal raises the site's ApgError."""
    with site.session() as store:
        for name, data in writes.config.items():
            if data is None:
                site.config_delete(store, name)
            else:
                site.config_save(store, name, copy.deepcopy(data), raw=True)
        for uuid, entity in writes.entities.items():
            existing = store.entities_by_uuid([uuid]).get(uuid)
            if entity is None:
                store.entity_delete(uuid)
            elif existing is None:
                site.create_entity(store, entity.entity_type, entity.bundle, _values(entity), uuid)
            else:
                # A field the mutant lacks is emptied: the API merges, so it would stay.
                emptied: dict[str, Any] = {name: [] for name in existing.fields if name not in entity.fields}
                site.update_entity(store, existing, {**emptied, **_values(entity)})


def _values(entity: EntityState) -> dict[str, Any]:
    """The entity as API values: its fields plus its label and published state."""
    definition = ENTITY_TYPES[entity.entity_type]
    return {**copy.deepcopy(entity.fields), definition.label_field: [{"value": entity.label}],
            definition.status_field: [{"value": entity.status}]}
