"""The tool versions the driver depends on: Drush 13 (``drush recipe`` exists from 13.0)."""

from __future__ import annotations

import re
from typing import Any

from ai_proving_ground.errors import ApgError

DRUSH_MAJOR = 13
"""The Drush major version the driver is written and tested for."""

_LEADING_NUMBER = re.compile(r"^\s*(\d+)\.")


def require_drush_13(status: dict[str, Any]) -> None:
    """Refuse a site whose ``core:status`` reports a Drush other than 13.x."""
    version = str(status.get("drush-version") or "")
    found = _LEADING_NUMBER.match(version)
    if found is None or int(found.group(1)) != DRUSH_MAJOR:
        raise ApgError(
            "APG_DDEV_DRUSH_VERSION",
            f"the project's Drush is {version or 'unknown'} (drush core:status, drush-version); "
            f"ai_proving_ground needs Drush {DRUSH_MAJOR} (drush recipe exists from 13.0): "
            f"ddev composer require 'drush/drush:^{DRUSH_MAJOR}'",
        )
