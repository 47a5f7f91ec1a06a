"""``noise_floor``: how much of a score is task difficulty and how much is trial-to-trial noise.

Per group, the one-way random-effects ANOVA of the metric on the task (cluster) splits the
variance into a between-task and a within-task (trial-to-trial) component by the method of
moments, which handles unbalanced designs (different numbers of trials per task):

* ``MSB = sum_i n_i (ybar_i - ybar)^2 / (k - 1)`` and
  ``MSW = sum_i sum_t (y_it - ybar_i)^2 / (N - k)`` over ``k`` tasks and ``N`` rows;
* ``n0 = (N - sum_i n_i^2 / N) / (k - 1)`` (equal to ``n`` in a balanced design);
* ``var_within = MSW``, ``var_between = max(0, (MSB - MSW) / n0)`` (a negative moment
  estimate is truncated at 0, and the row is flagged), ``icc = var_between / (var_between +
  var_within)``.

``flip_rate`` is the share of tasks with at least two trials whose trials disagree.
``se`` is the cluster-robust (CR1) standard error of the pooled mean, the same one the
``"t"`` interval of :func:`~accordkit.stats.summarize` uses. ``mdd`` is the minimum
detectable difference of a paired comparison with a second configuration on the same
tasks and trials, with the model of :mod:`accordkit.stats._power`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _power
from ._cells import iter_cells, local_clusters, sorted_codes
from ._intervals import robust_se
from ._validate import _check_by, _check_column, _check_complete, _check_frame, metric_values

__all__ = ["noise_floor", "variance_components", "VarianceComponents", "NOISE_COLUMNS",
           "is_binary"]

#: result columns after the ``by`` columns
NOISE_COLUMNS = ("n_tasks", "trials_per_task", "mean", "var_between", "var_within", "icc",
                 "flip_rate", "se", "mdd", "flag")


@dataclass(frozen=True)
class VarianceComponents:
    """The one-way random-effects decomposition of one group (see the module docstring)."""

    n_tasks: int
    n_rows: int
    trials_per_task: float
    trials_harmonic: float
    mean: float
    var_between: float
    var_within: float
    icc: float
    flip_rate: float
    se: float
    flags: tuple[str, ...]


def is_binary(values: np.ndarray) -> bool:
    """Whether every non-NaN value is 0 or 1."""
    v = values[~np.isnan(values)]
    return bool(np.isin(v, (0.0, 1.0)).all())


def variance_components(values: np.ndarray, codes: np.ndarray) -> VarianceComponents:
    """Variance components of ``values`` (no NaN) grouped by task ``codes`` (0..k-1).

    Examples
    --------
    >>> import numpy as np
    >>> vc = variance_components(np.array([1., 1, 0, 0, 1, 0]), np.array([0, 0, 1, 1, 2, 2]))
    >>> vc.var_within, round(vc.var_between, 4), vc.flip_rate
    (0.1666..., 0.1667, 0.333...)
    """
    codes, _ = local_clusters(codes)
    k = int(codes.max()) + 1 if len(codes) else 0
    n_i = np.bincount(codes, minlength=k).astype(float)
    sums = np.bincount(codes, weights=values, minlength=k)
    n = float(n_i.sum())
    mean = float(sums.sum() / n) if n else np.nan
    flags: list[str] = []
    task_mean = sums / n_i
    ss_within = float(np.sum((values - task_mean[codes]) ** 2))
    multi = n_i >= 2
    if k == 1:
        flags.append("one task: no between-task variance, no clustered standard error")
    if not multi.any():
        flags.append("single trial per task: no within-task (trial-to-trial) variance")
        var_within = np.nan
        flip = np.nan
    else:
        var_within = ss_within / (n - k)
        spread = np.bincount(codes, weights=(values - task_mean[codes]) ** 2, minlength=k)
        flip = float(np.mean(spread[multi] > 0))
    if k >= 2 and np.isfinite(var_within):
        msb = float(np.sum(n_i * (task_mean - mean) ** 2)) / (k - 1)
        n0 = (n - float(np.sum(n_i**2)) / n) / (k - 1)
        raw = (msb - var_within) / n0
        if raw < 0:
            flags.append("between-task moment estimate negative: truncated at 0")
        var_between = max(0.0, raw)
    else:
        var_between = np.nan
    total = var_between + var_within
    if np.isfinite(total) and total == 0:
        flags.append("constant metric: no variance, icc undefined")
    icc = var_between / total if np.isfinite(total) and total > 0 else np.nan
    if k >= 2:
        se, _ = robust_se((sums - mean * n_i) / n)
    else:
        se = np.nan
    return VarianceComponents(
        n_tasks=k, n_rows=int(n), trials_per_task=n / k if k else np.nan,
        trials_harmonic=float(k / np.sum(1.0 / n_i)) if k else np.nan, mean=mean,
        var_between=float(var_between), var_within=float(var_within), icc=float(icc),
        flip_rate=flip, se=float(se), flags=tuple(flags),
    )


def _mdd(vc: VarianceComponents, binary: bool, power: float, alpha: float,
         seed: int) -> float:
    if vc.n_tasks < 2 or not np.isfinite(vc.var_within):
        return np.nan
    m = vc.trials_harmonic
    if binary:
        if not np.isfinite(vc.icc):
            return np.nan
        p = _power.beta_grid(vc.mean, vc.icc)
        sign = 1.0 if vc.mean <= 0.5 else -1.0
        upper = 1 - vc.mean if sign > 0 else vc.mean
        return _power.min_detectable(
            lambda e: _power.binary_power(p, sign * e, m, vc.n_tasks, alpha=alpha, seed=seed),
            power=power, upper=upper)
    var_d = 2 * vc.var_within / m
    if var_d == 0:
        return np.nan
    upper = 100 * np.sqrt(var_d) + 1.0
    return _power.min_detectable(
        lambda e: _power.paired_power(e, var_d, vc.n_tasks, alpha), power=power, upper=upper)


def noise_floor(
    frame: pd.DataFrame,
    *,
    metric: str = "success",
    by: str | Sequence[str] | None = None,
    cluster: str = "scenario_id",
    power: float = 0.8,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Variance components, flip rate and minimum detectable difference per group.

    Parameters
    ----------
    frame : DataFrame
        Tidy scores, one row per trial (episode); several rows per task.
    metric : str, default "success"
        A numeric or boolean column. Rows where it is missing are left out (and the
        ``flag`` column counts them).
    by : str, list of str, or None
        Grouping columns, typically the configuration (``"agent_model"``).
    cluster : str, default "scenario_id"
        The task column: trials of one task form one cluster.
    power, alpha : float
        Power and two-sided level of the paired test behind ``mdd``.
    seed : int, default 0
        Of the simulation behind a binary metric's power (as in
        :func:`~accordkit.stats.plan_trials`).

    Returns
    -------
    DataFrame
        The ``by`` columns, then ``n_tasks``, ``trials_per_task`` (rows / tasks; the
        variance components use the ANOVA's ``n0`` for unbalanced designs and ``mdd`` the
        harmonic mean), ``mean`` (pooled over rows, as in ``summarize``), ``var_between``,
        ``var_within``, ``icc``, ``flip_rate``, ``se`` (cluster-robust), ``mdd`` and
        ``flag``: an empty string, or why some values are NaN or truncated (one task; a
        single trial per task, so no within-task variance; a constant metric; the
        ceiling of a rate too close for any detectable difference).

    Notes
    -----
    For a binary metric ``mdd`` is the effect, on the success-rate scale, that a paired t
    test on the per-task differences detects with probability ``power`` when the second
    configuration shifts every task by the same amount on the logit scale (toward 1 when
    the mean is at most 0.5, toward 0 otherwise), with the task probabilities following
    the Beta distribution fitted to ``mean`` and ``icc``; the power is simulated from the
    exact distribution of the per-task differences (:mod:`accordkit.stats._power`). For
    other metrics the second configuration differs by a constant, ``mdd`` reflects the
    trial-to-trial noise only, and the power is the non-central t's.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> p = np.repeat(rng.beta(2, 2, 60), 4)
    >>> frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(60), 4),
    ...                       "success": rng.random(240) < p})
    >>> row = noise_floor(frame).iloc[0]
    >>> int(row.n_tasks), float(row.trials_per_task), bool(0 < row.icc < 1), row.flag
    (60, 4.0, True, '')
    """
    frame = _check_frame(frame)
    metric = _check_column(frame, metric, "metric")
    cluster = _check_column(frame, cluster, "cluster")
    _check_complete(frame, cluster, "cluster")
    by_ = _check_by(frame, by, NOISE_COLUMNS)
    if metric in by_ or cluster in by_:
        raise ValueError("`by` must not contain the `metric` or `cluster` column")
    _check_level(power, "power")
    _check_level(alpha, "alpha")
    values = numeric_values(frame, metric)
    codes, _ = sorted_codes(frame[cluster])
    binary = is_binary(values)
    rows = []
    for cell in iter_cells(frame, by_):
        v = values[cell.positions]
        keep = ~np.isnan(v)
        base = dict(zip(by_, cell.values, strict=True))
        if not keep.any():
            rows.append({**base, "n_tasks": 0, "flag": f"no non-missing {metric!r} value"})
            continue
        vc = variance_components(v[keep], codes[cell.positions][keep])
        flags = list(vc.flags)
        if (~keep).any():
            flags.append(f"{int((~keep).sum())} row(s) with missing {metric!r} left out")
        mdd = _mdd(vc, binary, power, alpha, seed)
        if np.isnan(mdd) and vc.n_tasks >= 2 and np.isfinite(vc.icc):
            flags.append("no detectable difference within the range of the metric")
        rows.append({**base, "n_tasks": vc.n_tasks, "trials_per_task": vc.trials_per_task,
                     "mean": vc.mean, "var_between": vc.var_between,
                     "var_within": vc.var_within, "icc": vc.icc, "flip_rate": vc.flip_rate,
                     "se": vc.se, "mdd": mdd, "flag": "; ".join(flags)})
    out = pd.DataFrame(rows, columns=[*by_, *NOISE_COLUMNS])
    out["n_tasks"] = out["n_tasks"].astype(np.int64)
    out.attrs["provenance"] = {"function": "noise_floor", "metric": metric,
                               "cluster": cluster, "by": list(by_), "power": power,
                               "alpha": alpha, "seed": seed, "binary": binary}
    return out


def numeric_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A numeric or boolean column as float64 (missing as NaN), or a TypeError naming it."""
    dtype = frame[column].dtype
    if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
        raise TypeError(f"metric column {column!r} must be numeric or boolean, got {dtype}")
    values = metric_values(frame, column)
    n_inf = int(np.isinf(values).sum())
    if n_inf:
        raise ValueError(f"metric column {column!r} has {n_inf} infinite value(s)")
    return values


def _check_level(value: object, arg: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ValueError(f"`{arg}` must be a number strictly between 0 and 1, got {value!r}")
