"""``judge``: one binary criterion about the agent's final reply, graded by a judge model.

The reply is redacted first (the skill's id and any listed jargon replaced by ``[redacted]``,
as whole words), so the judge grades what a person reads, not which skill wrote it. Three
independent votes are asked; a majority of YES passes, of NO fails; a split, or a majority of
UNKNOWN (or of answers that are neither), is ``undecided``: never a pass, and counted apart.

Votes are cached by a content hash of (criterion, redacted reply, judge model) in one JSON file,
so a repeated grade asks nothing; a request that fails raises and caches nothing. A grade may
also hand its judges :class:`Votes`: votes kept from an earlier grade of the same run (a
campaign attempt's, in its attempt.json), served first by the same hash, and the votes every
judge of this grade served or got (``used``), for the caller to keep; a failed vote is in
neither. The judge
model is reached through the ``anthropic`` SDK (the optional ``judge`` extra), at any
Anthropic-compatible endpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_json

VOTES = 3
CACHE_FILE = "judge-cache.json"
REDACTED = "[redacted]"
JUDGE_FAILED = "APG_JUDGE_FAILED"
# A verdict needs only one word; a little room for "YES." or a stray newline.
MAX_TOKENS = 8
SYSTEM = ("You grade one reply an AI coding agent gave a user, against one criterion. Answer with "
          "exactly one word: YES if the reply meets the criterion, NO if it does not, UNKNOWN if "
          "the reply does not let you tell.")
ANSWERS = {"yes": "yes", "no": "no", "unknown": "unknown"}
OUTCOMES = {"yes": "pass", "no": "fail", "unknown": "undecided"}

# One vote: (system, user text) -> the model's raw answer. Raises on any failure.
Ask = Callable[[str, str], str]


@dataclass(frozen=True)
class JudgeResult:
    criterion: str
    verdict: str  # pass, fail or undecided
    votes: tuple[str, ...]  # yes / no / unknown, in the order asked
    cached: bool
    key: str

    def as_json(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "verdict": self.verdict, "votes": list(self.votes),
                "cached": self.cached, "key": self.key}


def redact(reply: str, words: Sequence[str]) -> str:
    """``reply`` with every listed word or phrase (case-insensitive, whole words) redacted."""
    for word in sorted({w for w in words if w.strip()}, key=len, reverse=True):
        reply = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", REDACTED, reply, flags=re.IGNORECASE)
    return reply


def vote_of(answer: str) -> str:
    """yes, no or unknown: the answer's first word; anything else is unknown."""
    first = re.match(r"\W*(\w+)", answer)
    return ANSWERS.get(first.group(1).lower(), "unknown") if first else "unknown"


def majority(votes: Sequence[str]) -> str:
    """pass or fail on a strict majority of yes or no; otherwise undecided."""
    value, count = Counter(votes).most_common(1)[0]
    return OUTCOMES[value] if count * 2 > len(votes) else "undecided"


def cache_key(criterion: str, redacted: str, model: str) -> str:
    canonical = json.dumps([criterion, redacted, model], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class Votes:
    """One grade's judge votes by content hash: ``kept`` from an earlier grade (served before
    the cache), ``used`` what this grade's judges served or were given."""

    kept: Mapping[str, Sequence[str]] = field(default_factory=dict)
    used: dict[str, list[str]] = field(default_factory=dict)

    def served(self, key: str) -> tuple[str, ...] | None:
        votes = self.kept.get(key)
        # Only a whole set of valid votes; anything else is asked again.
        if votes is None or len(votes) != VOTES or not set(votes) <= set(OUTCOMES):
            return None
        return tuple(votes)


class Judge:
    """A judge model and its vote cache (``cache_dir/judge-cache.json``)."""

    def __init__(self, model: str, ask: Ask, cache_dir: Path, votes: Votes | None = None) -> None:
        self.model, self._ask, self.cache_path = model, ask, cache_dir / CACHE_FILE
        self.votes = Votes() if votes is None else votes

    def grade(self, criterion: str, reply: str, redact_words: Sequence[str] = ()) -> JudgeResult:
        result = self._grade(criterion, redact(reply, redact_words))
        self.votes.used[result.key] = list(result.votes)  # a failed vote raised: never kept
        return result

    def _grade(self, criterion: str, redacted: str) -> JudgeResult:
        key = cache_key(criterion, redacted, self.model)
        kept = self.votes.served(key)
        if kept is not None:
            return JudgeResult(criterion, majority(kept), kept, True, key)
        cache = self._load()
        if key in cache:
            votes = tuple(cache[key])
            return JudgeResult(criterion, majority(votes), votes, True, key)
        prompt = f"Criterion: {criterion}\n\nThe agent's reply:\n<reply>\n{redacted}\n</reply>"
        answers = []
        for number in range(VOTES):
            try:
                answers.append(self._ask(SYSTEM, prompt))
            except Exception as exc:  # any SDK or network failure: no verdict, nothing cached
                raise ApgError(JUDGE_FAILED, f"judge model {self.model}: vote {number + 1} of "
                               f"{VOTES} failed: {type(exc).__name__}: {exc}") from None
        votes = tuple(vote_of(a) for a in answers)
        # Re-read before writing, so votes another grade cached meanwhile are kept.
        atomic_write_json(self.cache_path, {**self._load(), key: list(votes)})
        return JudgeResult(criterion, majority(votes), votes, False, key)

    def _load(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.cache_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ApgError(JUDGE_FAILED, f"{self.cache_path}: unreadable judge cache ({exc}); "
                           "delete it to start afresh") from None
        return {k: v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def anthropic_ask(model: str, base_url: str | None, api_key: str | None) -> Ask:
    """One vote through the ``anthropic`` SDK (the ``judge`` extra), at ``base_url`` if given."""
    try:
        # Lazy for start-up time, and optional: only a judge needs the SDK.
        import anthropic
    except ImportError:
        raise ApgError(JUDGE_FAILED, "the judge needs the anthropic SDK: pip install "
                       "'ai-proving-ground[judge]'", exit_code=2) from None
    # No retries of its own: a failed vote is reported, and a retry is the caller's choice.
    client = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0)

    def ask(system: str, text: str) -> str:
        message = client.messages.create(model=model, max_tokens=MAX_TOKENS, system=system,
                                         messages=[{"role": "user", "content": text}])
        return "".join(getattr(block, "text", "") for block in message.content)

    return ask
