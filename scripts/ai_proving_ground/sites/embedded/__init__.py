"""The embedded site: Drupal-shaped state in one SQLite file, needing nothing but Python.

The driver is ``ai_proving_ground.sites.embedded.driver.EmbeddedSite``; this package imports
none of its modules, so that reaching one (``config_sync``, say) does not load them all.
"""
