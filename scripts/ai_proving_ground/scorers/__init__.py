"""Behaviour scorers: what the agent did, read from its normalized transcript, beside the state checks."""

from ai_proving_ground.scorers.base import (
    BEHAVIOUR_KINDS,
    BehaviourResult,
    score_behaviour,
)

__all__ = ["BEHAVIOUR_KINDS", "BehaviourResult", "score_behaviour"]
