"""Reading DDEV compose files' mounts, as the credential preflight and escrow both need.

`mounts` is the one walk over a compose document's host-side sources: every service's volume
entries and every named volume bound to a host device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mount:
    """One host-side source as written, and where it sits in the compose document."""

    source: str
    at: tuple[str | int, ...]  # ("services", NAME, "volumes", INDEX) or ("volumes", NAME, "driver_opts")

    @property
    def service_volume(self) -> bool:
        return self.at[0] == "services"


def mounts(data: dict[str, Any]) -> Iterator[Mount]:
    """Service volume entries (a lone entry counts as a list of one), then named volumes whose
    ``driver_opts`` bind a host ``device``."""
    services = data.get("services") or {}
    for name, service in (services.items() if isinstance(services, dict) else []):
        volumes = service.get("volumes") if isinstance(service, dict) else None
        entries = [] if volumes is None else volumes if isinstance(volumes, list) else [volumes]
        for index, entry in enumerate(entries):
            source = volume_source(entry)
            if source is not None:
                yield Mount(source, ("services", str(name), "volumes", index))
    named = data.get("volumes")
    for name, spec in (named.items() if isinstance(named, dict) else []):
        options = spec.get("driver_opts") if isinstance(spec, dict) else None
        device = options.get("device") if isinstance(options, dict) else options
        if isinstance(device, str) and device:
            yield Mount(device, ("volumes", str(name), "driver_opts"))


def split_volume(spec: str) -> list[str]:
    """``src:dst[:mode]``, not splitting inside ``${...}`` (``${HOME:-/root}`` has a colon)."""
    parts, current, depth = [], "", 0
    for index, char in enumerate(spec):
        if char == "{" and index and spec[index - 1] == "$":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == ":" and not depth:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def looks_like_path(source: str) -> bool:
    """A host path rather than a named volume (names hold no slash and start with neither)."""
    return source.startswith(("/", ".", "~", "$")) or "/" in source


def volume_source(entry: Any) -> str | None:
    """The host side of a volume entry as written, or None for an anonymous volume.

    Long-syntax bind sources are paths even without ``./``, so they come back with one.
    """
    if isinstance(entry, dict):
        source = entry.get("source", entry.get("src"))
        if not isinstance(source, str) or not source:
            return None
        if entry.get("type") == "bind" and not looks_like_path(source):
            return f"./{source}"
        return source
    if isinstance(entry, str):
        parts = split_volume(entry)
        return parts[0] if len(parts) >= 2 else None
    return None
