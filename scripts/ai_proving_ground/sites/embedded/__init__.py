"""The embedded site: Drupal-shaped state in one SQLite file, needing nothing but Python."""

from ai_proving_ground.sites.embedded.driver import EmbeddedSite

__all__ = ["EmbeddedSite"]
