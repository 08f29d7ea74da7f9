"""Telltale words: keep words that give the evaluation away out of everything the agent sees."""

from ai_proving_ground.telltale.check import (
    DEFAULT_WORDS,
    TELLTALE,
    check_campaign,
    check_dataset,
    refuse,
    telltales,
)

__all__ = ["DEFAULT_WORDS", "TELLTALE", "check_campaign", "check_dataset", "refuse", "telltales"]
