"""The versions manifest: code identity recorded with a baseline, compared on provision and reset."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import Versions


def as_json(versions: Versions) -> dict[str, Any]:
    return {"format": 1, **dataclasses.asdict(versions)}


def load(path: Path) -> dict[str, Any] | None:
    """The recorded manifest, or None for an older baseline that has none."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ApgError("APG_VERSIONS_UNREADABLE", f"{path} is unreadable ({exc}); recapture the "
                       "baseline to record it again") from None
    if not isinstance(data, dict):
        raise ApgError("APG_VERSIONS_UNREADABLE", f"{path} does not hold a versions manifest; "
                       "recapture the baseline to record it again")
    return data


Difference = tuple[str, str, str]  # subject, recorded, live


def code_differences(recorded: dict[str, Any], live: dict[str, Any]) -> list[Difference]:
    """Differences in code identity; schema versions are for diagnosis and never compared."""
    out: list[Difference] = []
    if recorded.get("core") != live.get("core"):
        out.append(("core", str(recorded.get("core")), str(live.get("core"))))
    for section, describe in (("runtime", str), ("modules", _describe)):
        old, new = recorded.get(section, {}), live.get(section, {})
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                out.append((f"{section}.{name}", describe(old.get(name)), describe(new.get(name))))
    return out


def describe_differences(differences: list[Difference]) -> str:
    return "; ".join(f"{s}: recorded {r}, live {v}" for s, r, v in differences)


def _describe(identity: Any) -> str:
    if not isinstance(identity, dict):
        return "absent"
    parts = [str(identity.get("package") or "?"), str(identity.get("version") or "unknown")]
    if identity.get("source_reference"):
        parts.append(str(identity["source_reference"]))
    return " ".join(parts)
