"""Paired comparisons of configurations: every pair that shares tasks, on the tasks it shares.

Within one benchmark and domain (and task set, when the episodes record one), every two
configurations that ran at least :data:`MIN_SHARED_TASKS` tasks in common are compared on
those tasks, paired: each bootstrap resample draws shared tasks and evaluates both on the
same draw. Three configurations where two ran the same 20 tasks and the third 50 (the 20
among them) give three comparisons, each on the 20 shared tasks; the plan says, per pair,
how many tasks each ran and how many the comparison uses. A pair sharing fewer tasks is
listed as not comparable, with the reason.

Which pairs: every pair (the value sorted first of each pair as its baseline), or, with a
``baseline``, that configuration against each other one of its group, or the ``pairs`` the
user names. A baseline or pair member may be spelled as the full configuration label, the
label without its ``"<benchmark>: "`` prefix, or the agent model alone (``gpt-4.1``) when
that names one configuration of a group; a spelling that names no configuration anywhere is
refused with the list of choices (:func:`check_baseline`).

The p-values of a group's comparisons (per metric) are adjusted together (``adjust`` of
:func:`accordkit.compare`, Holm by default). Tie groups need one set of tasks for all: they
are given when every comparison of a group uses the same tasks, and are NA otherwise.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import CATALOG

__all__ = ["comparison_plan", "paired_comparisons", "benchmark_comparisons",
           "check_baseline", "check_names", "baseline_values", "agent_model_named",
           "UnknownBaselineError", "DEFAULT_COMPARISON_METRICS",
           "MIN_SHARED_TASKS"]

#: Metrics compared per benchmark when none are given (the catalogue's ``comparison_metrics``).
DEFAULT_COMPARISON_METRICS: dict[str, list[Any]] = {
    b.id: list(b.comparison_metrics) for b in CATALOG.values()}

_PLAN_COLUMNS = ["between_value", "baseline", "n_tasks", "n_baseline_tasks", "n_shared",
                 "comparable", "reason", "n_compared"]
#: Fewest shared tasks for a comparison.
MIN_SHARED_TASKS = 2


class UnknownBaselineError(ValueError):
    """A ``baseline`` or ``pairs`` that names no configuration, or several of one group: a
    usage error (``accordkit report`` exits 64 before any notebook runs)."""


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> list[str]:
    cols = [c for c in by if c in frame]
    if "task_set" in frame and "task_set" not in cols and frame["task_set"].notna().any():
        cols.append("task_set")
    return cols


def _spellings(frame: pd.DataFrame, between: str) -> dict[Any, set[str]]:
    """Each value of ``between`` and the names that may stand for it: the value, the value
    without a ``"<benchmark>: "`` prefix, and its agent model when it has one."""
    names: dict[Any, set[str]] = {}
    cols = [between] + (["agent_model"] if "agent_model" in frame and between != "agent_model"
                        else [])
    for row in frame[cols].drop_duplicates().itertuples(index=False):
        value = row[0]
        own = names.setdefault(value, {str(value)})
        if "benchmark" in frame and ": " in str(value):
            own.add(str(value).split(": ", 1)[1])
        if len(row) > 1 and not pd.isna(row[1]):
            own.add(str(row[1]))
    return names


def baseline_values(frame: pd.DataFrame, name: Hashable, *, between: str) -> list[Any]:
    """The values of ``between`` that ``name`` stands for (see the module docstring).

    Examples
    --------
    >>> frame = pd.DataFrame({"configuration": ["gpt-4.1 (llm_agent) | user: x (?)", "b"],
    ...                       "agent_model": ["gpt-4.1", "b"]})
    >>> baseline_values(frame, "gpt-4.1", between="configuration")
    ['gpt-4.1 (llm_agent) | user: x (?)']
    """
    names = _spellings(frame, between)
    exact = [v for v in names if v == name]
    return exact or [v for v, own in names.items() if str(name) in own]


def check_baseline(frame: pd.DataFrame, name: Hashable | None, *, between: str,
                   what: str = "baseline") -> None:
    """Refuse a ``baseline`` (or pair member) that names no value of ``between``.

    Raises
    ------
    ValueError
        Naming the spelling and listing the choices: the agent models and the full labels.

    Examples
    --------
    >>> frame = pd.DataFrame({"configuration": ["a (x) | user: u (?)"], "agent_model": ["a"]})
    >>> check_baseline(frame, "a", between="configuration")
    >>> check_baseline(frame, "gpt", between="configuration")
    Traceback (most recent call last):
    ...
    accordkit.tables.comparisons.UnknownBaselineError: baseline 'gpt' names no configuration; choose an agent model (a) or a full label ('a (x) | user: u (?)')
    """
    if name is None or baseline_values(frame, name, between=between):
        return
    values = sorted(map(str, pd.unique(frame[between].dropna())))
    models = (sorted(map(str, pd.unique(frame["agent_model"].dropna())))
              if "agent_model" in frame and between != "agent_model" else [])
    choices = (f"an agent model ({', '.join(models)}) or a full label "
               f"({', '.join(map(repr, values))})" if models
               else f"one of {', '.join(map(repr, values))}")
    raise UnknownBaselineError(f"{what} {name!r} names no {between}; choose {choices}")


def check_names(frame: pd.DataFrame, *, baseline: Hashable | None = None,
                pairs: Sequence[Sequence[Hashable]] | None = None,
                between: str = "configuration") -> None:
    """:func:`check_baseline` of ``baseline`` and of each member of ``pairs``."""
    check_baseline(frame, baseline, between=between)
    for pair in pairs or ():
        if isinstance(pair, str) or len(pair) != 2:
            raise UnknownBaselineError(f"pairs: each pair is two configurations, got "
                                       f"{pair!r}")
        for name in pair:
            check_baseline(frame, name, between=between, what="pairs:")


def agent_model_named(frame: pd.DataFrame, name: Hashable | None) -> Any:
    """The agent model that ``name`` stands for: an agent model, or a configuration label
    (full or without its benchmark prefix) of one agent model; None for None.

    Raises
    ------
    ValueError
        ``name`` names nothing (with the choices), or configurations of several models.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent_model": ["gpt-4.1"], "method": ["llm_agent"],
    ...                       "user_model": ["u"], "user_implementation": [None]})
    >>> agent_model_named(frame, "gpt-4.1 (llm_agent) | user: u (?)")
    'gpt-4.1'
    """
    from .tau2 import with_configuration

    if name is None or "agent_model" not in frame or (frame["agent_model"] == name).any():
        return name
    labelled = with_configuration(frame)
    check_baseline(labelled, name, between="configuration")
    hits = labelled["configuration"].isin(baseline_values(labelled, name,
                                                          between="configuration"))
    models = sorted(map(str, pd.unique(labelled.loc[hits, "agent_model"].dropna())))
    if len(models) != 1:
        raise UnknownBaselineError(f"{name!r} names configurations of {len(models)} agent "
                                   f"models "
                         f"({', '.join(models)}): give one agent model")
    return models[0]


def _named(names: dict[Any, set[str]], name: Hashable, what: str) -> Any | None:
    """The one value of a group that ``name`` stands for; None when none; an error when
    several (two configurations of one agent model: the full label is needed)."""
    exact = [v for v in names if v == name]
    hits = exact or [v for v, own in names.items() if str(name) in own]
    if len(hits) > 1:
        listed = ", ".join(map(repr, sorted(map(str, hits))))
        raise UnknownBaselineError(f"{what} {name!r} names {len(hits)} configurations of one "
                                   f"group ({listed}): give the full label")
    return hits[0] if hits else None


def _group_pairs(values: list[Any], names: dict[Any, set[str]], baseline: Hashable | None,
                 pairs: Sequence[Sequence[Hashable]] | None) -> list[tuple[Any, Any]]:
    """The (baseline, other) pairs of one group, before the shared-task check."""
    if pairs is not None:
        out = []
        for a, b in pairs:
            va, vb = _named(names, a, "pairs:"), _named(names, b, "pairs:")
            if va is not None and vb is not None and va != vb:
                out.append((va, vb))
        return out
    base = _named(names, baseline, "baseline") if baseline is not None else None
    if base is not None:
        return [(base, v) for v in values if v != base]
    return [(a, b) for i, a in enumerate(values) for b in values[i + 1:]]


def comparison_plan(frame: pd.DataFrame, *, by: Sequence[str] = ("benchmark", "domain"),
                    between: str = "configuration", cluster: str = "scenario_id",
                    baseline: Hashable | None = None,
                    pairs: Sequence[Sequence[Hashable]] | None = None,
                    check: bool = True) -> pd.DataFrame:
    """Which pairs of configurations are compared, on how many tasks, and why not otherwise.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores with the ``by`` columns, ``between`` and ``cluster``. A
        ``task_set`` column is added to ``by`` when it holds values.
    by : sequence of str
        The groups within which configurations are compared: columns that must match for
        a comparison (never pooled).
    between : str
        The column whose values are compared (the one keyword beyond the house's
        ``by`` and interval options).
    cluster : str
        The task column: a pair is compared on the tasks both ran.
    baseline : optional
        Compare this configuration with each other one of its group (groups it is not in:
        every pair). Any spelling of the module docstring.
    pairs : sequence of (baseline, other), optional
        Compare only these pairs (where both are in a group).
    check : bool, default True
        Refuse a ``baseline`` or pair member naming nothing in ``frame``
        (:func:`check_baseline`); a caller that splits the episodes checks them whole.

    Returns
    -------
    pandas.DataFrame
        One row per group and pair: the ``by`` columns, ``between_value``,
        ``baseline``, ``n_tasks`` and ``n_baseline_tasks`` (tasks each ran),
        ``n_shared``, ``comparable``, ``reason`` (empty when both ran the same tasks) and
        ``n_compared`` (tasks the comparison uses; 0 when not compared). A configuration
        in no pair has a row of its own (``baseline`` missing).

    Raises
    ------
    ValueError
        A ``baseline`` or pair member naming no configuration (with the choices), or
        two configurations of one group.

    Examples
    --------
    >>> frame = pd.DataFrame({"domain": "d", "configuration": ["A"] * 3 + ["B"] * 2,
    ...                       "scenario_id": ["t1", "t2", "t3", "t1", "t2"]})
    >>> plan = comparison_plan(frame, by=["domain"])
    >>> plan[["between_value", "baseline", "comparable", "n_compared"]].values.tolist()
    [['B', 'A', True, 2]]
    >>> print(plan["reason"].iloc[0])
    compared on the 2 tasks both ran (3 and 2 ran)
    """
    if check:
        check_names(frame, baseline=baseline, pairs=pairs, between=between)
    cols = _groups(frame, by)
    rows: list[dict[str, Any]] = []
    groups = frame.groupby(cols, dropna=False, sort=True) if cols else [((), frame)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        keys = dict(zip(cols, key, strict=True))
        # each distinct task once (a million episodes have tens of thousands of tasks)
        tasks = {v: set(p[cluster].drop_duplicates().astype(str))
                 for v, p in part.groupby(between, sort=True)}
        if not tasks:
            continue
        values = sorted(tasks, key=str)
        chosen = _group_pairs(values, _spellings(part, between), baseline, pairs)
        paired = set()
        for base, value in chosen:
            shared = tasks[value] & tasks[base]
            ok = len(shared) >= MIN_SHARED_TASKS
            if not ok:
                reason = (f"shares {len(shared)} task(s) with {base} (ran {len(tasks[value])} "
                          f"and {len(tasks[base])}): fewer than {MIN_SHARED_TASKS}")
            elif tasks[value] == tasks[base]:
                reason = ""
            else:
                reason = (f"compared on the {len(shared)} tasks both ran "
                          f"({len(tasks[base])} and {len(tasks[value])} ran)")
            paired |= {base, value}
            rows.append({**keys, "between_value": value, "baseline": base,
                         "n_tasks": len(tasks[value]), "n_baseline_tasks": len(tasks[base]),
                         "n_shared": len(shared), "comparable": ok, "reason": reason,
                         "n_compared": len(shared) if ok else 0})
        for value in values:
            if value not in paired:
                rows.append({**keys, "between_value": value, "baseline": None,
                             "n_tasks": len(tasks[value]), "n_baseline_tasks": 0,
                             "n_shared": 0, "comparable": False,
                             "reason": ("the only configuration here" if len(values) == 1
                                        else "in no pair compared"), "n_compared": 0})
    plan = pd.DataFrame(rows, columns=[*cols, *_PLAN_COLUMNS])
    for col in ("n_tasks", "n_baseline_tasks", "n_shared", "n_compared"):
        plan[col] = plan[col].astype(np.int64)
    plan["comparable"] = plan["comparable"].astype(bool)
    return plan


def paired_comparisons(frame: pd.DataFrame, *, metrics: Sequence[Any],
                       by: Sequence[str] = ("benchmark", "domain"),
                       between: str = "configuration", cluster: str = "scenario_id",
                       baseline: Hashable | None = None,
                       pairs: Sequence[Sequence[Hashable]] | None = None,
                       check: bool = True,
                       **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired differences of every comparable pair of :func:`comparison_plan`, each on the
    tasks the pair shares.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores.
    metrics : sequence
        Metrics in any form :func:`accordkit.compare` accepts.
    by, between, cluster, baseline, pairs, check
        As in :func:`comparison_plan`; ``cluster`` (the task column) is both the pairing
        column and the resampled cluster.
    **options
        Passed to :func:`accordkit.compare` (``method``, ``confidence``, ``n_resamples``,
        ``seed``, ``adjust`` ...).

    Returns
    -------
    results : pandas.DataFrame
        The rows of :func:`accordkit.compare` for every comparable pair, with the
        ``by`` columns in front; every row is paired, ``n_pairs`` is the number of
        shared tasks, ``p_adjusted`` is adjusted over the group's comparisons of a metric,
        and ``tie_group`` is NA where the group's comparisons use different tasks.
    plan : pandas.DataFrame
        :func:`comparison_plan`.
    """
    from ..stats import adjust_pvalues

    plan = comparison_plan(frame, by=by, between=between, cluster=cluster,
                           baseline=baseline, pairs=pairs, check=check)
    cols = [c for c in plan.columns if c not in _PLAN_COLUMNS]
    wanted_metrics = [tuple(m) if isinstance(m, list) else m for m in metrics]
    parts = []
    for key, group_plan in (plan.groupby(cols, dropna=False, sort=True) if cols
                            else [((), plan)]):
        key = key if isinstance(key, tuple) else (key,)
        ok = group_plan[group_plan["comparable"]]
        if ok.empty:
            continue
        mask = np.ones(len(frame), dtype=bool)
        for col, value in zip(cols, key, strict=True):
            mask &= (frame[col].isna() if pd.isna(value) else frame[col] == value).to_numpy()
        group = frame[mask]
        task_text = group[cluster].astype(str)
        tasks = {v: set(task_text[group[between] == v]) for v in
                 set(ok["between_value"]) | set(ok["baseline"])}
        # pairs on the same shared tasks are compared in one call (one draw of resamples)
        buckets: dict[frozenset, list[tuple[Any, Any]]] = {}
        for base, value in zip(ok["baseline"], ok["between_value"], strict=True):
            buckets.setdefault(frozenset(tasks[base] & tasks[value]), []).append((base, value))
        group_rows = []
        for shared, bucket in buckets.items():
            part = group[task_text.isin(shared)]
            bases = {b for b, _ in bucket}
            # one call per bucket: its one baseline, or every pair (compare orients a pair
            # as sorted); a pair it did not orient as asked is compared on its own
            rows = _compare_pairs(part, bucket, next(iter(bases)) if len(bases) == 1
                                  else None, wanted_metrics, between, cluster, options)
            if rows is None:
                rows = pd.concat([_compare_pairs(part, [pair], pair[0], wanted_metrics,
                                                 between, cluster, options)
                                  for pair in bucket], ignore_index=True)
            group_rows.append(rows)
        res = pd.concat(group_rows, ignore_index=True)
        one_task_set = len(buckets) == 1
        if not one_task_set:
            for col in ("tie_group", "baseline_tie_group"):
                res[col] = pd.array([pd.NA] * len(res), dtype="Int64")
        adjust = options.get("adjust", "holm")
        for metric in pd.unique(res["metric"]):
            rows = np.flatnonzero((res["metric"] == metric).to_numpy())
            res.loc[res.index[rows], "p_adjusted"] = adjust_pvalues(
                res["p_value"].to_numpy(dtype=float)[rows], adjust)
        parts.append(res.assign(**dict(zip(cols, key, strict=True))))
    if not parts:
        return pd.DataFrame(columns=[*cols, "metric", between, "baseline", "delta", "ci_low",
                                     "ci_high", "p_value", "p_adjusted", "paired"]), plan
    results = pd.concat(parts, ignore_index=True)
    return results[cols + [c for c in results.columns if c not in cols]], plan


def _compare_pairs(part: pd.DataFrame, pairs: list[tuple[Any, Any]], baseline: Any,
                   metrics: list[Any], between: str, cluster: str,
                   options: dict[str, Any]) -> pd.DataFrame | None:
    """The :func:`accordkit.compare_metrics` rows of these (baseline, other) pairs, from one
    call; None when the call did not give every pair as asked."""
    from ..stats import compare_metrics

    members = {m for pair in pairs for m in pair}
    res = compare_metrics(part[part[between].isin(members)], metrics, between=between,
                          baseline=baseline, cluster=cluster, **options)
    keep = set(pairs)
    hit = np.array([(b, v) in keep for b, v in zip(res["baseline"], res[between],
                                                   strict=True)], dtype=bool)
    if int(hit.sum()) != len(keep) * len(metrics):
        return None
    return res[hit]


def benchmark_comparisons(frame: pd.DataFrame, *, metrics: Sequence[Any] | None = None,
                          by: Sequence[str] = ("benchmark", "domain"),
                          between: str = "configuration", cluster: str = "scenario_id",
                          baseline: Hashable | None = None,
                          pairs: Sequence[Sequence[Hashable]] | None = None,
                          **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`paired_comparisons` within each benchmark and domain, with per-benchmark metrics.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores of any benchmarks, with a ``between`` column.
    metrics : sequence, optional
        The same metrics for every benchmark; default :data:`DEFAULT_COMPARISON_METRICS`
        (``["success"]`` for other benchmarks).
    by : sequence of str, default ("benchmark", "domain")
        The groups within which configurations are compared; ``benchmark`` must be one
        (the metrics are chosen per benchmark).
    between, cluster, baseline, pairs, **options
        As in :func:`paired_comparisons` (``baseline`` and ``pairs`` are checked against
        every benchmark's episodes at once).

    Returns
    -------
    results, plan : pandas.DataFrame
        Concatenated over benchmarks (both have a ``benchmark`` column).
    """
    by = list(by)
    if "benchmark" not in by:
        raise ValueError(f"benchmark_comparisons needs 'benchmark' among `by` (the metrics "
                         f"are chosen per benchmark), got {by}")
    check_names(frame, baseline=baseline, pairs=pairs, between=between)
    results, plans = [], []
    for bench, part in frame.groupby("benchmark", sort=True):
        wanted = list(metrics) if metrics else DEFAULT_COMPARISON_METRICS.get(
            str(bench), ["success"])
        if "success" in wanted and "success" in part:
            part = part.assign(success=part["success"].astype(float))
        res, plan = paired_comparisons(part, metrics=wanted, by=by, between=between,
                                       cluster=cluster, baseline=baseline, pairs=pairs,
                                       check=False, **options)
        results.append(res)
        plans.append(plan)
    if not plans:
        return paired_comparisons(frame, metrics=[], by=by, between=between,
                                  cluster=cluster, check=False)
    nonempty = [r for r in results if len(r)]
    res = pd.concat(nonempty, ignore_index=True) if nonempty else results[0]
    return res, pd.concat(plans, ignore_index=True)
