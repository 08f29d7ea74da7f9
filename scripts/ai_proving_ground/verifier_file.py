"""The escrow verifier's file (scripts/escrow_verify.py) loaded as a module: the one code that
reads a tree's hashes and runs git, used by the product and by the stdlib verifier alike, so the
two can never disagree about how a tree is read or how git is run."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT

VERIFIER_SOURCE = PROJECT_ROOT / "scripts" / "escrow_verify.py"


@cache
def load_verifier(path: Path = VERIFIER_SOURCE) -> ModuleType:
    """The verifier module (stdlib only, so loading it runs nothing of the bed's)."""
    spec = importlib.util.spec_from_file_location("apg_escrow_verify", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ApgError("APG_INSTALL_BROKEN", f"{path} is missing; reinstall the project")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
