"""What attempts cost in time: per arm, the wall-clock seconds from an attempt's start to its record.

An attempt's ``started_at`` and ``finished_at`` (UTC, milliseconds) span everything the harness
did for it: verify, reset and the doctor, the agent, verify again, the capture, the grade and a
hidden verifier. On DDEV each of those is ``ddev exec`` round trips, so this is what a DDEV bed
costs per attempt against an embedded one. Recomputed from the records, like the rest of the
report; an attempt without both times is left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ai_proving_ground.campaigns.records import AttemptRecord


def seconds(record: AttemptRecord) -> float | None:
    """The attempt's wall-clock seconds, or None when a time is missing or unreadable."""
    if not record.finished_at:
        return None
    try:
        start = datetime.fromisoformat(record.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(record.finished_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def cost_by_arm(records: Iterable[AttemptRecord]) -> dict[str, dict[str, Any]]:
    """arm -> attempts timed, mean, median and total seconds (3 decimals)."""
    spans: dict[str, list[float]] = {}
    for record in records:
        span = seconds(record)
        if span is not None:
            spans.setdefault(record.arm, []).append(span)
    return {arm: {"attempts": len(values), "mean_s": round(statistics.fmean(values), 3),
                  "median_s": round(statistics.median(values), 3),
                  "total_s": round(sum(values), 3)}
            for arm, values in sorted(spans.items())}


def cost_line(cost: dict[str, dict[str, Any]]) -> str:
    """One line for report.txt."""
    shown = "; ".join(f"{arm} {c['mean_s']:.1f} s mean, {c['median_s']:.1f} s median over "
                      f"{c['attempts']}" for arm, c in cost.items())
    return f"Cost per attempt (wall clock): {shown or 'no timed attempts'}"
