"""Where the project's shipped files are: recipes, fixtures, datasets, campaigns, adapters and
host commands, and the escrow verifier.

A wheel carries them inside the package as ``ai_proving_ground/_data/`` (setup.py copies the
repository's top-level folders there at build time); a checkout, installed editable, has them at
its top level. Either way they sit under :data:`PROJECT_ROOT` with the repository's layout
(``recipes/``, ``fixtures/``, ``datasets/``, ``campaigns/``, ``ddev/``, ``scripts/escrow_verify.py``),
so every caller reads them one way.
"""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.errors import ApgError

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_PACKAGE_DIR = "_data"
"""The folder of a built package that holds the shipped files (written by setup.py)."""
BASE_RECIPE_NAME = "apg_base"


def _shipped_root() -> Path:
    # Where importlib.resources.files() looks for a package of files on disk, without importing
    # it (and zipfile) at start-up; imported from a zip, neither finds a folder there.
    data = PACKAGE_DIR / DATA_PACKAGE_DIR
    if data.is_dir():
        return data.resolve()
    # An editable install from the checkout (scripts/ai_proving_ground): the project's
    # top-level folders sit two levels up.
    return PACKAGE_DIR.parents[1]


PROJECT_ROOT = _shipped_root()


def project_dir(name: str) -> Path:
    """A shipped top-level folder; missing means a broken install, and says how to fix it."""
    path = PROJECT_ROOT / name
    if not path.is_dir():
        raise ApgError("APG_INSTALL_BROKEN", f"{path} is missing: this installation of "
                       "ai-proving-ground is incomplete; reinstall it (pipx install "
                       "ai-proving-ground, or pip install . from a checkout)")
    return path


def base_recipe_dir() -> Path:
    return project_dir("recipes") / BASE_RECIPE_NAME



def portable_path(path: Path, approot: Path) -> str:
    """How a record handed to others names a file, never by an absolute host path: relative to
    the bed when inside it; ``apg:<path>`` when shipped with the product (``apg:datasets/x.yml``,
    ``apg:ai_proving_ground/tasks/checks/__init__.py``); else ``external:<file name>``. The
    record's hash of the file identifies it wherever it lives."""
    resolved = path.resolve()
    if resolved.is_relative_to(approot.resolve()):
        return resolved.relative_to(approot.resolve()).as_posix()
    # Code by its module path, data by the repository's layout: the same name from a checkout
    # (scripts/ai_proving_ground/, datasets/) and from a wheel (ai_proving_ground/, _data/).
    if resolved.is_relative_to(PACKAGE_DIR) and not resolved.is_relative_to(
            PACKAGE_DIR / DATA_PACKAGE_DIR):
        return "apg:" + resolved.relative_to(PACKAGE_DIR.parent).as_posix()
    if resolved.is_relative_to(PROJECT_ROOT):
        return "apg:" + resolved.relative_to(PROJECT_ROOT).as_posix()
    return f"external:{resolved.name}"
