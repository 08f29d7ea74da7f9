"""Cohen's kappa: how far a judge agrees with human labels beyond the agreement chance gives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """(p_o - p_e) / (1 - p_e) over paired labels; NaN (undefined, as scikit-learn gives) when
    chance alone explains all agreement (both raters gave one same label throughout).

    A dozen lines by hand rather than scikit-learn (a large install for one formula); the tests
    compare it with ``sklearn.metrics.cohen_kappa_score``.
    """
    if len(first) != len(second) or not first:
        raise ValueError("kappa needs two equally long, non-empty lists of labels")
    total = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / total
    left, right = Counter(first), Counter(second)
    expected = sum(left[label] * right[label] for label in left) / (total * total)
    if expected == 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)
