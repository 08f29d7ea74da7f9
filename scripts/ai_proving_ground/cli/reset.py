"""``apg reset [fixture...]``: restore the set's baseline, then check the bed is fit to grade.

Makes the whole bed equal to the snapshot provision recorded (outside the keep-list), restores
the database and the public files, then rebuilds caches. ``--json`` prints what was removed and
restored, warnings and failures on stdout.
Exit codes: 0 restored and fit to grade (APG_RESET_REMOVED and APG_RESET_REPAIRED say what it
removed or repaired; warnings such as APG_RESET_CODE_DRIFT may appear); 1 refused or not fit to
grade (APG_RESET_NO_BASELINE, APG_RESET_SNAPSHOT_CHANGED, APG_BED_PATH_UNSAFE,
APG_RESET_FILES_CHANGED, APG_RESET_FILES_UNSAFE, APG_RESET_GRADER_DRIFT,
APG_RESET_PENDING_UPDATES, APG_LOCK_BUSY); 2 usage, or no site at the app root (APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

from collections.abc import Sequence

from ai_proving_ground.baselines.reset import reset
from ai_proving_ground.cli._fixture_command import run_set_action


def main(argv: Sequence[str] | None = None) -> int:
    return run_set_action("apg reset", __doc__, argv, "print the outcome as JSON", reset,
                          lambda outcome: 1 if outcome.failures else 0)
