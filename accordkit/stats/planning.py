"""``plan_trials``: how many tasks and trials per task a paired comparison needs.

The variance components of each group (:func:`~accordkit.stats.noise.variance_components`)
fit a beta-binomial model of the binary metric: task success probabilities follow a Beta
distribution with the group's mean and intraclass correlation. A second configuration moves
every task by the same logit shift, and the test is the paired t test on per-task
differences (:mod:`accordkit.stats._power`). For each number of trials per task, the
planner finds the fewest tasks that reach the power; designs come out cheapest (fewest
trials in total) first. The power is that of the t test on the exact distribution of the
per-task differences, by simulation: the non-central t of normal theory was up to 14 points
off for tasks near 0 or 1 (:mod:`accordkit.stats._power`).

Only binary metrics are planned: for a continuous metric the variance of the paired
difference depends on how the effect varies between tasks, which a single configuration's
scores cannot tell, so :func:`plan_trials` raises instead of returning a number resting on
a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from . import _power
from ._cells import iter_cells, sorted_codes
from ._validate import _check_by, _check_column, _check_complete, _check_frame
from .noise import _check_level, is_binary, numeric_values, variance_components

__all__ = ["plan_trials", "PLAN_COLUMNS", "design_power"]

#: result columns after the ``by`` columns
PLAN_COLUMNS = ("effect", "n_tasks", "trials_per_task", "total_trials", "power",
                "target_power", "mean", "icc")


def design_power(mean: float, icc: float, effect: float, tasks: int | Sequence[int],
                 trials: float, *, alpha: float = 0.05, seed: int = 0) -> np.ndarray:
    """Power of the paired comparison for a design, under the beta-binomial model.

    The power of the paired t test on the exact distribution of the per-task differences,
    by simulation with common random numbers (:func:`~accordkit.stats._power.binary_power`):
    the same ``seed`` gives the same numbers.

    Examples
    --------
    >>> p = design_power(0.5, 0.3, 0.1, [50, 200], 3)
    >>> bool(p[0] < p[1])
    True
    """
    grid = _power.beta_grid(mean, icc)
    return np.array([_power.binary_power(grid, effect, trials, int(k), alpha=alpha, seed=seed)
                     if k >= 2 else np.nan for k in np.atleast_1d(tasks)])


def _fewest_tasks(mean, icc, effect, trials, power, alpha, max_tasks, seed
                  ) -> tuple[int, float]:
    """The fewest tasks whose power reaches ``power`` (``-1`` when ``max_tasks`` do not).

    A bisection that keeps ``power(lo) < target <= power(hi)``: the answer reaches the
    target and one task fewer does not, also where simulated power is not monotone.
    """
    grid = _power.beta_grid(mean, icc)
    pmf = _power.diff_distribution(grid, effect, trials)
    if not np.all(np.isfinite(pmf)):
        return -1, np.nan
    memo: dict[int, float] = {}

    def reach(k: int) -> float:
        if k not in memo:
            memo[k] = _power.t_test_power(pmf, k, alpha=alpha, seed=seed)
        return memo[k]

    if reach(max_tasks) < power:
        return -1, reach(max_tasks)
    # one task has no test (below the target); few tasks are only tried when the answer
    # is near them (their simulation draws every task)
    lo, hi = 1, max_tasks
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reach(mid) >= power else (mid, hi)
    return hi, reach(hi)


def plan_trials(
    frame: pd.DataFrame,
    *,
    effect: float | Iterable[float],
    metric: str = "success",
    by: str | Sequence[str] | None = None,
    cluster: str = "scenario_id",
    power: float = 0.8,
    alpha: float = 0.05,
    trials: Iterable[int] = range(1, 11),
    max_tasks: int = 100_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The (tasks, trials per task) designs that detect ``effect`` with the given power.

    Parameters
    ----------
    frame : DataFrame
        Tidy scores, one row per trial, with several trials per task (the within-task
        variance cannot be estimated otherwise).
    effect : float or iterable of float
        The difference in success rate to detect (e.g. 0.05 for five points), from each
        group's present rate; positive is an improvement, negative a decline.
    metric : str, default "success"
        A binary column (0/1 or boolean; missing values are left out).
    by : str, list of str, or None
        Grouping columns: each group (configuration) is planned from its own components.
    cluster : str, default "scenario_id"
        The task column.
    power, alpha : float
        Target power and two-sided level of the paired t test.
    trials : iterable of int, default 1..10
        Trials per task to consider.
    max_tasks : int, default 100_000
        Designs needing more tasks than this are left out.
    seed : int, default 0
        Of the simulation behind each power (:func:`design_power`): the same seed, the same
        plan.

    Returns
    -------
    DataFrame
        Per group and effect, one row per number of trials that can reach the power:
        the ``by`` columns, ``effect``, ``n_tasks`` (the fewest that reach it),
        ``trials_per_task``, ``total_trials`` (per configuration), the predicted
        ``power``, ``target_power`` and the fitted ``mean`` and ``icc``; sorted cheapest
        (fewest total trials) first within each group and effect.

    Raises
    ------
    TypeError, ValueError
        The metric is not binary; a group has one task, a single trial per task (no
        within-task variance to fit) or a constant metric; an effect would take the rate
        outside (0, 1).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> p = np.repeat(rng.beta(2, 2, 80), 3)
    >>> frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(80), 3),
    ...                       "success": rng.random(240) < p})
    >>> plan = plan_trials(frame, effect=0.1, trials=[1, 3, 5])
    >>> bool((plan.power >= 0.8).all()), plan.total_trials.is_monotonic_increasing
    (True, True)
    """
    frame = _check_frame(frame)
    metric = _check_column(frame, metric, "metric")
    cluster = _check_column(frame, cluster, "cluster")
    _check_complete(frame, cluster, "cluster")
    by_ = _check_by(frame, by, PLAN_COLUMNS)
    _check_level(power, "power")
    _check_level(alpha, "alpha")
    effects = [effect] if isinstance(effect, int | float) else list(effect)
    for e in effects:
        if isinstance(e, bool) or not isinstance(e, int | float) or not -1 < e < 1 or e == 0:
            raise ValueError(f"`effect` must be a non-zero difference in rate in (-1, 1), "
                             f"got {e!r}")
    trials_ = sorted({int(t) for t in trials})
    if not trials_ or trials_[0] < 1:
        raise ValueError(f"`trials` must hold positive integers, got {list(trials)!r}")
    values = numeric_values(frame, metric)
    if not is_binary(values):
        bad = values[~np.isnan(values) & ~np.isin(values, (0.0, 1.0))]
        raise ValueError(
            f"plan_trials plans binary metrics only (beta-binomial model); column {metric!r} "
            f"has non-binary values such as {float(bad[0])!r}. Threshold it first, e.g. "
            f"frame[{metric!r}] >= 1"
        )
    codes, _ = sorted_codes(frame[cluster])
    rows = []
    for cell in iter_cells(frame, by_):
        v = values[cell.positions]
        keep = ~np.isnan(v)
        label = ", ".join(f"{b}={x!r}" for b, x in zip(by_, cell.values, strict=True)) or "all rows"
        if not keep.any():
            raise ValueError(f"group {label}: no non-missing {metric!r} value")
        vc = variance_components(v[keep], codes[cell.positions][keep])
        if vc.n_tasks < 2 or not np.isfinite(vc.icc):
            raise ValueError(f"group {label}: cannot fit variance components for "
                             f"{metric!r} ({'; '.join(vc.flags)})")
        for e in effects:
            if not 0 < vc.mean + e < 1:
                raise ValueError(f"group {label}: effect {e!r} takes the rate "
                                 f"{vc.mean:.3f} outside (0, 1)")
            for m in trials_:
                k, p = _fewest_tasks(vc.mean, vc.icc, e, m, power, alpha, max_tasks, seed)
                if k < 0:
                    continue
                rows.append({**dict(zip(by_, cell.values, strict=True)), "effect": e,
                             "n_tasks": k, "trials_per_task": m, "total_trials": k * m,
                             "power": p, "target_power": power, "mean": vc.mean,
                             "icc": vc.icc})
    out = pd.DataFrame(rows, columns=[*by_, *PLAN_COLUMNS])
    keys = [*by_, "effect"] if by_ else ["effect"]
    out = out.sort_values([*keys, "total_trials", "trials_per_task"], kind="stable",
                          ignore_index=True)
    out.attrs["provenance"] = {"function": "plan_trials", "metric": metric,
                               "cluster": cluster, "by": list(by_), "power": power,
                               "alpha": alpha, "seed": seed,
                               "model": "beta-binomial, logit shift, paired t test on task "
                               "differences, power by simulation"}
    return out
