"""Reading DDEV compose volume entries, as the credential preflight and escrow both need."""

from __future__ import annotations

from typing import Any


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
