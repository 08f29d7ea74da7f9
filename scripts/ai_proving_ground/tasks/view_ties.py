"""Where a ``view_rows`` check's expected order rests on a sort tie.

Inside rows whose sort keys are equal, Drupal lists them in the database's order (MariaDB's is
not SQLite's), so a check that expects one order there grades the database, not the agent; such
rows belong in one group (``[a, b]``), whose order the check does not judge.
The dataset validator runs each check's view from the task's reference solution over the
task's fixture content, with the embedded site's Views engine, and warns where expected rows
share a tied run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.content_model import normalize_items
from ai_proving_ground.sites.embedded.default_content import load_content_dir
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES
from ai_proving_ground.sites.embedded.views import ViewError, execute_view


def reference_views(steps: Sequence[Sequence[str]]) -> dict[str, Any]:
    """View configs the reference solution sets whole (``config:set views.view.X '?' YAML``)."""
    views: dict[str, Any] = {}
    for step in steps:
        args = [a for a in step if not a.startswith("--")]
        if (len(args) >= 4 and args[0] == "config:set" and args[1].startswith("views.view.")
                and args[2] == "?"):
            try:
                data = yaml.safe_load(args[3])
            except yaml.YAMLError:
                continue
            if isinstance(data, dict):
                views[args[1].removeprefix("views.view.")] = data
    return views


def fixture_entities(fixture_dirs: Sequence[Path]) -> list[EntityRecord]:
    """The fixtures' content as the site imports it: serial ids in import order, per type."""
    records: list[EntityRecord] = []
    next_id: dict[str, int] = {}
    for directory in fixture_dirs:
        for doc in load_content_dir(directory / "content"):
            definition = ENTITY_TYPES.get(doc.entity_type)
            if definition is None:
                continue
            values = {name: normalize_items(items) for name, items in doc.values.items()}
            label = (values.pop(definition.label_field, None) or [{}])[0].get("value", "")
            status = (values.pop("status", None) or [{"value": True}])[0].get("value", True)
            next_id[doc.entity_type] = next_id.get(doc.entity_type, 0) + 1
            records.append(EntityRecord(doc.entity_type, doc.uuid, next_id[doc.entity_type],
                                        doc.bundle or doc.entity_type, str(label), bool(status),
                                        values))
    return records


def tie_warnings(task_id: str, checks: Sequence[Mapping[str, Any]],
                 steps: Sequence[Sequence[str]], fixture_dirs: Sequence[Path]) -> list[str]:
    views = reference_views(steps)
    wanted = [c for c in checks if c.get("type") == "view_rows" and c.get("view") in views]
    if not wanted:
        return []
    entities = fixture_entities(fixture_dirs)
    warnings = []
    for check in wanted:
        display = str(check.get("display", "default"))
        try:
            result = execute_view(str(check["view"]), views[str(check["view"])], display,
                                  entities, arguments=tuple(check.get("arguments") or ()))
        except ViewError:
            continue  # the solution's view does not execute; grading will say so
        found = [r.uuid if check.get("match", "uuid") == "uuid" else r.label for r in result.rows]
        # Each expected row's group: a row alone is its own, rows the task lists together
        # ([a, b]) share one, and their order is not judged.
        group: dict[str, int] = {}
        for index, item in enumerate(check.get("rows") or []):
            group.update(dict.fromkeys(item if isinstance(item, list) else [item], index))
        for start, end in result.ties:
            tied = [row for row in group if row in found[start:end]]
            if len({group[row] for row in tied}) > 1:
                warnings.append(
                    f"task {task_id} check {check.get('id', check['view'])}: the expected order of"
                    f" {len(tied)} rows of {check['view']}/{display} rests on a sort tie (their"
                    " sort keys are equal, so Drupal lists them in the database's order); add a"
                    " sort that tells them apart, such as nid, as the last sort, or list them"
                    " as one group ([a, b]) in rows")
    return warnings
