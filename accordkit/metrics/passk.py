"""pass^k and pass@k over tasks with several trials (tau-bench estimator).

For a task with ``n`` trials of which ``c`` succeeded, ``pass^k = C(c, k) / C(n, k)`` (the
unbiased estimate of the chance that ``k`` independent trials all succeed) and
``pass@k = 1 - C(n - c, k) / C(n, k)`` (at least one of ``k`` succeeds). Values are averaged
over tasks with equal weight. As upstream, ``k`` runs from 1 to the smallest number of trials
of any task (capped by the declared ``num_trials`` when the frame has it), with a warning when
that is lower than the declared number. Episodes that ended with an infrastructure error, or
that have no success value, are left out and counted in ``n_excluded``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["pass_hat_k", "EXCLUDED_TERMINATIONS"]

#: Termination reasons that say nothing about the agent (tau2 drops them before pass^k).
EXCLUDED_TERMINATIONS = ("infrastructure_error",)


def _task_table(values: np.ndarray, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per task (rows) and k (columns): pass^k and pass@k; NaN where n < k."""
    n, c = values[:, 0], values[:, 1]
    hat = np.full((len(values), len(ks)), np.nan)
    at = np.full((len(values), len(ks)), np.nan)
    cache: dict[tuple[int, int, int], tuple[float, float]] = {}
    for i, (ni, ci) in enumerate(zip(n.tolist(), c.tolist(), strict=True)):
        for j, k in enumerate(ks):
            if ni < k:
                continue
            key = (ni, ci, k)
            if key not in cache:
                total = math.comb(ni, k)
                cache[key] = (math.comb(ci, k) / total, 1.0 - math.comb(ni - ci, k) / total)
            hat[i, j], at[i, j] = cache[key]
    return hat, at


def _bootstrap(hat: np.ndarray, *, n_resamples: int, seed: int, confidence: float = 0.95
               ) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the task mean, resampling tasks with replacement."""
    n_tasks, n_k = hat.shape
    rng = np.random.default_rng(seed)
    valid = ~np.isnan(hat)
    filled = np.where(valid, hat, 0.0)
    means = np.empty((n_resamples, n_k))
    chunk = max(1, 2_000_000 // max(n_tasks, 1))
    for lo in range(0, n_resamples, chunk):
        hi = min(n_resamples, lo + chunk)
        counts = rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=hi - lo)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[lo:hi] = (counts @ filled) / (counts @ valid)
    alpha = (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(means, alpha, axis=0)
        high = np.nanquantile(means, 1.0 - alpha, axis=0)
    return low, high


def pass_hat_k(frame: pd.DataFrame, ks: Sequence[int] | int | None = None, *,
               by: str | Sequence[str] | None = None, success: str = "success",
               task: str = "scenario_id", ci: str | None = None, n_resamples: int = 10_000,
               seed: int = 0) -> pd.DataFrame:
    """pass^k and pass@k per group, averaged over tasks.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per episode, e.g. from :func:`accordkit.score`.
    ks : int or sequence of int, optional
        The k values. Default: 1 .. K, K = the smallest number of trials of any task in the
        group, capped by the largest declared ``num_trials`` when that column exists. A task
        with fewer than ``k`` trials is left out of that ``k``'s mean.
    by : str or list of str, optional
        Grouping columns (e.g. ``"agent_model"`` or ``["agent_model", "domain"]``).
    success : str
        Boolean column; default ``"success"`` (stored reward within 1e-6 of 1, as upstream).
    task : str
        Column identifying the task (the unit averaged over and resampled).
    ci : {None, "bootstrap"}
        ``"bootstrap"`` adds a 95 % percentile interval of pass^k (``ci_low``, ``ci_high``)
        from ``n_resamples`` resamples of the tasks, seeded with ``seed``.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``k``, ``pass_hat_k``, ``pass_at_k``, ``n_tasks`` (tasks with at
        least ``k`` trials), ``n_episodes`` and ``n_excluded`` (infrastructure errors and
        rows without a success value), plus ``ci_low`` / ``ci_high`` with ``ci``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a"] * 4 + ["b"] * 4,
    ...                       "success": [True] * 4 + [True, False, False, False]})
    >>> out = pass_hat_k(frame)
    >>> out["pass_hat_k"].tolist(), out["pass_at_k"].tolist()
    ([0.625, 0.5, 0.5, 0.5], [0.625, 0.75, 0.875, 1.0])
    """
    by_cols = [] if by is None else ([by] if isinstance(by, str) else list(by))
    if ci not in (None, "bootstrap"):
        raise ValueError(f"ci must be None or 'bootstrap', got {ci!r}")
    for col in [success, task, *by_cols]:
        if col not in frame.columns:
            raise ValueError(f"pass_hat_k: column {col!r} not in the frame")
    if isinstance(ks, int | np.integer):
        ks = [int(ks)]
    if ks is not None:
        ks = [int(k) for k in ks]
        if not ks or min(ks) < 1:
            raise ValueError(f"ks must be positive integers, got {ks}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")

    data = frame[by_cols + [task, success]].copy()
    ok = pd.Series(True, index=frame.index)
    if "termination_reason" in frame.columns:
        ok &= ~frame["termination_reason"].isin(EXCLUDED_TERMINATIONS)
    succ = data[success].astype("boolean")
    ok &= succ.notna()
    data["_ok"] = ok.to_numpy()
    data["_succ"] = succ.fillna(False).to_numpy(dtype=bool)
    data["_declared"] = (pd.to_numeric(frame["num_trials"], errors="coerce")
                         if "num_trials" in frame.columns else np.nan)
    rows = []
    groups = data.groupby(by_cols, dropna=False, sort=True) if by_cols else [((), data)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        used = part[part["_ok"]]
        n_excluded = int((~part["_ok"]).sum())
        per_task = used.groupby(task, sort=True)["_succ"].agg(["size", "sum"])
        if per_task.empty:
            continue
        values = per_task.to_numpy(dtype=np.int64)
        group_ks = ks
        if group_ks is None:
            k_max = int(values[:, 0].min())
            declared = used["_declared"].max()
            if not np.isnan(declared) and declared < k_max:
                k_max = int(declared)
            elif not np.isnan(declared) and k_max < declared:
                label = dict(zip(by_cols, key, strict=True)) if by_cols else "all episodes"
                warnings.warn(f"pass_hat_k ({label}): the smallest number of trials of a task "
                              f"is {k_max}, fewer than the declared {int(declared)}; "
                              f"k is capped at {k_max}", UserWarning, stacklevel=2)
            group_ks = list(range(1, k_max + 1))
        hat, at = _task_table(values, group_ks)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean_hat, mean_at = np.nanmean(hat, axis=0), np.nanmean(at, axis=0)
        n_tasks = (~np.isnan(hat)).sum(axis=0)
        if ci:
            low, high = _bootstrap(hat, n_resamples=n_resamples, seed=seed)
        for j, k in enumerate(group_ks):
            row = dict(zip(by_cols, key, strict=True))
            row.update(k=k, pass_hat_k=float(mean_hat[j]), pass_at_k=float(mean_at[j]),
                       n_tasks=int(n_tasks[j]), n_episodes=len(used), n_excluded=n_excluded)
            if ci:
                row.update(ci_low=float(low[j]), ci_high=float(high[j]))
            rows.append(row)
    columns = by_cols + ["k", "pass_hat_k", "pass_at_k", "n_tasks", "n_episodes", "n_excluded"]
    if ci:
        columns += ["ci_low", "ci_high"]
    out = pd.DataFrame(rows, columns=columns)
    for col in ("k", "n_tasks", "n_episodes", "n_excluded"):
        out[col] = out[col].astype(np.int64)
    return out
