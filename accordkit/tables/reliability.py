"""The tables of the ``reliability`` notebook, as pure functions over score frames.

As in the other notebooks, a group is one benchmark × domain × configuration, where the
configuration is the ``configuration`` label of
:func:`accordkit.tables.tau2.with_configuration` (agent model, agent implementation,
user model, user implementation; ``?`` where a column is unknown). Domains are never
pooled. The differences against the noise floor are planned by
:func:`accordkit.tables.comparisons.paired_comparisons`, the rule ``compare_models``
follows: within one benchmark and domain, only between configurations that ran the
identical task set, always paired on the task.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import CATALOG
from .comparisons import paired_comparisons
from .tau2 import with_configuration

__all__ = ["GROUP", "BINARY_METRICS", "NEEDS_TRIALS", "single_trial_groups", "reliability_episodes", "chosen_metrics",
           "noise_floor_table", "plan_trials_table", "discrimination_tables",
           "differences_vs_noise"]

#: The columns a noise floor, a plan or a comparison never pools across.
GROUP = ("benchmark", "domain", "configuration")

#: The binary metric of each benchmark when the notebook is given none (the catalogue's
#: ``binary_metric``).
BINARY_METRICS = {b.id: b.binary_metric for b in CATALOG.values()}

_DIFF_COLUMNS = ["benchmark", "domain", "metric", "configuration", "baseline", "delta",
                 "ci_low", "ci_high", "p_adjusted", "n_pairs", "mdd", "exceeds_noise_floor",
                 "noise_floor_note"]

#: Why a noise-floor test could not be made when a side ran one trial per task.
NEEDS_TRIALS = "needs ≥ 2 trials per task"
_SINGLE_TRIAL_FLAG = "single trial per task"


def reliability_episodes(scores: pd.DataFrame) -> pd.DataFrame:
    """Episode (or shift) scores with their ``configuration`` label (``?`` where unknown)."""
    return with_configuration(scores.reset_index(drop=True))


def chosen_metrics(episodes: pd.DataFrame, metrics: Sequence[str] | None = None,
                   ) -> dict[str, str]:
    """The metric of each benchmark: the first of ``metrics``, else :data:`BINARY_METRICS`
    (``"success"`` for any other benchmark)."""
    return {str(bench): (metrics[0] if metrics else BINARY_METRICS.get(bench, "success"))
            for bench in sorted(episodes["benchmark"].unique())}


def _as_float(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``metric`` as float (a nullable boolean's missing values as NaN), as
    :func:`~accordkit.tables.comparisons.benchmark_comparisons` compares ``success``."""
    if metric in frame and not pd.api.types.is_float_dtype(frame[metric]):
        return frame.assign(**{metric: frame[metric].astype(float)})
    return frame


def noise_floor_table(episodes: pd.DataFrame, chosen: Mapping[str, str], *,
                      cluster: str = "scenario_id") -> pd.DataFrame:
    """:func:`accordkit.noise_floor` per benchmark, domain and configuration.

    Returns
    -------
    pandas.DataFrame
        ``benchmark``, ``domain``, ``configuration``, ``metric``, then the columns of
        :func:`accordkit.noise_floor`.
    """
    from ..stats import noise_floor

    parts = []
    for bench, part in episodes.groupby("benchmark", sort=True):
        floor = noise_floor(part, metric=chosen[bench], by=list(GROUP[1:]), cluster=cluster)
        parts.append(floor.assign(benchmark=bench, metric=chosen[bench]))
    if not parts:
        return pd.DataFrame(columns=[*GROUP, "metric"])
    floors = pd.concat(parts, ignore_index=True)
    front = [*GROUP, "metric"]
    return floors[front + [c for c in floors.columns if c not in front]]


def plan_trials_table(episodes: pd.DataFrame, chosen: Mapping[str, str], *,
                      cluster: str = "scenario_id",
                      effects: Sequence[float] = (0.05, 0.10, 0.20),
                      trials: Sequence[int] = (1, 2, 3, 5, 10),
                      ) -> tuple[pd.DataFrame, list[str]]:
    """:func:`accordkit.plan_trials` per benchmark, domain and configuration.

    Each effect is planned toward 0 for a group already above 50 % success, else toward 1.

    Returns
    -------
    plans : pandas.DataFrame
        The designs, with ``benchmark``, ``domain`` and ``configuration`` columns.
    notes : list of str
        Why a group or an effect could not be planned: one line for all the groups that
        ran one trial per task (:data:`NEEDS_TRIALS`), one per group whose variance
        components cannot be fitted, one per other effect that cannot be planned.
    """
    from ..stats import plan_trials

    plans, notes = [], []
    single = set(single_trial_groups(episodes, cluster=cluster))
    if single:   # said once, not once per group and effect
        notes.append(f"{len(single)} group(s) ran one trial per task and are not planned: "
                     f"a plan {NEEDS_TRIALS} (the within-task variance): "
                     + ", ".join(sorted(single)))
    for key, cfg in episodes.groupby(list(GROUP), sort=True, dropna=False):
        bench, domain, config = key
        if " / ".join("?" if pd.isna(v) else str(v) for v in key) in single:
            continue
        metric = chosen[bench]
        above = cfg[metric].astype(float).mean() > 0.5
        for effect in effects:
            effect = -effect if above else effect
            try:
                plan = plan_trials(cfg, effect=effect, metric=metric, cluster=cluster,
                                   trials=list(trials))
            except ValueError as err:  # a ceiling or an unfittable group: say so
                if "cannot fit variance components" in str(err):   # the same for every effect
                    notes.append(f"{bench} / {domain} / {config}: {err}")
                    break
                notes.append(f"{bench} / {domain} / {config} / effect {effect}: {err}")
                continue
            plans.append(plan.assign(benchmark=bench, domain=domain, configuration=config))
    return (pd.concat(plans, ignore_index=True) if plans else pd.DataFrame()), notes


def discrimination_tables(episodes: pd.DataFrame, chosen: Mapping[str, str], *,
                          cluster: str = "scenario_id") -> dict[tuple[Any, Any], Any]:
    """:func:`accordkit.task_discrimination` across the configurations of each benchmark
    and domain.

    Returns
    -------
    dict
        ``(benchmark, domain)`` to a :class:`~accordkit.stats.TaskDiscrimination`, or to a
        string saying why there is none (a single configuration).
    """
    from ..stats import task_discrimination

    out: dict[tuple[Any, Any], Any] = {}
    for (bench, domain), part in episodes.groupby(["benchmark", "domain"], sort=True,
                                                  dropna=False):
        if part["configuration"].nunique() < 2:
            out[(bench, domain)] = "one configuration, no discrimination"
            continue
        out[(bench, domain)] = task_discrimination(part, metric=chosen[bench], task=cluster,
                                                   config="configuration")
    return out


def differences_vs_noise(episodes: pd.DataFrame, chosen: Mapping[str, str],
                         floors: pd.DataFrame, *, cluster: str = "scenario_id",
                         baseline: Hashable | None = None, **options: Any,
                         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired differences against a baseline next to the noise floor.

    The comparisons are those of :func:`~accordkit.tables.comparisons.paired_comparisons`
    within each benchmark and domain (configurations that ran another task set are not
    compared, and the plan says why), on each benchmark's metric of ``chosen``.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores with a ``configuration`` column (:func:`reliability_episodes`).
    chosen : mapping
        Benchmark to metric (:func:`chosen_metrics`).
    floors : pandas.DataFrame
        :func:`noise_floor_table` of the same episodes.
    cluster, baseline, **options
        As in :func:`~accordkit.tables.comparisons.paired_comparisons` (``task`` is
        ``cluster``).

    Returns
    -------
    results : pandas.DataFrame
        :data:`_DIFF_COLUMNS`: each paired difference with ``mdd``, the larger of the two
        configurations' minimum detectable differences in that benchmark and domain, and
        ``exceeds_noise_floor`` (``|delta| >= mdd``; missing, never False, where ``mdd``
        is NaN: the test could not be made) and ``noise_floor_note``, why it is missing
        (:data:`NEEDS_TRIALS` when either configuration ran one trial per task, else the
        noise floor's flags; empty when the test was made).
    plan : pandas.DataFrame
        The comparison plan of every benchmark and domain.
    """
    results, plans = [], []
    for bench, part in episodes.groupby("benchmark", sort=True):
        metric = chosen[bench]
        res, plan = paired_comparisons(_as_float(part, metric), [metric],
                                       within=("benchmark", "domain"),
                                       between="configuration", task=cluster,
                                       baseline=baseline, **options)
        plans.append(plan)
        if len(res):
            results.append(res)
    plan = (pd.concat(plans, ignore_index=True) if plans
            else pd.DataFrame(columns=["benchmark", "domain", "between_value", "baseline",
                                       "n_tasks", "n_shared", "comparable", "reason",
                                       "n_compared"]))
    if not results:
        return pd.DataFrame(columns=_DIFF_COLUMNS), plan
    res = pd.concat(results, ignore_index=True)
    mdd = floors.set_index(list(GROUP))["mdd"]

    def floor_of(bench: Any, domain: Any, config: Any) -> float:
        hits = mdd[(mdd.index.get_level_values(0) == bench)
                   & _same(mdd.index.get_level_values(1), domain)
                   & (mdd.index.get_level_values(2) == config)]
        return float(hits.iloc[0]) if len(hits) else np.nan

    # NaN when either floor is unknown (np.maximum, unlike max(), is symmetric in NaN)
    res["mdd"] = [float(np.maximum(floor_of(b, d, a), floor_of(b, d, base)))
                  for b, d, a, base in zip(res["benchmark"], res["domain"],
                                           res["configuration"], res["baseline"],
                                           strict=True)]
    known = res["mdd"].notna()
    res["exceeds_noise_floor"] = pd.array(
        [bool(x) if k else pd.NA for x, k in zip(res["delta"].abs() >= res["mdd"], known,
                                                  strict=True)], dtype="boolean")
    flags = (floors.set_index(list(GROUP))["flag"] if "flag" in floors
             else pd.Series("", index=mdd.index))

    def flag_of(bench: Any, domain: Any, config: Any) -> str:
        hits = flags[(flags.index.get_level_values(0) == bench)
                     & _same(flags.index.get_level_values(1), domain)
                     & (flags.index.get_level_values(2) == config)]
        return str(hits.iloc[0]) if len(hits) and isinstance(hits.iloc[0], str) else ""

    notes = []
    for b, d, a, base, k in zip(res["benchmark"], res["domain"], res["configuration"],
                                res["baseline"], known, strict=True):
        both = [flag_of(b, d, a), flag_of(b, d, base)]
        if k:
            notes.append("")
        elif any(_SINGLE_TRIAL_FLAG in f for f in both):
            notes.append(NEEDS_TRIALS)
        else:
            notes.append("; ".join(dict.fromkeys(f for f in both if f)) or "no noise floor")
    res["noise_floor_note"] = notes
    return res[_DIFF_COLUMNS], plan


def single_trial_groups(episodes: pd.DataFrame, *, cluster: str = "scenario_id"
                        ) -> list[str]:
    """The groups (``benchmark / domain / configuration``) that ran one trial per task:
    every test of trial-to-trial noise (within-task variance, flip rate, minimum detectable
    difference, trial plans) :data:`NEEDS_TRIALS` there.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"benchmark": "tau2", "domain": "airline",
    ...                    "configuration": ["a", "a", "b", "b"],
    ...                    "scenario_id": ["t1", "t2", "t1", "t1"]})
    >>> single_trial_groups(ep)
    ['tau2 / airline / a']
    """
    if not len(episodes):
        return []
    most = (episodes.groupby([*GROUP, cluster], dropna=False, sort=True).size()
            .groupby(level=list(range(len(GROUP))), dropna=False, sort=True).max())
    return [" / ".join("?" if pd.isna(v) else str(v) for v in key)
            for key, n in most.items() if n < 2]


def _same(values: pd.Index, value: Any) -> np.ndarray:
    """``values == value``, with a missing value equal to a missing value."""
    if pd.isna(value):
        return np.asarray(pd.isna(values))
    return np.asarray(values == value)
