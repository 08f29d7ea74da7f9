"""The credential preflight: does the bed's DDEV config share host credentials with its containers?

Run before any adapter whose credentials are not ``none``. It reads, under ``<approot>/.ddev/``:
``config*.yaml``, ``.env`` and ``.env.*`` (not ``.env.example``), ``docker-compose*.yaml``
(``.yml`` too) and the env files a compose service names. A finding is one of these kinds:

``home_path``            a volume or file source in a home directory (``~``, ``$HOME``, ``${HOME}``,
                         ``/home/...``, ``/root/...``, ``/Users/...``)
``outside_project``      any other host path outside the app root
``unresolved_variable``  a source with a variable expansion not known to resolve inside the project
                         (only ``DDEV_APPROOT`` and ``DDEV_DOCROOT`` are)
``docker_socket``        a host Docker (or Podman) socket mount
``credential_env``       a credential-shaped environment name (``*_API_KEY``, ``*TOKEN*``,
                         ``*SECRET*``, ``*PASSWORD*``, ``ANTHROPIC_*``, ``OPENAI_*``, ``AWS_*``,
                         ``CLAUDE_*``, ...) in web_environment, a compose environment or an env file,
                         or a value that expands one
``unreadable``           a file that cannot be read or parsed: the preflight fails closed

Findings carry a name (a variable name or the source path as written), the file relative to
the app root, and a line; never a value. YAML is parsed with ``yaml.safe_load``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground.ddev_compose import Mount, looks_like_path, mounts
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.tasks.adapters import needs_credentials
from ai_proving_ground.yamlio import PathPart, YamlDocument

ALLOW_VARIABLE = "AI_PG_ALLOW_HOST_CREDS"
# Only these expand to somewhere we can place: DDEV sets them to the project and its docroot.
KNOWN_INSIDE = ("DDEV_APPROOT", "DDEV_DOCROOT")
CREDENTIAL_MARKERS = ("API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                      "PRIVATE_KEY", "ACCESS_KEY")
CREDENTIAL_PREFIXES = ("ANTHROPIC_", "OPENAI_", "AWS_", "CLAUDE_", "CODEX_")
HOME_PREFIXES = ("/home/", "/root/", "/Users/")
SOCKET_NAMES = ("docker.sock", "podman.sock")
VARIABLE = re.compile(r"\$(?:\{([^}]*)\}?|([A-Za-z_][A-Za-z0-9_]*)|(\$))")


@dataclass(frozen=True)
class Finding:
    """One way the bed shares host credentials: a name and where it is, never a value."""

    name: str
    source: str
    line: int | None
    kind: str

    def as_record(self) -> dict[str, object]:
        return {"name": self.name, "source": self.source, "line": self.line, "kind": self.kind}

    def describe(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{self.name} ({self.kind}) in {where}"


@dataclass(frozen=True)
class Preflight:
    """The preflight's verdict for one adapter."""

    checked: bool
    credentials: str
    findings: tuple[Finding, ...] = ()
    refused: bool = False
    overridden: bool = False
    reason: str = ""

    def as_record(self) -> dict[str, object]:
        return {"checked": self.checked, "credentials": self.credentials,
                "findings": [f.as_record() for f in self.findings], "refused": self.refused,
                "overridden": self.overridden}


def preflight(approot: Path, credentials: str, allow_override: bool) -> Preflight:
    """Refuse a credential-needing adapter on any finding, and host-shared ones always."""
    if not needs_credentials(credentials):
        return Preflight(checked=False, credentials=credentials)
    findings = tuple(inspect_bed(approot))
    reasons = []
    if credentials == "host-shared":
        reasons.append("the adapter declares it needs the host's own credentials (host-shared)")
    if findings:
        reasons.append(f"the bed's DDEV config shares host credentials: "
                       f"{'; '.join(f.describe() for f in findings)}")
    blocked = bool(reasons)
    return Preflight(checked=True, credentials=credentials, findings=findings,
                     refused=blocked and not allow_override, overridden=blocked and allow_override,
                     reason="; and ".join(reasons))


def credential_shaped(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(CREDENTIAL_PREFIXES) or any(m in upper for m in CREDENTIAL_MARKERS)


# ---------------------------------------------------------------------------- the files


@dataclass
class _Scan:
    """One inspection of a bed's .ddev/ directory."""

    approot: Path
    findings: list[Finding] = field(default_factory=list)
    seen_env_files: set[Path] = field(default_factory=set)
    docroot: str = ""

    @property
    def ddev(self) -> Path:
        return BedLayout(self.approot).ddev

    def rel(self, path: Path) -> str:
        try:
            normal = Path(os.path.normpath(path.absolute()))
            return normal.relative_to(os.path.normpath(self.approot.absolute())).as_posix()
        except ValueError:
            return str(path)

    def add(self, name: str, path: Path, line: int | None, kind: str) -> None:
        self.findings.append(Finding(name=name, source=self.rel(path), line=line, kind=kind))


def inspect_bed(approot: Path) -> list[Finding]:
    """Every finding in the bed's DDEV config, in file order."""
    scan = _Scan(approot=approot)
    if not scan.ddev.is_dir():
        return []
    configs = _files(scan.ddev, ("config*.yaml", "config*.yml"))
    envs = [p for p in _files(scan.ddev, (".env", ".env.*")) if p.name != ".env.example"]
    composes = _files(scan.ddev, ("docker-compose*.yaml", "docker-compose*.yml"))
    for path in configs:
        _scan_config(scan, path)
    for path in envs:
        _scan_env_file(scan, path)
    for path in composes:
        _scan_compose(scan, path)
    return scan.findings


def _files(directory: Path, patterns: Iterable[str]) -> list[Path]:
    found = {p for pattern in patterns for p in directory.glob(pattern) if p.is_file()}
    return sorted(found)


def _load(scan: _Scan, path: Path) -> YamlDocument | None:
    """Parse with safe_load; a file we cannot read is a finding (fail closed), never a pass."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        scan.add(path.name, path, None, "unreadable")
        return None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        # Only the position: a parser message can quote the offending text, which may be a secret.
        mark = exc.problem_mark or exc.context_mark
        scan.add(path.name, path, mark.line + 1 if mark else None, "unreadable")
        return None
    except yaml.YAMLError:
        scan.add(path.name, path, None, "unreadable")
        return None
    return YamlDocument(path=path, data=data, root=root)


def _line(doc: YamlDocument, parts: list[PathPart]) -> int:
    return doc.position(parts)[0]


def _expect_mapping(scan: _Scan, doc: YamlDocument, data: Any) -> dict[str, Any] | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        scan.add(doc.path.name, doc.path, 1, "unreadable")
        return None
    return data


# ---------------------------------------------------------------------------- config*.yaml


def _scan_config(scan: _Scan, path: Path) -> None:
    doc = _load(scan, path)
    data = _expect_mapping(scan, doc, doc.data) if doc else None
    if doc is None or data is None:
        return
    if isinstance(data.get("docroot"), str):
        scan.docroot = data["docroot"]
    entries = data.get("web_environment")
    if entries is None:
        return
    if not isinstance(entries, list):
        scan.add("web_environment", path, _line(doc, ["web_environment"]), "unreadable")
        return
    for index, entry in enumerate(entries):
        name, _, value = str(entry).partition("=")
        _check_env(scan, name.strip(), value, path, _line(doc, ["web_environment", index]))


def _check_env(scan: _Scan, name: str, value: str | None, path: Path, line: int | None) -> None:
    """An environment entry: a credential-shaped name, or a value expanding one."""
    if credential_shaped(name):
        scan.add(name, path, line, "credential_env")
    for var in _variables(value or ""):
        if var != name and credential_shaped(var):
            scan.add(var, path, line, "credential_env")


def _variables(text: str) -> Iterator[str]:
    for match in VARIABLE.finditer(text):
        braced, bare, dollar = match.groups()
        if dollar:
            continue
        yield re.split(r"[:?+\-}]", braced, maxsplit=1)[0] if braced is not None else bare


# ---------------------------------------------------------------------------- .env files


def _scan_env_file(scan: _Scan, path: Path) -> None:
    if path.resolve() in scan.seen_env_files:
        return
    scan.seen_env_files.add(path.resolve())
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        scan.add(path.name, path, None, "unreadable")
        return
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        text = text.removeprefix("export ").strip()
        name, sep, value = text.partition("=")
        if sep:
            _check_env(scan, name.strip(), value, path, number)


# ---------------------------------------------------------------------------- compose files


def _scan_compose(scan: _Scan, path: Path) -> None:
    doc = _load(scan, path)
    data = _expect_mapping(scan, doc, doc.data) if doc else None
    if doc is None or data is None:
        return
    found = list(mounts(data))
    services = data.get("services") or {}
    if isinstance(services, dict):
        for service, spec in services.items():
            if isinstance(spec, dict):
                at: list[PathPart] = ["services", str(service)]
                _check_mounts(scan, doc, [m for m in found if list(m.at[:2]) == at])
                _scan_service(scan, doc, at, spec)
    _check_mounts(scan, doc, [m for m in found if not m.service_volume])
    for section, key in (("secrets", "file"), ("configs", "file")):
        _scan_top_level(scan, doc, data.get(section), section, key)


def _check_mounts(scan: _Scan, doc: YamlDocument, found: list[Mount]) -> None:
    for mount in found:
        _check_source(scan, mount.source, doc.path, _line(doc, list(mount.at)))


def _scan_service(scan: _Scan, doc: YamlDocument, at: list[PathPart], spec: dict[str, Any]) -> None:
    _scan_environment(scan, doc, at, spec.get("environment"))
    for index, env_file in enumerate(_as_list(spec.get("env_file"))):
        raw = env_file.get("path") if isinstance(env_file, dict) else env_file
        if isinstance(raw, str):
            _check_env_file(scan, raw, doc.path, _line(doc, [*at, "env_file", index]))


def _scan_environment(scan: _Scan, doc: YamlDocument, at: list[PathPart], environment: Any) -> None:
    if isinstance(environment, dict):
        for name, value in environment.items():
            _check_env(scan, str(name), None if value is None else str(value), doc.path,
                       _line(doc, [*at, "environment", str(name)]))
    elif isinstance(environment, list):
        for index, entry in enumerate(environment):
            name, _, value = str(entry).partition("=")
            _check_env(scan, name.strip(), value, doc.path,
                       _line(doc, [*at, "environment", index]))


def _scan_top_level(scan: _Scan, doc: YamlDocument, section: Any, name: str, key: str) -> None:
    """Secrets or configs read from host files."""
    if not isinstance(section, dict):
        return
    for item, spec in section.items():
        if not isinstance(spec, dict):
            continue
        raw = spec.get(key)
        if isinstance(raw, str):
            _check_source(scan, raw, doc.path, _line(doc, [name, str(item), key]))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]




def _check_env_file(scan: _Scan, raw: str, compose: Path, line: int) -> None:
    """A compose env_file: its location is a source; inside the project, its names count too."""
    if _check_source(scan, raw, compose, line):
        return
    path = Path(_expand(raw, scan)[0])
    path = path if path.is_absolute() else compose.parent / path
    if path.is_file():
        _scan_env_file(scan, path)


def _check_source(scan: _Scan, raw: str, where: Path, line: int | None) -> bool:
    """Record a finding for a host path that leaves the project; True when one was recorded."""
    kind = classify_source(raw, scan.ddev, scan.approot, scan.docroot)
    if kind:
        scan.add(raw, where, line, kind)
    return kind is not None


def classify_source(raw: str, base: Path, approot: Path, docroot: str = "") -> str | None:
    """The finding kind for a host-side path, or None when it stays inside the project."""
    source = raw.strip()
    if not _is_path(source):
        return None  # a named volume
    if any(name in source for name in SOCKET_NAMES):
        return "docker_socket"
    if source.startswith(("~", "$HOME", "${HOME")):
        return "home_path"
    expanded, unresolved = _expand(source, _Scan(approot=approot, docroot=docroot))
    if unresolved:
        return "unresolved_variable"
    path = Path(expanded)
    resolved = (path if path.is_absolute() else base / path).resolve()
    inside = approot.resolve()
    if is_within(resolved, inside):
        return None
    if f"{resolved}/".startswith(HOME_PREFIXES) or source.startswith(HOME_PREFIXES):
        return "home_path"
    return "outside_project"


def _expand(source: str, scan: _Scan) -> tuple[str, bool]:
    """Substitute the variables known to stay inside the project; report any other."""
    known = {"DDEV_APPROOT": str(scan.approot), "DDEV_DOCROOT": scan.docroot}
    unresolved = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal unresolved
        braced, bare, dollar = match.groups()
        name = bare if braced is None else braced
        if dollar is None and name in known and (braced is None or match.group(0).endswith("}")):
            return known[name]
        unresolved = True  # includes ${VAR:-default}: we cannot know which side DDEV takes
        return match.group(0)

    return VARIABLE.sub(substitute, source), unresolved


def _is_path(source: Any) -> bool:
    return isinstance(source, str) and looks_like_path(source)
