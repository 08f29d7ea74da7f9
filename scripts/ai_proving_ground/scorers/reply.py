"""``judge``: a criterion about the agent's final reply, graded by the judge model (judge.py).

The entry's ``redact`` words are removed from the reply first. A pass of the judge is "seen";
an undecided vote, no final reply, or no judge model configured (AI_PG_JUDGE_MODEL) is
undecided: neither rule passes on it.
"""

from __future__ import annotations

from typing import Any

from ai_proving_ground.scorers.base import Context, Observation
from ai_proving_ground.transcripts.record import Transcript


def observe(target: Any, transcript: Transcript, context: Context) -> Observation:
    if context.judge is None:
        return Observation(seen=False, undecided=True, evidence=(
            "no judge model configured: set AI_PG_JUDGE_MODEL (and AI_PG_JUDGE_BASE_URL)",))
    if not transcript.final_reply:
        return Observation(seen=False, undecided=True, evidence=("the agent gave no final reply",))
    result = context.judge.grade(str(target), transcript.final_reply,
                                 tuple(context.entry.get("redact") or ()))
    votes = f"votes {', '.join(result.votes)}{' (cached)' if result.cached else ''}"
    return Observation(seen=result.verdict == "pass", undecided=result.verdict == "undecided",
                       evidence=(f"judge {context.judge.model}: {result.verdict}; {votes}",))
