"""The ``ddev`` site driver: a Drupal site under DDEV, read through a PHP probe."""

from __future__ import annotations

from ai_proving_ground.sites.ddev.driver import DdevSite

__all__ = ["DdevSite"]
