"""Statistics over campaign outcomes: Wilson intervals, pass^k and a paired, case-level bootstrap.

Pure functions of their arguments, standard library only. Outcomes are booleans (``True`` = pass);
attempts that hit an infrastructure error are not outcomes at all and must be left out by the
caller: they are neither passes nor failures.

Formulas
--------
Wilson score interval for ``k`` passes in ``n`` trials, ``p = k / n``, ``z`` the normal quantile
(1.959963984540054 for 95%)::

    centre = (p + z²/(2n)) / (1 + z²/n)
    half   = z / (1 + z²/n) * sqrt(p(1 − p)/n + z²/(4n²))
    (low, high) = (centre − half, centre + half), clamped to [0, 1]

pass^k over cases, each case with its own repeats ``r_c ≥ 1``::

    pass^k = #{cases c : every one of the r_c repeats of c passed} / #{cases with r_c ≥ 1}

Paired effect of a treatment arm B over a baseline arm A, over the ``m`` cases that have at least
one outcome in both arms, ``rate_X(c)`` = passes / outcomes of case c in arm X::

    d_c        = rate_B(c) − rate_A(c)
    difference = (1/m) Σ_c d_c              ("with − without" when A is without and B is with)

Its interval is a percentile bootstrap that resamples *cases* with replacement (repeats of one case
are correlated, so resampling runs would understate the spread): ``R`` times, draw ``m`` of the
``d_c`` with replacement from ``random.Random(seed)`` and take their mean; ``low`` and ``high`` are
the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the ``R`` means, with linear interpolation
between order statistics (position ``q(R − 1)`` in the sorted means, numpy's default).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

Z_95 = 1.959963984540054
"""The two-sided 95% standard normal quantile."""

K = TypeVar("K", bound=Hashable)


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for ``k`` passes out of ``n`` (see the module docstring).

    ``n == 0`` carries no information: the interval is the whole of ``(0.0, 1.0)``. ``k == 0``
    gives a low of exactly 0.0 and ``k == n`` a high of exactly 1.0. Raises ``ValueError`` unless
    ``0 <= k <= n`` and ``z > 0``.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_interval needs 0 <= k <= n, got k={k}, n={n}")
    if not z > 0:
        raise ValueError(f"wilson_interval needs z > 0, got {z}")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


def pass_hat_k(outcomes_by_case: Mapping[K, Sequence[bool]]) -> float:
    """pass^k: the share of cases whose every repeat passed (k = that case's own repeat count).

    A case with no outcomes (all its attempts were infrastructure errors, or none ran) is left out
    of both numerator and denominator. A case with fewer outcomes than the others still counts,
    over the repeats it has. Raises ``ValueError`` when no case has an outcome: the value is then
    undefined, not 0.
    """
    decided = [outcomes for outcomes in outcomes_by_case.values() if len(outcomes) > 0]
    if not decided:
        raise ValueError("pass^k is undefined: no case has a valid outcome")
    return sum(1 for outcomes in decided if all(outcomes)) / len(decided)


@dataclass(frozen=True)
class Effect:
    """The paired difference in pass rate, treatment minus baseline, with its bootstrap interval.

    ``difference`` = mean over the shared cases of (treatment case rate − baseline case rate);
    ``baseline_rate`` and ``treatment_rate`` are the two means it is the difference of; ``low`` and
    ``high`` bound the ``level`` percentile interval from ``resamples`` case-level resamples drawn
    with ``random.Random(seed)``; ``cases`` is the number of shared cases.
    """

    difference: float
    low: float
    high: float
    cases: int
    resamples: int
    seed: int
    level: float
    baseline_rate: float
    treatment_rate: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rate(outcomes: Sequence[bool]) -> float:
    return sum(1 for passed in outcomes if passed) / len(outcomes)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics at position ``q * (len - 1)``."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    if fraction == 0.0 or ordered[below] == ordered[above]:
        return ordered[below]
    return ordered[below] + (ordered[above] - ordered[below]) * fraction


def paired_effect(
    a: Mapping[K, Sequence[bool]],
    b: Mapping[K, Sequence[bool]],
    seed: int,
    resamples: int = 10000,
    level: float = 0.95,
) -> Effect:
    """The paired effect of arm ``b`` (treatment) over arm ``a`` (baseline): rate(b) − rate(a).

    Only cases with at least one outcome in *both* arms count. Cases are taken in a fixed order
    (sorted by ``repr``), so the result depends on the outcomes and the seed only, not on the order
    of the mappings. Raises ``ValueError`` when no case is shared, or when ``resamples < 1`` or
    ``level`` is not strictly between 0 and 1.
    """
    if resamples < 1:
        raise ValueError(f"paired_effect needs resamples >= 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"paired_effect needs 0 < level < 1, got {level}")
    shared = sorted((case for case in a if len(a[case]) > 0 and case in b and len(b[case]) > 0), key=repr)
    if not shared:
        raise ValueError("the paired effect is undefined: no case has a valid outcome in both arms")
    baseline = [_rate(a[case]) for case in shared]
    treatment = [_rate(b[case]) for case in shared]
    differences = [t - s for s, t in zip(baseline, treatment, strict=True)]
    m = len(differences)

    rng = random.Random(seed)
    means = sorted(sum(rng.choices(differences, k=m)) / m for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    return Effect(
        difference=sum(differences) / m,
        low=_quantile(means, tail),
        high=_quantile(means, 1.0 - tail),
        cases=m,
        resamples=resamples,
        seed=seed,
        level=level,
        baseline_rate=sum(baseline) / m,
        treatment_rate=sum(treatment) / m,
    )
