"""Modules on disk: ``<name>/<name>.info.yml`` directories, their versions and dependencies."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_proving_ground import __version__
from ai_proving_ground.errors import ApgError

if TYPE_CHECKING:  # yamlio (PyYAML) is imported where an info.yml is read: start-up time
    from ai_proving_ground.yamlio import YamlDocument

CORE_MODULES_DIR = Path(__file__).resolve().parent / "core_modules"
CORE_VERSION = f"11.x-embedded-{__version__}"

# Drupal looks this deep for info files under a modules directory; deeper trees are not scanned.
_MAX_DEPTH = 3
_DEPENDENCY = re.compile(r"^(?:[a-z0-9_]+:)?([a-z][a-z0-9_]*)(?:\s*\(.*\))?$")


@dataclass(frozen=True)
class ModuleInfo:
    """What a module's info.yml declares."""

    name: str
    label: str
    path: Path
    origin: str  # core, contrib or custom
    version: str
    package: str
    dependencies: tuple[str, ...]
    schema_version: int | None
    updates: dict[int, str]
    required: bool


def module_roots(approot: Path) -> list[tuple[str, Path]]:
    """Where modules are searched, in precedence order: custom, contrib, then core."""
    return [
        ("custom", approot / "web" / "modules" / "custom"),
        ("contrib", approot / "web" / "modules" / "contrib"),
        ("core", CORE_MODULES_DIR),
    ]


def discover(approot: Path) -> dict[str, ModuleInfo]:
    """Every module on disk; the first root that holds a name wins."""
    found: dict[str, ModuleInfo] = {}
    for origin, root in module_roots(approot):
        for info_file in _info_files(root):
            name = info_file.name[: -len(".info.yml")]
            if name in found or info_file.parent.name != name:
                continue
            found[name] = parse_info(info_file, origin)
    return found


def _info_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    files: list[Path] = []
    for depth in range(1, _MAX_DEPTH + 1):
        pattern = "/".join(["*"] * depth) + ".info.yml"
        files.extend(p for p in root.glob(pattern) if not p.is_symlink() or p.resolve().is_file())
    return sorted(files)


def parse_info(info_file: Path, origin: str) -> ModuleInfo:
    """Read one info.yml; a malformed one names the file and the key."""
    # Lazy for start-up time: commands that read no module file (config:get) never load PyYAML.
    from ai_proving_ground.yamlio import load_document

    doc = load_document(info_file, token="APG_MODULE_INVALID")
    data = doc.data
    if not isinstance(data, dict):
        raise ApgError("APG_MODULE_INVALID", f"{doc.where([])}: an info.yml must be a mapping")
    name = info_file.name[: -len(".info.yml")]
    version = str(data.get("version") or "unknown")
    if version == "VERSION":
        version = CORE_VERSION
    deps: list[str] = []
    for index, raw in enumerate(data.get("dependencies") or []):
        match = _DEPENDENCY.match(str(raw).strip())
        if match is None:
            raise ApgError(
                "APG_MODULE_INVALID",
                f"{doc.where(['dependencies', index])}: cannot read dependency {raw!r}; "
                "write it as project:module",
            )
        deps.append(match.group(1))
    schema = data.get("schema_version")
    if schema is not None and not isinstance(schema, int):
        raise ApgError("APG_MODULE_INVALID", f"{doc.where(['schema_version'])}: must be an integer")
    updates = _updates(data.get("updates"), doc)
    if updates and schema is None:
        schema = max(updates)
    return ModuleInfo(
        name=name,
        label=str(data.get("name") or name),
        path=info_file.parent,
        origin=origin,
        version=version,
        package=str(data.get("package") or "Other"),
        dependencies=tuple(deps),
        schema_version=schema,
        updates=updates,
        required=bool(data.get("required", False)),
    )


def _updates(raw: Any, doc: YamlDocument) -> dict[int, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, int) for k in raw):
        # Where only when it is said: finding it composes the file's node tree, most of the
        # cost of reading an info.yml (the doctor and reset read every module's, each attempt).
        raise ApgError("APG_MODULE_INVALID", f"{doc.where(['updates'])}: updates must map "
                       "numbers to descriptions")
    return {int(k): str(v) for k, v in raw.items()}


def install_order(requested: list[str], available: dict[str, ModuleInfo],
                  installed: set[str]) -> list[str]:
    """Dependencies first; a module or dependency missing on disk is an error naming both."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str, wanted_by: str | None) -> None:
        if name in installed or name in order:
            return
        if name not in available:
            why = f" (a dependency of {wanted_by})" if wanted_by else ""
            raise ApgError(
                "APG_MODULE_MISSING",
                f"module {name}{why} is not on disk; put it under web/modules/custom/{name}/ "
                f"with a {name}.info.yml, or fix the name",
            )
        if name in visiting:
            raise ApgError("APG_MODULE_INVALID", f"module {name} depends on itself through a cycle")
        visiting.add(name)
        for dep in available[name].dependencies:
            visit(dep, name)
        visiting.discard(name)
        order.append(name)

    for name in requested:
        visit(name, None)
    return order


def pending_updates(info: ModuleInfo, installed_schema: int | None) -> list[tuple[int, str]]:
    """Updates the code has and the database has not run."""
    if info.schema_version is None or installed_schema is None:
        return []
    numbers = range(installed_schema + 1, info.schema_version + 1)
    return [(n, info.updates.get(n, f"{info.name} schema update {n}")) for n in numbers]
