"""Multiple-comparison adjustment of p-values, and tie groups built from them."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
from scipy import stats

__all__ = ["adjust_pvalues", "holm", "tie_groups"]


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control).

    scipy has Benjamini-Hochberg (:func:`scipy.stats.false_discovery_control`) but no
    Holm, hence this: sort ascending, multiply the i-th smallest (0-based) by
    ``m - i``, carry the running maximum, cap at 1.

    Examples
    --------
    >>> holm(np.array([0.01, 0.04, 0.03])).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(scaled, 1.0)
    return out


def adjust_pvalues(p: Sequence[float], method: str) -> np.ndarray:
    """Adjust a family of p-values by ``"holm"``, ``"bh"`` or ``"none"``; NaN stays NaN.

    NaN p-values (no interval could be made) are left out of the family.
    """
    p = np.asarray(p, dtype=np.float64)
    out = np.full(len(p), np.nan)
    ok = np.isfinite(p)
    if not ok.any():
        return out
    if method == "holm":
        out[ok] = holm(p[ok])
    elif method == "bh":
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    else:
        out[ok] = p[ok]
    return out


def tie_groups(
    ranked: Sequence[Hashable],
    p_adjusted: Callable[[Hashable, Hashable], float],
    alpha: float,
) -> dict[Hashable, int]:
    """Label groups of models that cannot be told apart from their group's leader.

    ``ranked`` lists the models best first. The best model leads group 1, which also
    takes every model whose adjusted p-value against it is not below ``alpha`` (a NaN
    p-value counts as not significant). The best model not yet placed leads group 2,
    and so on. Groups are therefore disjoint and ordered, but a model in group 2 may be
    indistinguishable from a non-leader of group 1.

    Examples
    --------
    >>> p = {frozenset("ab"): 0.4, frozenset("ac"): 0.01, frozenset("bc"): 0.2}
    >>> tie_groups(["a", "b", "c"], lambda x, y: p[frozenset((x, y))], 0.05)
    {'a': 1, 'b': 1, 'c': 2}
    """
    groups: dict[Hashable, int] = {}
    remaining = list(ranked)
    label = 0
    while remaining:
        label += 1
        leader, rest = remaining[0], []
        groups[leader] = label
        for model in remaining[1:]:
            if p_adjusted(leader, model) < alpha:
                rest.append(model)
            else:
                groups[model] = label
        remaining = rest
    return groups
