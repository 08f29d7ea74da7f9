"""Site drivers: the only code that touches a live site."""

from ai_proving_ground.sites.base import SiteDriver, driver_names, get_driver, register_driver

__all__ = ["SiteDriver", "driver_names", "get_driver", "register_driver"]
