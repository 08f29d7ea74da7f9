"""Runbook coverage: every runbook entry a dataset or campaign declares is covered by a task."""

from ai_proving_ground.runbook.coverage import (
    UNCOVERED,
    check_campaign,
    check_dataset,
    refuse,
)

__all__ = ["UNCOVERED", "check_campaign", "check_dataset", "refuse"]
