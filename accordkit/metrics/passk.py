"""pass^k and pass@k over tasks with several trials (the tau-bench estimators).

For a task with ``n`` trials of which ``c`` succeeded, ``pass^k = C(c, k) / C(n, k)`` (the
unbiased estimate of the chance that ``k`` independent trials all succeed) and
``pass@k = 1 - C(n - c, k) / C(n, k)`` (at least one of ``k`` succeeds). A group's value is
the mean over its tasks, each task weighted equally.

Two rules for ``n`` (``rule=``):

``"per_task"`` (default)
    ``n`` is the task's own number of trials: the unbiased per-task estimate. ``k`` runs
    from 1 to the smallest number of trials of any task in the group (capped by the declared
    ``num_trials`` when the frame has it, with a warning when it is lower). A task with
    fewer than ``k`` trials is left out of that ``k``.
``"taubench"``
    τ-bench's ``run.py`` rule: ``n = T``, the number of distinct trial numbers in the
    group (for a τ-bench file grouped by configuration: the trials in the whole file), for
    every task, and ``k`` runs from 1 to ``T``. A task with fewer than ``T`` trials is thus
    divided by ``C(T, k)`` anyway, i.e. its missing trials count as failures. This reproduces
    τ-bench's printed and leaderboard numbers exactly.

Episodes that ended with an infrastructure error (:data:`EXCLUDED_TERMINATIONS`, tau2's
rule) or that have no success value are left out and counted in ``n_excluded``. A τ-bench
run that raised has ``termination_reason == "run_error"`` and reward 0: it counts as a
failure, as in τ-bench.

:func:`pass_hat_k_tasks` gives one row per group x task x k; :func:`pass_hat_k_means`
averages them per group. :func:`accordkit.pass_hat_k` (:mod:`accordkit.tables.passk`, a
layer up, as it takes intervals from :func:`accordkit.summarize`) gives the same means, with
intervals when asked.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..names import CONFIG_COLUMNS

__all__ = ["pass_hat_k_tasks", "pass_hat_k_means", "tasks_and_counts", "group_means",
           "empty_result", "EXCLUDED_TERMINATIONS",
           "RULES", "DEFAULT_BY", "TASK_COLUMNS", "GROUP_COLUMNS"]

#: Termination reasons that say nothing about the agent (tau2 drops them before pass^k).
EXCLUDED_TERMINATIONS = ("infrastructure_error",)
RULES = ("per_task", "taubench")
#: Default grouping: domain x agent configuration (the columns present in the frame).
DEFAULT_BY = ("domain", *CONFIG_COLUMNS)

TASK_COLUMNS = ["k", "n_trials", "n_successes", "pass_hat_k", "pass_at_k"]
GROUP_COLUMNS = ["k", "pass_hat_k", "pass_at_k", "n_tasks", "n_episodes", "n_excluded"]


def _by_columns(frame: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return [c for c in DEFAULT_BY if c in frame.columns]
    cols = [by] if isinstance(by, str) else list(by)
    if (cols and "domain" not in cols and "domain" in frame.columns
            and frame["domain"].nunique(dropna=False) > 1):
        warnings.warn(f"pass_hat_k: by={cols} pools {frame['domain'].nunique(dropna=False)} "
                      "domains into one value per group; add 'domain' to `by` to keep them "
                      "apart", UserWarning, stacklevel=4)
    return cols


def _check(frame: pd.DataFrame, cols: list[str], ks: Sequence[int] | int | None,
           rule: str) -> list[int] | None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    for col in cols:
        if col not in frame.columns:
            raise ValueError(f"pass_hat_k: column {col!r} not in the frame")
    if isinstance(ks, int | np.integer):
        ks = [int(ks)]
    if ks is not None:
        ks = [int(k) for k in ks]
        if not ks or min(ks) < 1:
            raise ValueError(f"ks must be positive integers, got {ks}")
    return ks


def _per_task(used: pd.DataFrame, task: str, trial: str | None, rule: str,
              ks: list[int] | None, label: object) -> tuple[pd.DataFrame, list[int]]:
    """Rows (task, k, n_trials, n_successes, pass^k, pass@k) of one group."""
    counts = used.groupby(task, sort=True, dropna=False)["_succ"].agg(["size", "sum"])
    n_obs = counts["size"].to_numpy(dtype=np.int64)
    c = counts["sum"].to_numpy(dtype=np.int64)
    if rule == "taubench":
        big_t = int(used[trial].nunique(dropna=True))
        n_div = np.full(len(counts), max(big_t, int(n_obs.max())), dtype=np.int64)
        group_ks = ks if ks is not None else list(range(1, int(n_div[0]) + 1))
    else:
        n_div = n_obs
        group_ks = ks
        if group_ks is None:
            k_max = int(n_obs.min())
            declared = used["_declared"].max()
            if not np.isnan(declared) and declared < k_max:
                k_max = int(declared)
            elif not np.isnan(declared) and k_max < declared:
                warnings.warn(f"pass_hat_k ({label}): the smallest number of trials of a task "
                              f"is {k_max}, fewer than the declared {int(declared)}; "
                              f"k is capped at {k_max}", UserWarning, stacklevel=4)
            group_ks = list(range(1, k_max + 1))
    rows = []
    for name, n_i, d_i, c_i in zip(counts.index, n_obs.tolist(), n_div.tolist(), c.tolist(),
                                   strict=True):
        for k in group_ks:
            if d_i < k:
                continue
            total = math.comb(d_i, k)
            rows.append((name, k, n_i, c_i, math.comb(c_i, k) / total,
                         1.0 - math.comb(d_i - c_i, k) / total))
    return pd.DataFrame(rows, columns=[task, *TASK_COLUMNS]), group_ks


def _prepare(frame: pd.DataFrame, by_cols: list[str], task: str, success: str,
             trial: str | None) -> pd.DataFrame:
    keep = list(dict.fromkeys([*by_cols, task, success] + ([trial] if trial else [])))
    data = frame[keep].copy()
    ok = pd.Series(True, index=frame.index)
    if "termination_reason" in frame.columns:
        ok &= ~frame["termination_reason"].isin(EXCLUDED_TERMINATIONS)
    succ = frame[success].astype("boolean")
    ok &= succ.notna()
    data["_ok"] = ok.to_numpy()
    data["_succ"] = succ.fillna(False).to_numpy(dtype=bool)
    data["_declared"] = (pd.to_numeric(frame["num_trials"], errors="coerce")
                         if "num_trials" in frame.columns else np.nan)
    return data


def _groups(data: pd.DataFrame, by_cols: list[str]):
    if not by_cols:
        yield (), data
        return
    for key, part in data.groupby(by_cols, dropna=False, sort=True):
        yield (key if isinstance(key, tuple) else (key,)), part


def empty_result(by_cols: list[str], frame: pd.DataFrame, columns: Sequence[str],
                 ints: Sequence[str]) -> pd.DataFrame:
    """A result with no rows: the ``by_cols`` (of ``frame``'s dtypes) and ``columns``
    (int64 for those in ``ints``, else float)."""
    out = pd.DataFrame({c: pd.Series(dtype=frame[c].dtype if c in frame.columns else object)
                        for c in by_cols})
    for col in columns:
        out[col] = pd.Series(dtype=np.int64 if col in ints else float)
    return out


def pass_hat_k_tasks(frame: pd.DataFrame, ks: Sequence[int] | int | None = None, *,
                     by: str | Sequence[str] | None = None, rule: str = "per_task",
                     success: str = "success", task: str = "scenario_id",
                     trial: str = "rollout") -> pd.DataFrame:
    """Per-task pass^k and pass@k: one row per group x task x k.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per episode, e.g. from :func:`accordkit.score`.
    ks : int or sequence of int, optional
        The k values; default depends on ``rule`` (module docstring).
    by : str or list of str, optional
        Grouping columns. Default: ``domain`` and the configuration columns
        (:data:`accordkit.schema.CONFIG_COLUMNS`) present in the frame; ``[]`` pools all
        rows. Missing values form their own group. A ``by`` without ``domain`` on a frame
        with several domains warns.
    rule : {"per_task", "taubench"}
        How many trials a task's estimate divides by (module docstring).
    success, task, trial : str
        Boolean success column, task column, trial-number column (``trial`` is read only by
        ``rule="taubench"``).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``task``, ``k``, ``n_trials`` (trials of the task used),
        ``n_successes``, ``pass_hat_k``, ``pass_at_k``. Empty (with these columns) when
        there are no usable episodes.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a", "a", "b", "b"],
    ...                       "success": [True, True, True, False]})
    >>> pass_hat_k_tasks(frame)[["scenario_id", "k", "pass_hat_k"]]
      scenario_id  k  pass_hat_k
    0           a  1         1.0
    1           a  2         1.0
    2           b  1         0.5
    3           b  2         0.0
    """
    out, _ = tasks_and_counts(frame, ks, by=by, rule=rule, success=success, task=task,
                               trial=trial)
    return out


def tasks_and_counts(frame: pd.DataFrame, ks: Sequence[int] | int | None = None, *,
                     by: str | Sequence[str] | None = None, rule: str = "per_task",
                     success: str = "success", task: str = "scenario_id",
                     trial: str = "rollout") -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`pass_hat_k_tasks` and, per group, how many episodes were used and left out.

    What :func:`accordkit.pass_hat_k` averages (options as in :func:`pass_hat_k_tasks`).

    Returns
    -------
    tasks : pandas.DataFrame
        As :func:`pass_hat_k_tasks` returns.
    counts : pandas.DataFrame
        The ``by`` columns, ``n_episodes`` (usable episodes) and ``n_excluded``
        (infrastructure errors and rows without a success value), one row per group with a
        usable episode.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a", "a", "b"], "success": [True, None, False]})
    >>> tasks, counts = tasks_and_counts(frame, 1, by=[])
    >>> tasks["pass_hat_k"].tolist(), counts.to_dict("records")
    ([1.0, 0.0], [{'n_episodes': 2, 'n_excluded': 1}])
    """
    by_cols = _by_columns(frame, by)
    needed = [success, task, *by_cols] + ([trial] if rule == "taubench" else [])
    ks = _check(frame, needed, ks, rule)
    data = _prepare(frame, by_cols, task, success, trial if rule == "taubench" else None)
    parts, counts = [], []
    for key, part in _groups(data, by_cols):
        used = part[part["_ok"]]
        head = dict(zip(by_cols, key, strict=True))
        if used.empty:
            continue
        label = head or "all episodes"
        rows, _ = _per_task(used, task, trial, rule, ks, label)
        for col, value in reversed(head.items()):
            rows.insert(0, col, [value] * len(rows))
        parts.append(rows)
        counts.append({**head, "n_episodes": len(used), "n_excluded": int((~part["_ok"]).sum())})
    columns = [*by_cols, task, *TASK_COLUMNS]
    if not parts:
        return (empty_result([*by_cols, task], frame, TASK_COLUMNS, ("k", "n_trials", "n_successes")),
                pd.DataFrame(counts, columns=[*by_cols, "n_episodes", "n_excluded"]))
    out = pd.concat(parts, ignore_index=True)[columns]
    for col in ("k", "n_trials", "n_successes"):
        out[col] = out[col].astype(np.int64)
    return out, pd.DataFrame(counts, columns=[*by_cols, "n_episodes", "n_excluded"])


def group_means(frame: pd.DataFrame, tasks: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """pass^k and pass@k per group from :func:`tasks_and_counts`: the mean over tasks.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``k``, ``pass_hat_k``, ``pass_at_k``, ``n_tasks`` (tasks with a
        value at that ``k``), ``n_episodes`` and ``n_excluded``; with these columns and no
        row when there are no usable episodes (``frame`` gives the ``by`` columns' dtypes).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a", "a", "b", "b"],
    ...                       "success": [True, True, True, False]})
    >>> group_means(frame, *tasks_and_counts(frame))["pass_hat_k"].tolist()
    [0.75, 0.5]
    """
    by_cols = list(counts.columns[:-2])
    ints = ("k", "n_tasks", "n_episodes", "n_excluded")
    if tasks.empty:
        return empty_result(by_cols, frame, GROUP_COLUMNS, ints)[[*by_cols, *GROUP_COLUMNS]]
    keys = [*by_cols, "k"]
    grouped = tasks.groupby(keys, dropna=False, sort=True)
    out = grouped[["pass_hat_k", "pass_at_k"]].mean()
    out["n_tasks"] = grouped.size()
    out = out.reset_index()
    if by_cols:
        out = out.merge(counts, on=by_cols, how="left")
    else:
        out["n_episodes"] = int(counts["n_episodes"].iloc[0])
        out["n_excluded"] = int(counts["n_excluded"].iloc[0])
    for col in ints:
        out[col] = out[col].astype(np.int64)
    return out[[*by_cols, *GROUP_COLUMNS]]


def pass_hat_k_means(frame: pd.DataFrame, ks: Sequence[int] | int | None = None, *,
                     by: str | Sequence[str] | None = None, rule: str = "per_task",
                     success: str = "success", task: str = "scenario_id",
                     trial: str = "rollout") -> pd.DataFrame:
    """pass^k and pass@k per group, point estimates: the mean over tasks of
    :func:`pass_hat_k_tasks` (options as there). :func:`accordkit.pass_hat_k` gives the
    same values, with intervals when asked.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a"] * 4 + ["b"] * 4,
    ...                       "success": [True] * 4 + [True, False, False, False]})
    >>> pass_hat_k_means(frame)["pass_hat_k"].tolist()
    [0.625, 0.5, 0.5, 0.5]
    """
    tasks, counts = tasks_and_counts(frame, ks, by=by, rule=rule, success=success, task=task,
                                     trial=trial)
    return group_means(frame, tasks, counts)
