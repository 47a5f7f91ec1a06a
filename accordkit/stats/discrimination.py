"""Task discrimination: which tasks tell configurations apart, and which are noise.

Per task and configuration, the success rate over trials. Per task:

* **difficulty** and **discrimination** from a two-parameter logistic (2PL) item-response
  model when there are at least ``min_configs`` configurations: configuration ``j`` has
  ability ``theta_j``, task ``i`` difficulty ``b_i`` and discrimination ``a_i``, and a trial
  succeeds with probability ``expit(a_i (theta_j - b_i))``. The fit maximises the binomial
  likelihood with weak normal priors (``theta ~ N(0, 1)``, ``log a ~ N(0, 1)``,
  ``b ~ N(0, 3^2)``) by L-BFGS (``scipy.optimize.minimize``): the priors fix the scale and
  keep perfectly separated tasks (solved by exactly the stronger configurations) finite.
* with fewer configurations the data are too thin for that fit: difficulty is the failure
  rate ``1 - success`` and discrimination the point-biserial correlation between a trial's
  success and its configuration's overall success rate (NaN when either is constant).

``spread`` is the best minus the worst configuration's success rate on the task; the tasks
that separate the configurations most are those with the largest spread (ties broken by
discrimination).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from ._validate import _check_column, _check_complete, _check_frame
from .noise import is_binary, numeric_values

__all__ = ["task_discrimination", "TaskDiscrimination", "fit_2pl"]

_PRIOR_B = 3.0


@dataclass(frozen=True)
class TaskDiscrimination:
    """The result of :func:`task_discrimination`.

    Attributes
    ----------
    success : DataFrame
        Success rate per task (rows) and configuration (columns); NaN where a
        configuration did not run the task.
    tasks : DataFrame
        One row per task: ``n_configs``, ``n_trials``, ``success_rate``, ``spread``,
        ``difficulty``, ``discrimination``, ``method`` ("2pl" or "point_biserial") and
        ``solved_by`` (configurations whose rate reaches ``threshold``), sorted by
        ``spread`` then ``discrimination``, largest first.
    abilities : Series
        Per configuration: the 2PL ability, or the overall success rate.
    all_solve, none_solve, separating : list
        Tasks every configuration solves (rate >= threshold), none solves (rate <=
        1 - threshold), and the ``top`` tasks with the largest non-zero spread.
    """

    success: pd.DataFrame
    tasks: pd.DataFrame
    abilities: pd.Series
    all_solve: list
    none_solve: list
    separating: list


def fit_2pl(successes: np.ndarray, trials: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """Fit the 2PL model to (tasks x configurations) counts; return ``theta, a, b``.

    Examples
    --------
    >>> s = np.array([[3, 3, 3], [0, 3, 3], [0, 0, 3]])  # tasks x configurations
    >>> theta, a, b = fit_2pl(s, np.full((3, 3), 3))
    >>> bool(theta[0] < theta[1] < theta[2]), bool(b[0] < b[1] < b[2]), bool((a > 0).all())
    (True, True, True)
    """
    s = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    n_tasks, n_configs = s.shape

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta, log_a, b = x[:n_configs], x[n_configs:n_configs + n_tasks], x[-n_tasks:]
        a = np.exp(log_a)
        eta = a[:, None] * (theta[None, :] - b[:, None])
        ll = np.sum(s * eta - n * np.logaddexp(0.0, eta))
        r = s - n * special.expit(eta)
        g_theta = (r * a[:, None]).sum(axis=0) - theta
        g_log_a = (r * eta).sum(axis=1) - log_a
        g_b = -(r * a[:, None]).sum(axis=1) - b / _PRIOR_B**2
        penalty = 0.5 * (theta @ theta + log_a @ log_a + b @ b / _PRIOR_B**2)
        return -(ll - penalty), -np.concatenate([g_theta, g_log_a, g_b])

    x0 = np.zeros(n_configs + 2 * n_tasks)
    res = optimize.minimize(loss, x0, jac=True, method="L-BFGS-B",
                            options={"maxiter": 5000, "gtol": 1e-8})
    x = res.x
    return x[:n_configs], np.exp(x[n_configs:n_configs + n_tasks]), x[-n_tasks:]


def _point_biserial_by_task(y: np.ndarray, x: np.ndarray, codes: np.ndarray,
                            n_tasks: int) -> np.ndarray:
    """The point-biserial correlation of each task's outcomes ``y`` with its configurations'
    abilities ``x``, every task at once (``codes``: each row's task, 0..n-1).

    Centred sums per task by ``bincount``, so a run of tens of thousands of tasks takes
    no Python loop; equal to numpy's ``corrcoef`` task by task within rounding (1e-12, tested).
    NaN where a task has fewer than two rows or a constant outcome or ability.

    >>> y = np.array([1.0, 0, 1, 1]); x = np.array([0.9, 0.2, 0.5, 0.5])
    >>> _point_biserial_by_task(y, x, np.array([0, 0, 1, 1]), 2).round(6).tolist()
    [1.0, nan]
    """
    n = np.bincount(codes, minlength=n_tasks).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        dy = y - (np.bincount(codes, y, n_tasks) / n)[codes]
        dx = x - (np.bincount(codes, x, n_tasks) / n)[codes]
        sxy = np.bincount(codes, dy * dx, n_tasks)
        r = sxy / np.sqrt(np.bincount(codes, dx * dx, n_tasks)
                          * np.bincount(codes, dy * dy, n_tasks))
    # constant within a task, exactly (a mean of equal values need not be that value)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_tasks))
    present = n > 0
    constant = n < 2
    for values in (y, x):
        ordered = values[order]
        low = np.minimum.reduceat(ordered, starts[present])
        high = np.maximum.reduceat(ordered, starts[present])
        constant[present] |= low == high
    r[constant] = np.nan
    return np.clip(r, -1.0, 1.0)


def task_discrimination(
    frame: pd.DataFrame,
    *,
    metric: str = "success",
    task: str = "scenario_id",
    config: str | Sequence[str] = "agent_model",
    min_configs: int = 5,
    threshold: float = 1.0,
    top: int = 10,
) -> TaskDiscrimination:
    """Per-task difficulty and discrimination across configurations.

    Parameters
    ----------
    frame : DataFrame
        Tidy scores, one row per trial.
    metric : str, default "success"
        A binary column (0/1 or boolean); missing values are left out.
    task : str, default "scenario_id"
        The task column.
    config : str or list of str, default "agent_model"
        The column(s) naming a configuration.
    min_configs : int, default 5
        Fewest configurations for the 2PL fit; below it, point-biserial.
    threshold : float, default 1.0
        A configuration solves a task when its success rate on it is at least this, and
        fails it when the rate is at most ``1 - threshold``.
    top : int, default 10
        Length of the ``separating`` list.

    Returns
    -------
    TaskDiscrimination

    Examples
    --------
    >>> frame = pd.DataFrame({"scenario_id": ["t1"] * 4 + ["t2"] * 4,
    ...                       "agent_model": ["a", "a", "b", "b"] * 2,
    ...                       "success": [1, 1, 0, 0, 1, 1, 1, 1]})
    >>> res = task_discrimination(frame)
    >>> res.separating, res.all_solve, float(res.tasks.set_index("task").discrimination["t1"])
    (['t1'], ['t2'], 1.0)
    """
    frame = _check_frame(frame)
    metric = _check_column(frame, metric, "metric")
    task = _check_column(frame, task, "task")
    _check_complete(frame, task, "task")
    configs = [config] if isinstance(config, str) else list(config)
    for c in configs:
        _check_column(frame, c, "config")
        _check_complete(frame, c, "config")
    if not 0.5 < threshold <= 1:
        raise ValueError(f"`threshold` must be in (0.5, 1], got {threshold!r}")
    values = numeric_values(frame, metric)
    if not is_binary(values):
        raise ValueError(f"task_discrimination needs a binary metric; column {metric!r} has "
                         "values other than 0 and 1")
    keep = ~np.isnan(values)
    data = pd.DataFrame({"task": frame[task].to_numpy()[keep], "y": values[keep]})
    data["config"] = (frame.loc[keep, configs[0]].astype(str).to_numpy() if len(configs) == 1
                      else frame.loc[keep, configs].astype(str).agg(" / ".join, axis=1)
                      .to_numpy())
    counts = data.pivot_table(index="task", columns="config", values="y",
                              aggfunc=["sum", "count"], sort=True)
    succ, trials = counts["sum"].fillna(0.0), counts["count"].fillna(0.0)
    rate = succ / trials.where(trials > 0)
    overall = data.groupby("config")["y"].mean()
    n_configs = rate.shape[1]
    if n_configs < 2:
        raise ValueError(f"task_discrimination needs at least two configurations; "
                         f"{configs!r} has {n_configs}")
    if n_configs >= min_configs:
        theta, a, b = fit_2pl(succ.to_numpy(), trials.to_numpy())
        abilities = pd.Series(theta, index=rate.columns, name="ability")
        difficulty, discrimination, method = b, a, "2pl"
    else:
        abilities = overall.rename("ability")
        ability_of = data["config"].map(overall).to_numpy(dtype=float)
        codes = rate.index.get_indexer(data["task"])
        discrimination = _point_biserial_by_task(data["y"].to_numpy(dtype=float), ability_of,
                                                 codes, len(rate.index))
        difficulty = 1.0 - (succ.sum(axis=1) / trials.sum(axis=1)).to_numpy()
        method = "point_biserial"
    solved = (rate >= threshold - 1e-12).sum(axis=1)
    failed = (rate <= 1 - threshold + 1e-12).sum(axis=1)
    ran = rate.notna().sum(axis=1)
    tasks = pd.DataFrame({
        "task": rate.index, "n_configs": ran.to_numpy(),
        "n_trials": trials.sum(axis=1).astype(int).to_numpy(),
        "success_rate": (succ.sum(axis=1) / trials.sum(axis=1)).to_numpy(),
        "spread": (rate.max(axis=1) - rate.min(axis=1)).to_numpy(),
        "difficulty": difficulty, "discrimination": discrimination, "method": method,
        "solved_by": solved.to_numpy(),
    })
    tasks = tasks.sort_values(["spread", "discrimination"], ascending=False, kind="stable",
                              na_position="last", ignore_index=True)
    separating = tasks.loc[tasks.spread > 0, "task"].head(top).tolist()
    return TaskDiscrimination(
        success=rate, tasks=tasks, abilities=abilities,
        all_solve=sorted(rate.index[(solved == ran) & (ran > 0)].tolist()),
        none_solve=sorted(rate.index[(failed == ran) & (ran > 0)].tolist()),
        separating=separating,
    )
