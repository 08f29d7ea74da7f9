"""``apg provision [fixture...]``: apply the base recipe and fixtures, capture the baseline.

A no-op (APG_PROVISION_NOOP) when the set's dump and tag both exist. ``--json`` prints the
summary (set key, fixtures, dump, tag, noop) on stdout.
Exit codes: 0 captured or already present; 1 refused (APG_PROVISION_UNTRACKED,
APG_PROVISION_STALE_BASELINE, APG_PROVISION_DIRTY, APG_FIXTURE_OVERLAP, APG_LOCK_BUSY, a recipe
failure); 2 usage (bad arguments, no site at the app root (APG_SITE_NOT_INSTALLED), unknown or ambiguous
fixture, bad fragment).
"""

from __future__ import annotations

from collections.abc import Sequence

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.cli._fixture_command import run_set_action


def main(argv: Sequence[str] | None = None) -> int:
    return run_set_action("apg provision", __doc__, argv, "print the summary as JSON", provision,
                          lambda outcome: 0)
