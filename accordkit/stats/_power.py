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
  trial-to-trial part. With ``m`` trials per task and configuration, ``d_i = (X_i - Y_i) /
  m`` with ``X_i ~ Bin(m, q_i)`` and ``Y_i ~ Bin(m, p_i)``: its distribution is exact on the
  ``2 m + 1`` points ``j / m`` (:func:`diff_distribution`).
* **other metrics (normal theory).** The two configurations differ by a constant, so only
  trial-to-trial noise remains in the paired difference: ``Var(d_i) = 2 var_within / m``.

The test is the two-sided paired t test on the ``k`` per-task differences. For other
metrics its power is that of the non-central t with ``k - 1`` degrees of freedom and
non-centrality ``effect / sqrt(Var(d_i) / k)`` (:func:`paired_power`). For a binary metric
that normal theory is wrong by up to 14 points at the power it is asked for (measured
against Monte Carlo: ICC 0.8, 50 tasks): the ``d_i`` are skewed and lumpy (many tasks
near 0 or 1 never move), so the t statistic is far from a non-central t; its mean and
variance are right, its shape is not. :func:`binary_power` therefore computes the t test's
power from the exact distribution of ``d_i`` by simulation with common random numbers:

* up to :data:`EXACT_TASKS` tasks, each of ``n_sim`` data sets draws its ``k`` differences
  from that distribution (one uniform per task, inverted through its CDF), and the t test
  is evaluated exactly on the integer sums ``S1 = sum j_i``, ``S2 = sum j_i^2``;
* above, ``(S1, S2)`` is drawn from its bivariate normal limit (means, variances and the
  covariance that carries the skewness, from the exact moments of ``d_i``); from 100 tasks
  on this agrees with the per-task simulation to within half a point.

The draws are fixed by ``seed`` alone (the first ``k`` uniforms of a data set serve ``k``
tasks), not by the effect or the design: power moves with the effect by single data sets
(steps of ``1 / n_sim``), so the minimum detectable difference is a well-defined root
(:func:`min_detectable`). Expectations over the Beta
distribution use a midpoint rule on ``GRID`` of its quantiles.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

__all__ = ["beta_grid", "logit_shift", "diff_variance", "paired_power", "min_detectable",
           "diff_distribution", "t_test_power", "binary_power", "N_SIM", "EXACT_TASKS"]

#: number of Beta quantiles the expectations are averaged over
GRID = 4000
#: the smallest intraclass correlation used (0 would make the Beta a point mass)
MIN_RHO = 1e-6
#: simulated data sets per power (Monte Carlo s.e. 0.3 points at a power of 0.8)
N_SIM = 20_000
#: up to this many tasks the differences are drawn task by task; above, their sums
EXACT_TASKS = 100


@lru_cache(maxsize=64)
def beta_grid(mu: float, rho: float) -> np.ndarray:
    """Midpoint quantiles of the Beta distribution with mean ``mu`` and ICC ``rho`` (read
    only; remembered, as a planner asks for the same ones for every effect and design)."""
    rho = min(max(rho, MIN_RHO), 1 - 1e-9)
    scale = 1.0 / rho - 1.0
    a, b = mu * scale, (1.0 - mu) * scale
    # quantiles that round to exactly 0 or 1 would never move under a logit shift
    grid = np.clip(stats.beta.ppf((np.arange(GRID) + 0.5) / GRID, a, b), 1e-12, 1 - 1e-12)
    grid.flags.writeable = False
    return grid


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


def min_detectable(power_of_effect, *, power: float, upper: float) -> float:
    """The smallest effect in ``(0, upper)`` whose power reaches ``power``.

    ``power_of_effect(effect)`` gives the power of a design for an effect (increasing in
    it). NaN when even ``upper`` is not enough (e.g. the ceiling of a success rate is too
    close, or too few tasks).
    """
    if not upper > 0:
        return np.nan

    def gap(effect: float) -> float:
        return float(power_of_effect(effect)) - power

    hi = upper * (1 - 1e-6)
    g_hi = gap(hi)
    if not np.isfinite(g_hi) or g_hi < 0:
        return np.nan
    return float(optimize.brentq(gap, 1e-9 * upper, hi, xtol=1e-7))


def diff_distribution(p: np.ndarray, effect: float, trials: int) -> np.ndarray:
    """The distribution of ``X - Y`` (``X ~ Bin(m, q)``, ``Y ~ Bin(m, p)``) averaged over the
    Beta quantiles ``p``, on ``j = -m .. m``: an array of ``2 m + 1`` probabilities (NaN
    when the effect is out of reach).

    >>> pmf = diff_distribution(np.array([0.5]), 0.0, 1)  # one coin each: -1, 0, 1
    >>> pmf.round(3).tolist()
    [0.25, 0.5, 0.25]
    """
    m = int(trials)
    shift = logit_shift(p, effect)
    if not np.isfinite(shift):
        return np.full(2 * m + 1, np.nan)
    q = special.expit(special.logit(p) + shift)
    j = np.arange(m + 1)
    log_choose = special.gammaln(m + 1) - special.gammaln(j + 1) - special.gammaln(m - j + 1)

    def pmf(prob: np.ndarray) -> np.ndarray:   # (grid x m + 1) binomial probabilities
        prob = prob[:, None]
        return np.exp(log_choose + special.xlogy(j, prob) + special.xlog1py(m - j, -prob))

    joint = pmf(q).T @ pmf(p) / len(p)            # P(X = x, Y = y), averaged over tasks
    out = np.zeros(2 * m + 1)
    np.add.at(out, (j[:, None] - j[None, :] + m).ravel(), joint.ravel())
    return out / out.sum()


@lru_cache(maxsize=2)
def _draws(seed: int, n_sim: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The common random numbers of every power: per simulated data set, one uniform per
    task (the first ``k`` serve ``k`` tasks) and two standard normals (for the sums)."""
    rng = np.random.default_rng([int(seed), 0x7057])
    uniforms = rng.random((n_sim, width))
    normals = rng.standard_normal((n_sim, 2))
    for array in (uniforms, normals):
        array.flags.writeable = False
    return uniforms, normals


@lru_cache(maxsize=2)
def _ranks(seed: int, n_sim: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The uniforms of :func:`_draws` sorted, and each one's place among them: inverting a
    CDF at every uniform is then a search of its few steps in the sorted uniforms and one
    gather."""
    uniforms = _draws(seed, n_sim, width)[0].ravel()
    order = np.argsort(uniforms, kind="stable")
    place = np.empty(order.size, dtype=np.int64)
    place[order] = np.arange(order.size)
    ranked = uniforms[order]
    for array in (ranked, place):
        array.flags.writeable = False
    return ranked, place


@lru_cache(maxsize=2)
def _task_sums(pmf_bytes: bytes, seed: int, n_sim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated data set, the running sums of ``j`` and ``j**2`` over its first 1, 2,
    ... :data:`EXACT_TASKS` tasks, each task's ``j`` the inverse CDF of ``pmf`` at its
    uniform: the draws of every number of tasks at once (a search over tasks reuses them).
    The sums are whole numbers, so exact."""
    pmf = np.frombuffer(pmf_bytes)
    m = (len(pmf) - 1) // 2
    ranked, place = _ranks(seed, n_sim, EXACT_TASKS)
    # each uniform's j: -m plus how many of the CDF's steps lie below it (the steps found
    # in the sorted uniforms, the values given out in sorted order, gathered back)
    edges = np.searchsorted(ranked, np.cumsum(pmf)[:-1], side="right")
    small = np.int8 if m < 127 else np.int32
    in_order = np.repeat(np.arange(-m, m + 1, dtype=small),
                         np.diff(np.concatenate([[0], edges, [ranked.size]])))
    drawn = in_order[place].reshape(n_sim, EXACT_TASKS)
    # whole numbers well inside int32 (at most EXACT_TASKS x m^2)
    s1 = np.cumsum(drawn, axis=1, dtype=np.int32).astype(np.float64)
    s2 = np.cumsum(np.multiply(drawn, drawn, dtype=np.int32), axis=1,
                   dtype=np.int32).astype(np.float64)
    s1.flags.writeable = s2.flags.writeable = False
    return s1, s2


def t_test_power(pmf: np.ndarray, tasks: int, *, alpha: float, seed: int = 0,
                 n_sim: int = N_SIM) -> float:
    """Power of the two-sided paired t test on ``tasks`` differences ``j`` drawn from ``pmf``
    (on ``j = -m .. m``), by simulation (see the module docstring).

    A data set whose differences are all equal has no t statistic and does not reject.

    >>> pmf = np.array([0.0, 0.0, 1.0])   # every difference +1: no variance, no test
    >>> t_test_power(pmf, 20, alpha=0.05)
    0.0
    """
    k = int(tasks)
    if k < 2 or not np.all(np.isfinite(pmf)):
        return np.nan
    m = (len(pmf) - 1) // 2
    j = np.arange(-m, m + 1, dtype=np.float64)
    crit2 = stats.t.ppf(1 - alpha / 2, k - 1) ** 2
    if k <= EXACT_TASKS:
        s1, s2 = (sums[:, k - 1] for sums in _task_sums(pmf.tobytes(), seed, n_sim))
    else:
        m1, m2 = pmf @ j, pmf @ j**2
        cov12, var2 = pmf @ j**3 - m1 * m2, pmf @ j**4 - m2 * m2
        var1 = m2 - m1 * m1
        if var1 <= 0:
            return 0.0
        z = _draws(seed, n_sim, EXACT_TASKS)[1]
        root = np.sqrt(k)
        s1 = k * m1 + root * np.sqrt(var1) * z[:, 0]
        cond = max(var2 - cov12 * cov12 / var1, 0.0)
        s2 = k * m2 + root * (cov12 / np.sqrt(var1) * z[:, 0] + np.sqrt(cond) * z[:, 1])
    # |t| > c  <=>  S1^2 (k - 1) > c^2 (k S2 - S1^2), with k S2 - S1^2 > 0 (some spread)
    spread = k * s2 - s1 * s1
    reject = (spread > 0) & (s1 * s1 * (k - 1) > crit2 * spread)
    return float(np.count_nonzero(reject) / n_sim)


def binary_power(p: np.ndarray, effect: float, trials: float, tasks: int, *, alpha: float,
                 seed: int = 0, n_sim: int = N_SIM) -> float:
    """Power of the paired t test for a binary metric under the beta-binomial model.

    ``p`` are the Beta quantiles (:func:`beta_grid`). A non-integer number of trials (the
    harmonic mean of an unbalanced design) interpolates linearly between its two
    neighbouring whole numbers.
    """
    lo = int(np.floor(trials))
    frac = float(trials) - lo
    lo = max(lo, 1)
    power_lo = t_test_power(diff_distribution(p, effect, lo), tasks, alpha=alpha, seed=seed,
                            n_sim=n_sim)
    if frac < 1e-12:
        return power_lo
    power_hi = t_test_power(diff_distribution(p, effect, lo + 1), tasks, alpha=alpha,
                            seed=seed, n_sim=n_sim)
    return (1 - frac) * power_lo + frac * power_hi
