"""``commands``: a regular expression searched in every shell command the agent ran."""

from __future__ import annotations

import re
from typing import Any

from ai_proving_ground.scorers.base import Context, Observation
from ai_proving_ground.transcripts.record import Transcript


def observe(target: Any, transcript: Transcript, context: Context) -> Observation:
    # The dataset schema checks the pattern compiles (format: regex), so this cannot raise.
    pattern = re.compile(str(target))
    hits = tuple(c.command for c in transcript.commands if pattern.search(c.command))
    return Observation(seen=bool(hits), evidence=hits)
