"""The baseline's config export: every active config object when the baseline was captured.

Provision writes it beside the dump (``config.<key>.json``, :class:`ConfigExportRecord`), so a
grade can compare the whole live config with what the baseline held (the ``site_unchanged``
check): an edit to a view no fixture owns, or a new config object anywhere, is a change. It is
read from the driver as checks read config (``read_state``), so both sides have one shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.sites.base import SiteDriver, StateQuery

FORMAT = 1


@dataclass(frozen=True)
class ConfigExportRecord(FieldsRecord):
    """config.<key>.json: name -> data of every config object the baseline holds."""

    SCHEMA: ClassVar[str] = "config_export"

    format: int
    set_key: str
    driver: str
    config: dict[str, Any]


def capture(baseline: Baseline, driver: SiteDriver) -> list[str]:
    """Read every config object (two round trips: the names, then their data), record them and
    return their names."""
    names = driver.read_state(StateQuery(config_prefixes=("",))).config_names.get("", [])
    config = driver.read_state(StateQuery(config=tuple(sorted(names)))).config
    write_record(baseline.config_export, ConfigExportRecord(
        format=FORMAT, set_key=baseline.set_key, driver=driver.name,
        config={name: data for name, data in sorted(config.items()) if data is not None}))
    return sorted(names)


def load(baseline: Baseline) -> dict[str, Any] | None:
    """The recorded config, or None for a baseline captured before provision recorded it."""
    if not baseline.config_export.exists() and not baseline.config_export.is_symlink():
        return None
    return read_record(baseline.config_export, ConfigExportRecord).config
