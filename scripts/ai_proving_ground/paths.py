"""Where the project's shipped files are: recipes, fixtures, datasets and adapters."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.errors import ApgError

PACKAGE_DIR = Path(__file__).resolve().parent
# The package is installed editable from the checkout (scripts/ai_proving_ground), so the
# project's top-level folders sit two levels up.
PROJECT_ROOT = PACKAGE_DIR.parents[1]
BASE_RECIPE_NAME = "apg_base"


def project_dir(name: str) -> Path:
    """A top-level project folder; missing means a broken install, and says how to fix it."""
    path = PROJECT_ROOT / name
    if not path.is_dir():
        raise ApgError("APG_INSTALL_BROKEN", f"{path} is missing; install the project from its "
                       "checkout with `pip install -e .` (make demo does this)")
    return path


def base_recipe_dir() -> Path:
    return project_dir("recipes") / BASE_RECIPE_NAME
