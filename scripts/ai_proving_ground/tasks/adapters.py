"""Agent adapters: which executable ``apg run`` hands a task to, and what its header declares.

An adapter is any executable in the bed's ``.ddev/agents/`` or the shipped ``ddev/agents/``;
the bed's copy wins, so a bed can add or shadow adapters. Not on a DDEV bed: its web container
(and so one drush or PHP call of an attempt) can write ``.ddev/agents/``, so a shipped name
always runs the shipped copy there (with its own ``.agent-common.bash``), and a bed copy of a
shipped name that differs from it, which ``ddev add-on get`` never leaves, is refused
(``APG_RUN_AGENT_UNTRUSTED``) rather than run as the next attempt's agent.

Its header is read the way DDEV reads custom-command annotations: lines starting ``## ``, split
at the first ``:``, the value trimmed of spaces and quotes, the last occurrence winning.
Keys (exact spelling):

``## Description: TEXT``
    shown in listings and recorded in run.json.
``## Credentials: none | bed-scoped | host-shared``
    anything else, or no line, reads as ``unknown``, which is treated as needing credentials.
``## Env: NAME1,NAME2``
    host environment variables the adapter may receive; everything else is withheld.
``## Interactive: yes``
    the adapter keeps the caller's stdin (the terminal); others get /dev/null.
``## Reads: /ABS/PATH1,/ABS/PATH2``
    more paths the adapter's sandbox may read (a model cache, a tool's install); absolute.
``## Commands: NAME1,NAME2``
    programs the adapter runs; the sandbox may read each one's install prefix (``X`` for
    ``X/bin/NAME``, found on the adapter's PATH, symlinks followed), e.g. ``node,claude``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.paths import project_dir
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings

DEFAULT_AGENT = "manual"
CREDENTIAL_CLASSES = ("none", "bed-scoped", "host-shared")
UNKNOWN = "unknown"
# Annotations sit at the top of a script; a bounded read keeps a large binary adapter cheap.
HEADER_BYTES = 64 * 1024
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


@dataclass(frozen=True)
class AdapterHeader:
    """What an adapter declares about itself."""

    description: str = ""
    credentials: str = UNKNOWN
    env: tuple[str, ...] = ()
    interactive: bool = False
    reads: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    @property
    def needs_credentials(self) -> bool:
        return needs_credentials(self.credentials)


def needs_credentials(credentials: str) -> bool:
    """Fail closed: only an explicit ``none`` skips the credential preflight."""
    return credentials != "none"


@dataclass(frozen=True)
class Adapter:
    """A resolved adapter: its name, executable and header."""

    name: str
    path: Path
    source: str  # "bed" or "shipped"
    header: AdapterHeader

    def as_record(self) -> dict[str, object]:
        return {"name": self.name, "path": str(self.path), "source": self.source,
                "credentials": self.header.credentials, "description": self.header.description,
                "env": list(self.header.env), "interactive": self.header.interactive,
                "reads": list(self.header.reads), "commands": list(self.header.commands)}


def parse_annotations(text: str) -> dict[str, str]:
    """``## Key: value`` lines, DDEV style; the last occurrence of a key wins."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("## "):
            continue
        key, sep, value = line[3:].partition(":")
        if sep:
            values[key.strip()] = value.strip(" \t\"'")
    return values


def parse_header(text: str, where: str = "adapter") -> AdapterHeader:
    """The declared header; an unrecognised credentials value reads as ``unknown``."""
    values = parse_annotations(text)
    credentials = values.get("Credentials", "")
    return AdapterHeader(
        description=values.get("Description", ""),
        credentials=credentials if credentials in CREDENTIAL_CLASSES else UNKNOWN,
        env=_env_names(values.get("Env", ""), where),
        interactive=values.get("Interactive", "").lower() in {"yes", "true"},
        reads=_listed(values.get("Reads", ""), where, "Reads", os.path.isabs, "absolute paths"),
        commands=_listed(values.get("Commands", ""), where, "Commands",
                         COMMAND_NAME.fullmatch, "command names"),
    )


def _env_names(raw: str, where: str) -> tuple[str, ...]:
    return _listed(raw, where, "Env", ENV_NAME.match, "environment variable names")


def _listed(raw: str, where: str, key: str, valid: Callable[[str], object],
            what: str) -> tuple[str, ...]:
    names = [part.strip() for part in raw.split(",") if part.strip()]
    bad = [name for name in names if not valid(name)]
    if bad:
        # A typo here would silently withhold what the adapter needs; say so instead.
        raise ApgError("APG_RUN_AGENT_INVALID", f"{where}: '## {key}:' lists {', '.join(bad)}, "
                       f"which are not {what} (ONE,TWO)", exit_code=2)
    return tuple(dict.fromkeys(names))


def read_header(path: Path) -> AdapterHeader:
    with path.open("rb") as handle:
        head = handle.read(HEADER_BYTES)
    return parse_header(head.decode("utf-8", errors="replace"), where=str(path))


def selected_name(argument: str | None, settings: Settings = DEFAULT_SETTINGS) -> str:
    """``--agent``, else ``AI_PG_AGENT``, else ``manual``: a real runtime is never a fallback."""
    return argument or settings.agent or DEFAULT_AGENT


def agent_dirs(approot: Path) -> list[tuple[str, Path]]:
    """Where adapters are looked up, in order."""
    return [("bed", BedLayout(approot).ddev / "agents"), ("shipped", project_dir("ddev") / "agents")]


def available(approot: Path) -> list[str]:
    """Names of every executable adapter either directory holds."""
    names: set[str] = set()
    for _, directory in agent_dirs(approot):
        if directory.is_dir():
            names.update(p.name for p in directory.iterdir()
                         if not p.name.startswith(".") and p.is_file() and os.access(p, os.X_OK))
    return sorted(names)


def _trusted_on_ddev(name: str, approot: Path) -> Adapter | None:
    """On a DDEV bed, the shipped adapter of ``name`` (see the module doc), else None."""
    shipped = project_dir("ddev") / "agents" / name
    if not is_ddev_project(approot) or not shipped.is_file():
        return None
    bed_copy = BedLayout(approot).ddev / "agents" / name
    if os.path.lexists(bed_copy) and (not bed_copy.is_file() or bed_copy.is_symlink()
                                      or bed_copy.read_bytes() != shipped.read_bytes()):
        raise ApgError("APG_RUN_AGENT_UNTRUSTED", f"{bed_copy} differs from the shipped adapter "
                       f"{name!r} ({shipped}): on a DDEV bed an attempt can rewrite .ddev/agents/, "
                       "so it is not run; reinstall the add-on (ddev add-on get <ddev folder>) or "
                       "give your own adapter a name of its own", exit_code=2)
    return Adapter(name=name, path=shipped, source="shipped", header=read_header(shipped))


def find_adapter(name: str, approot: Path) -> Adapter:
    """The bed's adapter of that name, else the shipped one (on a DDEV bed: the shipped one)."""
    safe_name(name, "agent")
    trusted = _trusted_on_ddev(name, approot)
    if trusted is not None:
        return trusted
    for source, directory in agent_dirs(approot):
        candidate = directory / name
        if not candidate.is_file():
            continue
        if not os.access(candidate, os.X_OK):
            # Falling through to a shipped adapter of the same name would run something other
            # than what the bed meant; stop and say how to fix it.
            raise ApgError("APG_RUN_AGENT_NOT_EXECUTABLE", f"adapter {name!r} at {candidate} is "
                           f"not executable; chmod +x {candidate}", exit_code=2)
        return Adapter(name=name, path=candidate.absolute(), source=source,
                       header=read_header(candidate))
    where = " then ".join(str(d) for _, d in agent_dirs(approot))
    listing = ", ".join(available(approot)) or "none"
    raise ApgError("APG_RUN_AGENT_UNKNOWN", f"no adapter {name!r} (looked in {where}); "
                   f"available: {listing}", exit_code=2)
