"""Which bed a command acts on: --approot, else AI_PG_APPROOT, else the current directory."""

from __future__ import annotations

import os
from pathlib import Path

from ai_proving_ground.errors import ApgError


def resolve_approot(argument: str | None, must_exist: bool = True) -> Path:
    """The app root as an absolute path; a missing directory names where it came from."""
    if argument:
        raw, source = argument, "--approot"
    elif os.environ.get("AI_PG_APPROOT"):
        raw, source = os.environ["AI_PG_APPROOT"], "AI_PG_APPROOT"
    else:
        raw, source = os.getcwd(), "the current directory"
    path = Path(raw).expanduser().absolute()
    if must_exist and not path.is_dir():
        raise ApgError("APG_APPROOT_MISSING", f"app root {path} (from {source}) is not a "
                       "directory; pass --approot DIR or set AI_PG_APPROOT", exit_code=2)
    return path


def driver_name_for(approot: Path) -> str:
    """AI_PG_SITE_DRIVER wins; a DDEV project uses ddev; anything else is the embedded site."""
    chosen = os.environ.get("AI_PG_SITE_DRIVER")
    if chosen:
        return chosen
    return "ddev" if (approot / ".ddev" / "config.yaml").is_file() else "sqlite"
