"""Paired comparisons of configurations, only where they ran the same tasks.

A difference between two agent configurations is read as paired only when both ran the
same tasks of one benchmark and domain (and task set, when the episodes record one): each
bootstrap resample then draws tasks and evaluates both on the same draw. A configuration
that ran other tasks is listed as not comparable, with the reason, and never compared.

With ``shared_tasks=True`` such a configuration is compared anyway, on the tasks it
shares with the baseline: the group's comparisons are then made on the tasks every compared
configuration ran (still paired), and the plan says so, with how many tasks were left out.
Two runs that differ by one task are then comparable on the rest.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd

from ..benchmarks import CATALOG

__all__ = ["comparison_plan", "paired_comparisons", "benchmark_comparisons",
           "DEFAULT_COMPARISON_METRICS", "MIN_SHARED_TASKS"]

#: Metrics compared per benchmark when none are given (the catalogue's ``comparison_metrics``).
DEFAULT_COMPARISON_METRICS: dict[str, list[Any]] = {
    b.id: list(b.comparison_metrics) for b in CATALOG.values()}

_PLAN_COLUMNS = ["between_value", "baseline", "n_tasks", "n_shared", "comparable", "reason",
                 "n_compared"]
#: Fewest tasks shared with the baseline for a comparison on shared tasks.
MIN_SHARED_TASKS = 2


def _within(frame: pd.DataFrame, within: Sequence[str]) -> list[str]:
    cols = [c for c in within if c in frame]
    if "task_set" in frame and "task_set" not in cols and frame["task_set"].notna().any():
        cols.append("task_set")
    return cols


def comparison_plan(frame: pd.DataFrame, *, within: Sequence[str] = ("benchmark", "domain"),
                    between: str = "configuration", task: str = "scenario_id",
                    baseline: Hashable | None = None,
                    shared_tasks: bool = False) -> pd.DataFrame:
    """Which configurations can be compared with which baseline, and why not otherwise.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores with the ``within`` columns, ``between`` and ``task``. A
        ``task_set`` column is added to ``within`` when it holds values.
    within : sequence of str
        Columns that must match for a comparison (never pooled).
    between : str
        The column whose values are compared.
    task : str
        The task column; paired comparisons need identical task sets.
    baseline : optional
        The reference value of ``between``; where absent from a group, that group's
        reference is the value with the most tasks (ties: the first in sort order).
    shared_tasks : bool, default False
        Compare a value that ran other tasks than the baseline on the tasks they share
        (at least :data:`MIN_SHARED_TASKS`). Otherwise it is not comparable, and the reason
        says how many tasks a comparison on shared tasks would use.

    Returns
    -------
    pandas.DataFrame
        One row per group and value: the ``within`` columns, ``between_value``,
        ``baseline``, ``n_tasks``, ``n_shared`` (tasks shared with the baseline),
        ``comparable``, ``reason`` (empty when compared on identical task sets) and
        ``n_compared`` (tasks the group's comparisons use; 0 when not compared).

    Examples
    --------
    >>> frame = pd.DataFrame({"domain": "d", "configuration": ["A"] * 3 + ["B"] * 2,
    ...                       "scenario_id": ["t1", "t2", "t3", "t1", "t2"]})
    >>> print(comparison_plan(frame, within=["domain"])["reason"].iloc[1])
    ran 2 task(s), 2 shared with the baseline's 3: not the same task set (shared_tasks=true compares them on the 2 shared tasks)
    >>> plan = comparison_plan(frame, within=["domain"], shared_tasks=True)
    >>> plan[["between_value", "comparable", "n_compared"]].values.tolist()
    [['A', True, 2], ['B', True, 2]]
    """
    cols = _within(frame, within)
    rows: list[dict[str, Any]] = []
    groups = frame.groupby(cols, dropna=False, sort=True) if cols else [((), frame)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        # each distinct task once (a million episodes have tens of thousands of tasks)
        tasks = {v: set(p[task].drop_duplicates().astype(str))
                 for v, p in part.groupby(between, sort=True)}
        if not tasks:
            continue
        if baseline in tasks:
            base = baseline
        else:
            base = sorted(tasks, key=lambda v: (-len(tasks[v]), str(v)))[0]
        group_rows = []
        for value, own in tasks.items():
            shared = own & tasks[base]
            if value == base or own == tasks[base]:
                ok, reason = True, ""
            elif shared_tasks and len(shared) >= MIN_SHARED_TASKS:
                ok = True
                reason = (f"ran {len(own)} task(s), {len(shared)} shared with the baseline's "
                          f"{len(tasks[base])}: compared on shared tasks")
            else:
                ok = False
                reason = (f"ran {len(own)} task(s), {len(shared)} shared with the baseline's "
                          f"{len(tasks[base])}: not the same task set")
                if not shared_tasks and len(shared) >= MIN_SHARED_TASKS:
                    reason += (f" (shared_tasks=true compares them on the {len(shared)} "
                               "shared tasks)")
            group_rows.append({**dict(zip(cols, key, strict=True)), "between_value": value,
                               "baseline": base, "n_tasks": len(own),
                               "n_shared": len(shared), "comparable": ok, "reason": reason})
        compared = [r["between_value"] for r in group_rows if r["comparable"]]
        common = set.intersection(*(tasks[v] for v in compared)) if len(compared) > 1 \
            else set()
        for r in group_rows:
            r["n_compared"] = len(common) if r["comparable"] and len(compared) > 1 else 0
            if r["reason"].endswith("compared on shared tasks"):
                r["reason"] = r["reason"].replace(
                    "compared on shared tasks",
                    f"compared on the {len(common)} tasks every compared configuration ran")
        rows += group_rows
    return pd.DataFrame(rows, columns=[*cols, *_PLAN_COLUMNS])


def paired_comparisons(frame: pd.DataFrame, metrics: Sequence[Any], *,
                       within: Sequence[str] = ("benchmark", "domain"),
                       between: str = "configuration", task: str = "scenario_id",
                       baseline: Hashable | None = None, shared_tasks: bool = False,
                       **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired differences against a baseline inside each group of identical task sets
    (or, with ``shared_tasks``, on the tasks the compared configurations share).

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores.
    metrics : sequence
        Metrics in any form :func:`accordkit.compare` accepts.
    within, between, task, baseline, shared_tasks
        As in :func:`comparison_plan`.
    **options
        Passed to :func:`accordkit.compare` (``method``, ``confidence``, ``n_resamples``,
        ``seed`` ...); the pairing column is always ``task``.

    Returns
    -------
    results : pandas.DataFrame
        The rows of :func:`accordkit.compare` for every group with at least two comparable
        values, with the ``within`` columns in front; every row is paired.
    plan : pandas.DataFrame
        :func:`comparison_plan`, listing what was not compared and why.
    """
    from ..stats import compare_metrics

    plan = comparison_plan(frame, within=within, between=between, task=task,
                           baseline=baseline, shared_tasks=shared_tasks)
    cols = [c for c in plan.columns if c not in _PLAN_COLUMNS]
    parts = []
    for key, group_plan in (plan.groupby(cols, dropna=False, sort=True) if cols
                            else [((), plan)]):
        key = key if isinstance(key, tuple) else (key,)
        keep = group_plan.loc[group_plan["comparable"], "between_value"].tolist()
        if len(keep) < 2:
            continue
        mask = frame[between].isin(keep)
        for col, value in zip(cols, key, strict=True):
            mask &= frame[col].isna() if pd.isna(value) else frame[col] == value
        part = frame[mask]
        if shared_tasks:   # the tasks every compared configuration ran (all of them, unless
            common = set.intersection(*(set(p[task].astype(str))   # a task set differs)
                                        for _, p in part.groupby(between, sort=True)))
            part = part[part[task].astype(str).isin(common)]
        base = group_plan["baseline"].iloc[0]
        # one draw of each cell's resamples for every metric (compare_metrics): the same
        # rows as comparing the metrics one at a time
        res = compare_metrics(part, [tuple(m) if isinstance(m, list) else m for m in metrics],
                              between=between, baseline=base, cluster=task, **options)
        parts.append(res.assign(**dict(zip(cols, key, strict=True))))
    if not parts:
        return pd.DataFrame(columns=[*cols, "metric", between, "baseline", "delta", "ci_low",
                                     "ci_high", "p_value", "p_adjusted", "paired"]), plan
    results = pd.concat(parts, ignore_index=True)
    return results[cols + [c for c in results.columns if c not in cols]], plan


def benchmark_comparisons(frame: pd.DataFrame, metrics: Sequence[Any] | None = None, *,
                          between: str = "configuration", task: str = "scenario_id",
                          baseline: Hashable | None = None, shared_tasks: bool = False,
                          **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`paired_comparisons` within each benchmark and domain, with per-benchmark metrics.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores of any benchmarks, with a ``between`` column.
    metrics : sequence, optional
        The same metrics for every benchmark; default :data:`DEFAULT_COMPARISON_METRICS`
        (``["success"]`` for other benchmarks).
    between, task, baseline, shared_tasks, **options
        As in :func:`paired_comparisons`.

    Returns
    -------
    results, plan : pandas.DataFrame
        Concatenated over benchmarks (both have a ``benchmark`` column).
    """
    results, plans = [], []
    for bench, part in frame.groupby("benchmark", sort=True):
        wanted = list(metrics) if metrics else DEFAULT_COMPARISON_METRICS.get(
            str(bench), ["success"])
        if "success" in wanted and "success" in part:
            part = part.assign(success=part["success"].astype(float))
        res, plan = paired_comparisons(part, wanted, within=("benchmark", "domain"),
                                       between=between, task=task, baseline=baseline,
                                       shared_tasks=shared_tasks, **options)
        results.append(res)
        plans.append(plan)
    if not plans:
        return paired_comparisons(frame, [], between=between, task=task, baseline=baseline)
    nonempty = [r for r in results if len(r)]
    res = pd.concat(nonempty, ignore_index=True) if nonempty else results[0]
    return res, pd.concat(plans, ignore_index=True)
