"""The set key: which baseline a fixture set uses, as a content hash of what the set is.

The canonical form is compact JSON with sorted keys: the base recipe's version, the sorted
``name@version`` pins and the format. The same set gives the same key, so it reuses its
baseline; a bumped fixture version gives a new key, so a new baseline.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

# Bump only if the canonical form below changes: it is part of every set key.
SET_KEY_FORMAT = "apg-set-v1"


def canonical_set(base_version: str, pins: Sequence[str]) -> str:
    """The one written form of a fixture set: compact JSON, sorted keys, sorted pins."""
    return json.dumps({"base": str(base_version), "fixtures": sorted(pins),
                       "format": SET_KEY_FORMAT}, sort_keys=True, separators=(",", ":"))


def set_key(base_version: str, pins: Sequence[str]) -> str:
    """The first 16 hex digits of the SHA-256 of the canonical form."""
    return hashlib.sha256(canonical_set(base_version, pins).encode()).hexdigest()[:16]
