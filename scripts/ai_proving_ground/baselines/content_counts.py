"""The baseline's content counts: how many entities of each content type and bundle it held.

Provision writes them beside the config export (``counts.<key>.json``,
:class:`ContentCountsRecord`), so a grade can compare the counts of every watched content
entity type and bundle with the baseline (the ``site_unchanged`` check): a new user, a file
entity, a term in a vocabulary no fixture ships or a node of a bundle no fixture declares is a
change. Counts are asked as every check asks them (``CountQuery``, one batched ``read_state``),
so both drivers answer them alike; a type the site does not define counts 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.sites.base import CountQuery, SiteDriver, StateQuery

FORMAT = 1
# The content entity types compared, each with the config prefix naming its bundles (None: the
# type is its one bundle). Link and alias entities a site makes on its own (path_alias) are not.
WATCHED: dict[str, str | None] = {
    "node": "node.type.", "taxonomy_term": "taxonomy.vocabulary.", "media": "media.type.",
    "block_content": "block_content.type.", "comment": "comment.type.", "user": None,
    "file": None, "canvas_page": None, "menu_link_content": None,
}
TOTAL = ""  # the bundle key of a type's total


@dataclass(frozen=True)
class ContentCountsRecord(FieldsRecord):
    """counts.<key>.json: entity type -> bundle -> count ("" is the type's total)."""

    SCHEMA: ClassVar[str] = "content_counts"

    format: int
    set_key: str
    driver: str
    counts: dict[str, dict[str, int]]


def queries(config_names: list[str] | dict[str, Any]) -> list[CountQuery]:
    """Every watched type's total, and each bundle its bundle config names."""
    asked = []
    for entity_type, prefix in WATCHED.items():
        asked.append(CountQuery(entity_type))
        if prefix is not None:
            asked += [CountQuery(entity_type, name[len(prefix):])
                      for name in sorted(config_names) if name.startswith(prefix)]
    return asked


def capture(baseline: Baseline, driver: SiteDriver, config_names: list[str]) -> None:
    """Count every watched type and bundle (one round trip) and record the counts."""
    asked = queries(config_names)
    counts: dict[str, dict[str, int]] = {}
    for query, count in zip(asked, driver.read_state(StateQuery(counts=tuple(asked))).counts,
                            strict=True):
        counts.setdefault(query.entity_type, {})[query.bundle or TOTAL] = count
    write_record(baseline.content_counts, ContentCountsRecord(
        format=FORMAT, set_key=baseline.set_key, driver=driver.name, counts=counts))


def load(baseline: Baseline) -> dict[tuple[str, str], int] | None:
    """(entity type, bundle or "") -> count, or None for a baseline captured before provision
    recorded them."""
    path = baseline.content_counts
    if not path.exists() and not path.is_symlink():
        return None
    record = read_record(path, ContentCountsRecord)
    return {(entity_type, bundle): int(count) for entity_type, bundles in record.counts.items()
            for bundle, count in bundles.items()}
