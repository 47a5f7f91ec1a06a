"""The tables of the ``reliability`` notebook, as pure functions over score frames.

As in the other notebooks, a group is one benchmark × domain × configuration, where the
configuration is the ``configuration`` label of
:func:`accordkit.tables.tau2.with_configuration` (agent model, agent implementation,
user model, user implementation; ``?`` where a column is unknown). Domains are never
pooled. The differences against the noise floor are planned by
:func:`accordkit.tables.comparisons.paired_comparisons`, the rule ``compare_models``
follows: within one benchmark and domain, every pair of configurations that shares tasks,
on the tasks it shares, always paired on the task.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import CATALOG
from ..stats import TaskDiscrimination
from .comparisons import check_names, paired_comparisons
from .tau2 import with_configuration

__all__ = ["GROUP", "COMPARED_WITHIN", "BINARY_METRICS", "NEEDS_TRIALS",
           "single_trial_groups", "reliability_episodes", "chosen_metrics",
           "noise_floor_table", "plan_trials_table", "discrimination_tables",
           "differences_vs_noise"]

#: The columns a noise floor, a plan or a comparison never pools across.
GROUP = ("benchmark", "domain", "configuration")

#: The binary metric of each benchmark when the notebook is given none (the catalogue's
#: ``binary_metric``).
BINARY_METRICS = {b.id: b.binary_metric for b in CATALOG.values()}

#: The groups within which configurations are compared (and differences tested).
COMPARED_WITHIN = ("benchmark", "domain")

#: The columns of :func:`differences_vs_noise` after its ``by`` columns.
_DIFF_COLUMNS = ["metric", "configuration", "baseline", "delta", "ci_low", "ci_high",
                 "p_adjusted", "n_pairs", "mdd", "exceeds_noise_floor", "noise_floor_note"]

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


def _by(by: Sequence[str], builder: str) -> list[str]:
    """``by`` as a list, refused without ``benchmark`` (each benchmark has its metric)."""
    by = [by] if isinstance(by, str) else list(by)
    if "benchmark" not in by:
        raise ValueError(f"{builder} needs 'benchmark' among `by` (each benchmark has its "
                         f"own metric), got {by}")
    return by


def _as_float(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``metric`` as float (a nullable boolean's missing values as NaN), as
    :func:`~accordkit.tables.comparisons.benchmark_comparisons` compares ``success``."""
    if metric in frame and not pd.api.types.is_float_dtype(frame[metric]):
        return frame.assign(**{metric: frame[metric].astype(float)})
    return frame


def noise_floor_table(episodes: pd.DataFrame, *, by: Sequence[str] = GROUP,
                      chosen: Mapping[str, str] | None = None,
                      cluster: str = "scenario_id") -> pd.DataFrame:
    """:func:`accordkit.noise_floor` per benchmark, domain and configuration.

    No resampled interval (the minimum detectable difference is a power calculation), so
    no interval options.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores with the ``by`` columns (:func:`reliability_episodes`).
    by : sequence of str, default :data:`GROUP`
        The groups, ``benchmark`` among them.
    chosen : mapping, optional
        Benchmark to metric; default :func:`chosen_metrics` of ``episodes``.
    cluster : str, default "scenario_id"
        The task column: trials of one task form one cluster.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``metric``, then the columns of :func:`accordkit.noise_floor`.
    """
    from ..stats import noise_floor

    by = _by(by, "noise_floor_table")
    chosen = chosen_metrics(episodes) if chosen is None else chosen
    rest = [c for c in by if c != "benchmark"]
    parts = []
    for bench, part in episodes.groupby("benchmark", sort=True):
        floor = noise_floor(part, metric=chosen[bench], by=rest or None, cluster=cluster)
        parts.append(floor.assign(benchmark=bench, metric=chosen[bench]))
    if not parts:
        return pd.DataFrame(columns=[*by, "metric"])
    floors = pd.concat(parts, ignore_index=True)
    front = [*by, "metric"]
    return floors[front + [c for c in floors.columns if c not in front]]


def plan_trials_table(episodes: pd.DataFrame, *, by: Sequence[str] = GROUP,
                      chosen: Mapping[str, str] | None = None,
                      cluster: str = "scenario_id",
                      effects: Sequence[float] = (0.05, 0.10, 0.20),
                      trials: Sequence[int] = (1, 2, 3, 5, 10),
                      ) -> tuple[pd.DataFrame, list[str]]:
    """:func:`accordkit.plan_trials` per benchmark, domain and configuration.

    Each effect is planned toward 0 for a group already above 50 % success, else toward 1.
    No resampled interval (a plan is a power calculation), so no interval options.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores with the ``by`` columns (:func:`reliability_episodes`).
    by : sequence of str, default :data:`GROUP`
        The groups, ``benchmark`` among them; each is planned on its own.
    chosen : mapping, optional
        Benchmark to metric; default :func:`chosen_metrics` of ``episodes``.
    cluster : str, default "scenario_id"
        The task column.
    effects, trials : sequence
        The differences to detect, and the trials per task to consider.

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

    by = _by(by, "plan_trials_table")
    chosen = chosen_metrics(episodes) if chosen is None else chosen
    plans, notes = [], []
    single = set(single_trial_groups(episodes, by=by, cluster=cluster))
    if single:   # said once, not once per group and effect
        notes.append(f"{len(single)} group(s) ran one trial per task and are not planned: "
                     f"a plan {NEEDS_TRIALS} (the within-task variance): "
                     + ", ".join(sorted(single)))
    for key, cfg in episodes.groupby(by, sort=True, dropna=False):
        if " / ".join("?" if pd.isna(v) else str(v) for v in key) in single:
            continue
        where = " / ".join(map(str, key))
        metric = chosen[key[by.index("benchmark")]]
        above = cfg[metric].astype(float).mean() > 0.5
        for effect in effects:
            effect = -effect if above else effect
            try:
                plan = plan_trials(cfg, effect=effect, metric=metric, cluster=cluster,
                                   trials=list(trials))
            except ValueError as err:  # a ceiling or an unfittable group: say so
                if "cannot fit variance components" in str(err):   # the same for every effect
                    notes.append(f"{where}: {err}")
                    break
                notes.append(f"{where} / effect {effect}: {err}")
                continue
            plans.append(plan.assign(**dict(zip(by, key, strict=True))))
    return (pd.concat(plans, ignore_index=True) if plans else pd.DataFrame()), notes


def discrimination_tables(episodes: pd.DataFrame, *,
                          by: Sequence[str] = COMPARED_WITHIN,
                          chosen: Mapping[str, str] | None = None,
                          cluster: str = "scenario_id",
                          ) -> dict[tuple[Any, ...], TaskDiscrimination | str]:
    """:func:`accordkit.task_discrimination` across the configurations of each benchmark
    and domain.

    No resampled interval, so no interval options.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores with the ``by`` columns and ``configuration``.
    by : sequence of str, default :data:`COMPARED_WITHIN`
        The groups within which configurations are compared, ``benchmark`` among them.
    chosen : mapping, optional
        Benchmark to metric; default :func:`chosen_metrics` of ``episodes``.
    cluster : str, default "scenario_id"
        The task column.

    Returns
    -------
    dict
        The ``by`` values (a tuple; ``(benchmark, domain)`` by default) to a
        :class:`~accordkit.stats.TaskDiscrimination`, or to a string saying why there is
        none (a single configuration).
    """
    from ..stats import task_discrimination

    by = _by(by, "discrimination_tables")
    chosen = chosen_metrics(episodes) if chosen is None else chosen
    out: dict[tuple[Any, ...], TaskDiscrimination | str] = {}
    for key, part in episodes.groupby(by, sort=True, dropna=False):
        if part["configuration"].nunique() < 2:
            out[key] = "one configuration, no discrimination"
            continue
        out[key] = task_discrimination(part, metric=chosen[key[by.index("benchmark")]],
                                       task=cluster, config="configuration")
    return out


def differences_vs_noise(episodes: pd.DataFrame, *, floors: pd.DataFrame,
                         by: Sequence[str] = COMPARED_WITHIN,
                         chosen: Mapping[str, str] | None = None,
                         cluster: str = "scenario_id", baseline: Hashable | None = None,
                         pairs: Sequence[Sequence[Hashable]] | None = None, **options: Any,
                         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired differences against a baseline next to the noise floor.

    The comparisons are those of :func:`~accordkit.tables.comparisons.paired_comparisons`
    within each benchmark and domain (every pair of configurations that shares tasks, on
    the tasks it shares, or the baseline's or named pairs; the plan says which and why
    not), on each benchmark's metric of ``chosen``.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores with a ``configuration`` column (:func:`reliability_episodes`).
    floors : pandas.DataFrame
        :func:`noise_floor_table` of the same episodes, by the ``by`` columns and
        ``configuration``.
    by : sequence of str, default :data:`COMPARED_WITHIN`
        The groups within which configurations are compared, ``benchmark`` among them.
    chosen : mapping, optional
        Benchmark to metric; default :func:`chosen_metrics` of ``episodes``.
    cluster, baseline, pairs, **options
        As in :func:`~accordkit.tables.comparisons.paired_comparisons` (``**options`` are
        the interval options); ``baseline`` and ``pairs`` are checked against every
        benchmark's episodes at once.

    Returns
    -------
    results : pandas.DataFrame
        The ``by`` columns, then :data:`_DIFF_COLUMNS`: each paired difference with
        ``mdd``, the larger of the two configurations' minimum detectable differences in
        that group (benchmark and domain by default), and
        ``exceeds_noise_floor`` (``|delta| >= mdd``; missing, never False, where ``mdd``
        is NaN: the test could not be made) and ``noise_floor_note``, why it is missing
        (:data:`NEEDS_TRIALS` when either configuration ran one trial per task, else the
        noise floor's flags; empty when the test was made).
    plan : pandas.DataFrame
        The comparison plan of every benchmark and domain.
    """
    by = _by(by, "differences_vs_noise")
    chosen = chosen_metrics(episodes) if chosen is None else chosen
    keys = [*by, "configuration"]
    lacking = [c for c in [*keys, "mdd"] if c not in floors.columns]
    if lacking:
        raise ValueError(f"differences_vs_noise: floors lack the columns {lacking}; pass "
                         f"noise_floor_table(episodes, by={keys})")
    check_names(episodes, baseline=baseline, pairs=pairs, between="configuration")
    results, plans = [], []
    for bench, part in episodes.groupby("benchmark", sort=True):
        metric = chosen[bench]
        res, plan = paired_comparisons(_as_float(part, metric), metrics=[metric], by=by,
                                       between="configuration", cluster=cluster,
                                       baseline=baseline, pairs=pairs, check=False,
                                       **options)
        plans.append(plan)
        if len(res):
            results.append(res)
    plan = (pd.concat(plans, ignore_index=True) if plans
            else pd.DataFrame(columns=[*by, "between_value", "baseline", "n_tasks",
                                       "n_shared", "comparable", "reason", "n_compared"]))
    if not results:
        return pd.DataFrame(columns=[*by, *_DIFF_COLUMNS]), plan
    res = pd.concat(results, ignore_index=True)
    mdd = floors.set_index(keys)["mdd"]
    groups = list(zip(*(res[c] for c in by), strict=True))

    def floor_of(group: tuple[Any, ...], config: Any) -> float:
        hit = _at(mdd, (*group, config))
        return np.nan if hit is None else float(hit)

    # NaN when either floor is unknown (np.maximum, unlike max(), is symmetric in NaN)
    res["mdd"] = [float(np.maximum(floor_of(g, a), floor_of(g, base)))
                  for g, a, base in zip(groups, res["configuration"], res["baseline"],
                                        strict=True)]
    known = res["mdd"].notna()
    res["exceeds_noise_floor"] = pd.array(
        [bool(x) if k else pd.NA for x, k in zip(res["delta"].abs() >= res["mdd"], known,
                                                  strict=True)], dtype="boolean")
    flags = (floors.set_index(keys)["flag"] if "flag" in floors
             else pd.Series("", index=mdd.index))

    def flag_of(group: tuple[Any, ...], config: Any) -> str:
        hit = _at(flags, (*group, config))
        return hit if isinstance(hit, str) else ""

    notes = []
    for g, a, base, k in zip(groups, res["configuration"], res["baseline"], known,
                             strict=True):
        both = [flag_of(g, a), flag_of(g, base)]
        if k:
            notes.append("")
        elif any(_SINGLE_TRIAL_FLAG in f for f in both):
            notes.append(NEEDS_TRIALS)
        else:
            notes.append("; ".join(dict.fromkeys(f for f in both if f)) or "no noise floor")
    res["noise_floor_note"] = notes
    return res[[*by, *_DIFF_COLUMNS]], plan


def single_trial_groups(episodes: pd.DataFrame, *, by: Sequence[str] = GROUP,
                        cluster: str = "scenario_id") -> list[str]:
    """The groups (``benchmark / domain / configuration``, the ``by`` values) that ran one
    trial per task:
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
    by = list(by)
    most = (episodes.groupby([*by, cluster], dropna=False, sort=True).size()
            .groupby(level=list(range(len(by))), dropna=False, sort=True).max())
    return [" / ".join("?" if pd.isna(v) else str(v) for v in key)
            for key, n in most.items() if n < 2]


def _at(series: pd.Series, key: tuple[Any, ...]) -> Any:
    """The first value of ``series`` at ``key`` (a missing key part matching a missing
    index value), or None where there is none."""
    mask = np.ones(len(series), dtype=bool)
    for level, value in enumerate(key):
        mask &= _same(series.index.get_level_values(level), value)
    hits = series[mask]
    return hits.iloc[0] if len(hits) else None


def _same(values: pd.Index, value: Any) -> np.ndarray:
    """``values == value``, with a missing value equal to a missing value."""
    if pd.isna(value):
        return np.asarray(pd.isna(values))
    return np.asarray(values == value)
