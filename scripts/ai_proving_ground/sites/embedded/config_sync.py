"""The config sync directory: one ``<name>.yml`` per config object, as Drupal exports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text, safe_name


def read_directory(directory: Path) -> dict[str, Any]:
    """Every config object in ``directory``; a bad file is named with its line."""
    if not directory.is_dir():
        raise ApgError("APG_CONFIG_SYNC_MISSING", f"config directory {directory} does not exist")
    objects: dict[str, Any] = {}
    for path in sorted(directory.glob("*.yml")):
        doc = yamlio.load_document(path, token="APG_CONFIG_INVALID")
        if not isinstance(doc.data, dict):
            raise ApgError("APG_CONFIG_INVALID", f"{doc.where([])}: a config file holds a mapping")
        objects[path.name[: -len(".yml")]] = doc.data
    return objects


def write_directory(directory: Path, objects: dict[str, Any]) -> dict[str, list[str]]:
    """Make ``directory`` hold exactly ``objects``; each file is written new-then-rename."""
    directory.mkdir(parents=True, exist_ok=True)
    existing = {p.name[: -len(".yml")]: p for p in directory.glob("*.yml")}
    written: list[str] = []
    for name, data in sorted(objects.items()):
        text = yamlio.dumps(data)
        path = directory / f"{safe_name(name, 'config name')}.yml"
        if name in existing and path.read_text(encoding="utf-8") == text:
            continue
        atomic_write_text(path, text)
        written.append(name)
    removed = sorted(set(existing) - set(objects))
    for name in removed:
        existing[name].unlink()
    return {"written": written, "removed": removed}
