"""Power of a paired comparison of two configurations on the same tasks.

The model behind :func:`~accordkit.stats.noise.noise_floor` (its ``mdd``) and
:func:`~accordkit.stats.planning.plan_trials`:

* **binary metric (beta-binomial).** Task ``i`` has success probability ``p_i ~ Beta(a, b)``
  for the current configuration, with mean ``mu`` and intraclass correlation
  ``rho = 1 / (a + b + 1)`` (``a = mu (1 / rho - 1)``, ``b = (1 - mu) (1 / rho - 1)``). The
  other configuration moves every task by the same amount on the logit scale,
  ``q_i = expit(logit(p_i) + shift)``, with ``shift`` chosen so that ``E[q] - E[p]`` is the
  effect. Tasks near 0 or 1 move less than tasks in the middle, so the per-task difference
  ``d_i`` varies between tasks: more tasks reduce that variance, more trials only the
  trial-to-trial part. With ``m`` trials per task and configuration,
  ``Var(d_i) = Var(q - p) + E[p (1 - p) + q (1 - q)] / m``.
* **other metrics (normal theory).** The two configurations differ by a constant, so only
  trial-to-trial noise remains in the paired difference: ``Var(d_i) = 2 var_within / m``.

The test is the paired t test on the ``k`` per-task differences of the task means; its
power is that of the non-central t with ``k - 1`` degrees of freedom and non-centrality
``effect / sqrt(Var(d_i) / k)``. Expectations over the Beta distribution use a midpoint
rule on ``GRID`` of its quantiles.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

__all__ = ["beta_grid", "logit_shift", "diff_variance", "paired_power", "min_detectable"]

#: number of Beta quantiles the expectations are averaged over
GRID = 4000
#: the smallest intraclass correlation used (0 would make the Beta a point mass)
MIN_RHO = 1e-6


def beta_grid(mu: float, rho: float) -> np.ndarray:
    """Midpoint quantiles of the Beta distribution with mean ``mu`` and ICC ``rho``."""
    rho = min(max(rho, MIN_RHO), 1 - 1e-9)
    scale = 1.0 / rho - 1.0
    a, b = mu * scale, (1.0 - mu) * scale
    # quantiles that round to exactly 0 or 1 would never move under a logit shift
    return np.clip(stats.beta.ppf((np.arange(GRID) + 0.5) / GRID, a, b), 1e-12, 1 - 1e-12)


def logit_shift(p: np.ndarray, effect: float) -> float:
    """The logit shift that moves the mean of ``p`` by ``effect``."""
    target = float(np.mean(p)) + effect
    if not 0.0 < target < 1.0:
        return np.nan
    logit = special.logit(p)

    def gap(s: float) -> float:
        return float(np.mean(special.expit(logit + s))) - target

    # tasks at exactly 0 or 1 (an ICC near 1) never move: some targets are out of reach
    if gap(-50.0) > 0 or gap(50.0) < 0:
        return np.nan
    return float(optimize.brentq(gap, -50.0, 50.0, xtol=1e-12))


def diff_variance(p: np.ndarray, effect: float, trials: float) -> float:
    """``Var(d_i)`` of the paired per-task difference under the beta-binomial model."""
    shift = logit_shift(p, effect)
    if not np.isfinite(shift):
        return np.nan
    q = special.expit(special.logit(p) + shift)
    between = float(np.var(q - p))
    within = float(np.mean(p * (1 - p) + q * (1 - q))) / trials
    return between + within


def paired_power(effect: float, var_d: float, tasks: np.ndarray | int, alpha: float
                 ) -> np.ndarray:
    """Power of the two-sided paired t test on ``tasks`` differences of variance ``var_d``."""
    k = np.asarray(tasks, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = k - 1
        ncp = abs(effect) / np.sqrt(var_d / k)
        crit = stats.t.ppf(1 - alpha / 2, df)
        out = stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)
        # far in the tail scipy's non-central t can return NaN: its normal limit is exact there
        approx = stats.norm.sf(crit - ncp) + stats.norm.cdf(-crit - ncp)
        out = np.where(np.isnan(out), approx, out)
    return np.where(k >= 2, out, np.nan)


def min_detectable(var_of_effect, tasks: int, *, power: float, alpha: float,
                   upper: float) -> float:
    """The smallest effect in ``(0, upper)`` whose paired power reaches ``power``.

    ``var_of_effect(effect)`` gives ``Var(d_i)`` for an effect; NaN when even ``upper`` is
    not enough (e.g. the ceiling of a success rate is too close).
    """
    if tasks < 2 or not upper > 0:
        return np.nan

    def gap(effect: float) -> float:
        return float(paired_power(effect, var_of_effect(effect), tasks, alpha)) - power

    hi = upper * (1 - 1e-6)
    g_hi = gap(hi)
    if not np.isfinite(g_hi) or g_hi < 0:
        return np.nan
    return float(optimize.brentq(gap, 1e-9 * upper, hi, xtol=1e-7))
