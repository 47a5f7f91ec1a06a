"""Two models of a table cell: their rows, resamples and the tests between them.

:class:`Model` is one value of ``between`` in a cell (its scenarios, rows, estimator and
bootstrap distribution); the functions here compare two of them: the bootstrap or
permutation p-value of their difference and the probability of improvement.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._estimators import MedianEstimator, RatioEstimator, estimator_for
from ._intervals import TIE_RTOL
from ._km import KMMedianEstimator
from ._resample import assignment_chunks, cell_rng, swap_chunks
from ._validate import CompareArgs

__all__ = ["Model", "Estimator", "difference_p_value", "prob_improvement", "snap_ties"]

Estimator = RatioEstimator | MedianEstimator | KMMedianEstimator


@dataclass
class Model:
    """One value of ``between`` within a cell: its rows, scenarios and estimator."""

    name: Hashable
    scenarios: np.ndarray  # global scenario codes, sorted
    scenario_values: tuple  # the scenario ids themselves (for seeds)
    set_id: str
    rows_values: dict[str, np.ndarray]
    local_codes: np.ndarray
    estimator: Estimator
    theta_b: np.ndarray | None = None


def snap_ties(values: np.ndarray) -> np.ndarray:
    """``values`` with each run of neighbours within
    :data:`~accordkit.stats._intervals.TIE_RTOL` of each other (relative, at least 1
    absolute unit) set to its first: a per-scenario mean of the same scores added in
    another order may differ in the last bit."""
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if len(ranked) < 2:
        return values
    gap = np.diff(ranked) > TIE_RTOL * np.maximum(1.0, np.abs(ranked[1:]))
    group = np.concatenate([[0], np.cumsum(gap)])
    out = np.empty_like(values)
    out[order] = ranked[np.flatnonzero(np.concatenate([[True], gap]))][group]
    return out


def prob_improvement(cand: Model, base: Model, paired: bool, args: CompareArgs) -> float:
    vc, vb = cand.estimator.cluster_values(), base.estimator.cluster_values()
    sign = 1.0 if args.metric.higher_is_better else -1.0
    if paired:
        ok = np.isfinite(vc) & np.isfinite(vb)
        if not ok.any():
            return np.nan
        d = sign * (vc[ok] - vb[ok])
        tie = np.abs(d) <= TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(vc[ok]), np.abs(vb[ok])))
        return float(np.mean((d > 0) & ~tie) + 0.5 * np.mean(tie))
    vc, vb = sign * vc[np.isfinite(vc)], sign * vb[np.isfinite(vb)]
    if len(vc) == 0 or len(vb) == 0:
        return np.nan
    # Mann-Whitney: U / (n1 n2) = P(X > Y) + P(X = Y) / 2, from mid-ranks
    ranks = stats.rankdata(snap_ties(np.concatenate([vc, vb])))
    u = ranks[: len(vc)].sum() - len(vc) * (len(vc) + 1) / 2
    return float(u / (len(vc) * len(vb)))


def difference_p_value(cand: Model, base: Model, cell, args: CompareArgs) -> float:
    """Two-sided p-value of ``cand - base`` by bootstrap or permutation."""
    ec, eb = cand.estimator, base.estimator
    delta = ec.estimate - eb.estimate
    if not np.isfinite(delta) or ec.n_clusters < 2 or eb.n_clusters < 2:
        return np.nan
    if args.test == "bootstrap":
        d = cand.theta_b - base.theta_b
        d = d[~np.isnan(d)]  # +-inf (a Kaplan–Meier median not reached) is a side
        if len(d) == 0:
            return np.nan
        # a difference of zero in exact arithmetic may come out a unit in the last place
        # either side of it, by the order its sums were added in: ties count both ways
        tol = TIE_RTOL * max(1.0, abs(delta))
        tail = min(np.count_nonzero(d <= tol), np.count_nonzero(d >= -tol)) + 1
        return float(min(1.0, 2 * tail / (len(d) + 1)))
    return permutation_p(cand, base, delta, cell, args)


def permutation_p(cand: Model, base: Model, delta: float, cell, args: CompareArgs) -> float:
    """Permutation p-value: labels swapped within scenarios (paired) or across them.

    Both models' rows go into one estimator over a doubled cluster space (the
    candidate's clusters, then the baseline's); a permutation is a 0/1 weighting of that
    space, so each permuted statistic is again a matrix product.
    """
    paired = cand.set_id == base.set_id
    nc, nb = len(cand.scenarios), len(base.scenarios)
    rows = {col: np.concatenate([cand.rows_values[col], base.rows_values[col]])
            for col in cand.rows_values}
    codes = np.concatenate([cand.local_codes, base.local_codes + nc])
    joint = estimator_for(args.metric, rows, np.arange(len(codes)), codes, nc + nb)
    rng = cell_rng(args.seed, cell.key + (("__permutation__", (cand.name, base.name)),))
    if paired:
        chunks = (np.hstack([1 - f, f]) for f in swap_chunks(rng, nc, args.n_resamples))
    else:
        chunks = assignment_chunks(rng, nc, nb, args.n_resamples)
    null = np.concatenate([joint.on_counts(w) - joint.on_counts(1 - w) for w in chunks])
    null = null[~np.isnan(null)]
    # relative tolerance so that permutations equal to the observed one up to rounding
    # count as "at least as extreme" (as scipy.stats.permutation_test does)
    tol = TIE_RTOL * max(1.0, abs(delta))
    return float((np.count_nonzero(np.abs(null) >= abs(delta) - tol) + 1) / (len(null) + 1))
