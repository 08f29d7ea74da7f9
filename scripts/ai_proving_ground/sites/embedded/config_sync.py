"""The config sync directory: one ``<name>.yml`` per config object, as Drupal exports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text, resolved_within, safe_name


def chosen(given: str | None, sync: Path, bed: Path) -> tuple[Path, Path]:
    """The directory a config import or export uses and the root it may not leave: the bed for
    its config/sync; a directory named on the command line (a harness exports to its own scratch
    directory) is its own root, so no file in it may link elsewhere. The Inspect tool and the
    sandbox keep agents in the bed."""
    return (Path(given), Path(given)) if given else (sync, bed)


def read_directory(directory: Path, bed: Path) -> dict[str, Any]:
    """Every config object in ``directory``; a bad file is named with its line. The directory
    and each file in it must really be inside ``bed`` (no symlink or ``..`` out of it)."""
    if not directory.is_dir():
        raise ApgError("APG_CONFIG_SYNC_MISSING", f"config directory {directory} does not exist")
    resolved_within(directory, "config directory", bed)
    objects: dict[str, Any] = {}
    for path in sorted(directory.glob("*.yml")):
        resolved_within(path, "config file", bed)
        doc = yamlio.load_document(path, token="APG_CONFIG_INVALID")
        if not isinstance(doc.data, dict):
            raise ApgError("APG_CONFIG_INVALID", f"{doc.where([])}: a config file holds a mapping")
        objects[path.name[: -len(".yml")]] = doc.data
    return objects


def write_directory(directory: Path, objects: dict[str, Any], bed: Path) -> dict[str, list[str]]:
    """Make ``directory`` hold exactly ``objects``; each file is written new-then-rename. The
    directory and the files it holds must really be inside ``bed``, checked before any change."""
    resolved_within(directory, "config directory", bed)
    directory.mkdir(parents=True, exist_ok=True)
    existing = {p.name[: -len(".yml")]: p for p in directory.glob("*.yml")}
    for path in existing.values():
        resolved_within(path, "config file", bed)
    written: list[str] = []
    for name, data in sorted(objects.items()):
        text = yamldump.dumps(data)
        path = directory / f"{safe_name(name, 'config name')}.yml"
        if name in existing and path.read_text(encoding="utf-8") == text:
            continue
        atomic_write_text(path, text)
        written.append(name)
    removed = sorted(set(existing) - set(objects))
    for name in removed:
        existing[name].unlink()
    return {"written": written, "removed": removed}
