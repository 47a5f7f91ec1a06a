"""Confidence intervals from a bootstrap distribution: percentile, basic, BCa and t.

The formulas follow scipy's ``_resampling.py`` (Efron & Tibshirani 1993, ch. 14 and
15.4) so that, fed the same resamples, the intervals agree with
:func:`scipy.stats.bootstrap`. They are re-implemented here because scipy computes the
jackknife by re-evaluating the statistic on the data, while a cluster bootstrap needs a
leave-one-*cluster*-out jackknife, which the estimators give in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = ["Interval", "confidence_interval", "quantile_linear", "bca_levels", "robust_se"]


@dataclass(frozen=True)
class Interval:
    """An interval and the method that actually produced it."""

    low: float
    high: float
    method: str
    #: why the requested method was not used ("bca-undefined"), or why it is NaN
    note: str | None = None


def quantile_linear(sorted_valid: np.ndarray, p: float) -> float:
    """Quantile ``p`` of sorted values, Hyndman & Fan type 7 (scipy's "linear").

    Written in the same arithmetic as ``scipy.stats.quantile(method="linear")`` so the
    two agree to the last bit. Values may be infinite (a Kaplan–Meier median not reached
    is ``+inf``): a quantile that falls on an infinite value, or between it and a finite
    one, is that infinity.

    >>> quantile_linear(np.array([1.0, 2.0, np.inf]), 0.5), quantile_linear(
    ...     np.array([1.0, 2.0, np.inf]), 0.75)
    (2.0, inf)
    """
    n = len(sorted_valid)
    if n == 0 or not np.isfinite(p):
        return np.nan
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    if j < 0:
        g = 0.0
    j = int(np.clip(j, 0, n - 1))
    jp1 = int(np.clip(jp1, 0, n - 1))
    lo, hi = sorted_valid[j], sorted_valid[jp1]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        # 0 * inf is NaN: take the end the quantile lies on, or the infinite one between
        return float(lo if g == 0 or np.isinf(lo) else hi)
    return float((1 - g) * lo + g * hi)


#: Values within this relative distance of each other are ties: a bootstrap value that
#: equals the estimate in exact arithmetic can come out a unit in the last place above or
#: below it, by the order its sums were added in.
TIE_RTOL = 1e-12


def _percentile_of_score(theta_b: np.ndarray, theta_hat: float) -> float:
    """The share of ``theta_b`` below ``theta_hat``, ties (within :data:`TIE_RTOL`) half.

    Exact comparison would let a last-digit difference move a resample equal to the
    estimate from "equal" to "below", shifting BCa's bias correction ``z0`` and, in a
    discrete bootstrap distribution, an interval end by a whole step.
    """
    n = len(theta_b)
    tol = TIE_RTOL * max(1.0, abs(theta_hat))
    return (np.count_nonzero(theta_b < theta_hat - tol)
            + np.count_nonzero(theta_b <= theta_hat + tol)) / (2 * n)


def bca_levels(
    theta_hat: float,
    theta_b: np.ndarray,
    jackknifes: list[np.ndarray],
    alpha: float,
) -> tuple[float, float]:
    """The BCa percentile levels ``(alpha_1, alpha_2)``; NaN when BCa is undefined.

    ``jackknifes`` holds one array of leave-one-cluster-out values per independent
    sample (two for an unpaired difference), as in scipy's multi-sample BCa.
    """
    z0 = special.ndtri(_percentile_of_score(theta_b, theta_hat))
    nums, dens = 0.0, 0.0
    for jack in jackknifes:
        n = float(len(jack))
        if n < 2 or not np.all(np.isfinite(jack)):
            return np.nan, np.nan
        u = (n - 1) * (jack.mean() - jack)
        nums += np.sum(u**3) / n**3
        dens += np.sum(u**2) / n**2
    if dens == 0 or not np.isfinite(z0):
        return np.nan, np.nan
    a_hat = nums / dens**1.5 / 6
    z_alpha = float(special.ndtri(alpha))
    num1 = z0 + z_alpha
    num2 = z0 - z_alpha
    alpha_1 = special.ndtr(z0 + num1 / (1 - a_hat * num1))
    alpha_2 = special.ndtr(z0 + num2 / (1 - a_hat * num2))
    return float(alpha_1), float(alpha_2)


def confidence_interval(
    theta_hat: float,
    theta_b: np.ndarray,
    *,
    method: str,
    confidence: float,
    jackknifes: list[np.ndarray],
    t_se: float | None,
    t_df: float,
) -> Interval:
    """Two-sided interval of ``theta_hat`` from its bootstrap distribution ``theta_b``.

    Resamples where the statistic is undefined (NaN: an empty denominator) are left out;
    infinite ones (a Kaplan–Meier median not reached: ``+inf``) are kept, so an interval
    end can be infinite (open). An estimate of ``+inf`` gets the percentile interval
    (another method falls back to it, with the note ``"bca-undefined"``; ``"t"`` has
    none).
    ``method="t"`` uses ``t_se`` when given (the analytic cluster-robust standard
    error) and otherwise the standard deviation of ``theta_b``, with ``t_df`` degrees of
    freedom. BCa falls back to the percentile interval when its levels are undefined.
    """
    alpha = (1 - confidence) / 2
    if np.isposinf(theta_hat) and method != "t":
        # a Kaplan–Meier median not reached: only the percentile interval needs no finite
        # estimate (it is then open above, its lower end still says something)
        if method != "percentile":
            interval = confidence_interval(theta_hat, theta_b, method="percentile",
                                           confidence=confidence, jackknifes=[],
                                           t_se=None, t_df=t_df)
            return Interval(interval.low, interval.high, "percentile", "bca-undefined")
        method = "percentile"
    elif not np.isfinite(theta_hat):
        return Interval(np.nan, np.nan, method, "estimate-undefined")
    valid = np.sort(theta_b[~np.isnan(theta_b)])
    if method == "t":
        if t_se is None and not np.isfinite(valid).all():
            # a standard deviation of resamples, some of them infinite: no interval
            return Interval(np.nan, np.nan, method, "unbounded-resamples")
        se = t_se if t_se is not None else (np.std(valid, ddof=1) if len(valid) > 1 else np.nan)
        if not (t_df >= 1 and np.isfinite(se)):
            return Interval(np.nan, np.nan, method, "too-few-clusters")
        half = stats.t.ppf(1 - alpha, t_df) * se
        return Interval(theta_hat - half, theta_hat + half, method)
    if len(valid) == 0:
        return Interval(np.nan, np.nan, method, "no-valid-resamples")
    note = None
    levels = (alpha, 1 - alpha)
    used = method
    if method == "bca":
        levels = bca_levels(theta_hat, valid, jackknifes, alpha)
        if not all(np.isfinite(levels)):
            levels, used, note = (alpha, 1 - alpha), "percentile", "bca-undefined"
    low, high = (quantile_linear(valid, p) for p in levels)
    if method == "basic":
        low, high = 2 * theta_hat - high, 2 * theta_hat - low
    return Interval(low, high, used, note)


def robust_se(influence: np.ndarray, strata: np.ndarray | None = None) -> tuple[float, float]:
    """Cluster-robust (CR1-type) standard error from per-cluster linearisation terms.

    ``var = sum_h n_h / (n_h - 1) * sum_{c in h} (e_c - mean_h e)^2``, with
    ``df = clusters - strata``. A stratum with one cluster adds no variance.
    """
    if strata is None:
        strata = np.zeros(len(influence), dtype=np.intp)
    labels = np.unique(strata)
    var = 0.0
    for h in labels:
        e_h = influence[strata == h]
        if len(e_h) > 1:
            var += len(e_h) / (len(e_h) - 1) * float(np.sum((e_h - e_h.mean()) ** 2))
    return float(np.sqrt(var)), float(len(influence) - len(labels))
