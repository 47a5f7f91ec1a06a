"""``accord_table``: the AcCoRD paper's point estimates per group (Tables 3 and 4).

The point-estimate form of the catalogue: the metrics of
:mod:`accordkit.tables.catalogue`, estimated by the statistics engine
(:func:`accordkit.stats.point_estimates`, the estimators of
:func:`accordkit.summarize`) without resampling, so the paper's numbers and the report's
intervals come from one code path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..benchmarks import shown_in_table
from ..stats import point_estimates
from .accord import preference_scores
from .catalogue import (
    ACCORD_COST,
    ACCORD_DYNAMICS,
    ACCORD_MAIN,
    ACCORD_PREFERENCE,
    ACCORD_USER_COST,
    paper_id,
)

__all__ = ["accord_table", "ACCORD_TABLE_METRICS", "AGGREGATIONS", "DYNAMIC_ORDER"]

AGGREGATIONS = ("episode", "scenario", "domain_macro")
#: Table 4 column order (the catalogue's).
DYNAMIC_ORDER = ACCORD_DYNAMICS
_EPISODE_METRICS = (*ACCORD_MAIN, *ACCORD_COST, *ACCORD_USER_COST)
#: Metrics of :func:`accord_table`, in output order.
ACCORD_TABLE_METRICS = (
    *(paper_id(m.name) for m in ACCORD_MAIN),
    *(f"score_{d}" for d in ACCORD_DYNAMICS),
    *(paper_id(m.name) for m in (*ACCORD_COST, *ACCORD_USER_COST)),
)
_RESERVED = ("metric", "estimate", "n_rows", "n_scenarios", "stat", "n_clusters", "n_events",
             "dynamic", ACCORD_PREFERENCE.column)


def _check_by(by: str | Sequence[str]) -> list[str]:
    keys = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(k, str) for k in keys):
        raise TypeError(f"by must be a column name or a sequence of column names, got {by!r}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"by repeats a column: {keys}")
    clash = [k for k in keys if k in _RESERVED]
    if clash:
        raise ValueError(f"by cannot use the output column names {clash}")
    return keys


def _rows(frame: pd.DataFrame, what: str, need: list[str]) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame from accordkit.score, got "
                        f"{type(frame).__name__}")
    missing = [c for c in dict.fromkeys(need) if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} frame lacks the columns {missing}; pass the output of "
                         f"accordkit.score(..., level={what[:-1]!r})")
    if "benchmark" in frame.columns:  # a score frame may mix benchmarks
        frame = frame.loc[frame["benchmark"].isin(shown_in_table(f"{__name__}:accord_table"))]
    return frame.reset_index(drop=True)


def _estimates(ep: pd.DataFrame, pr: pd.DataFrame, keys: list[str],
               unit: list[str]) -> pd.DataFrame:
    """Long estimates (``keys``, ``metric`` id, ``estimate``, ``n_rows``, ``n_scenarios``)."""
    eps = point_estimates(ep, list(_EPISODE_METRICS), keys or None)
    eps["metric"] = eps["metric"].map(paper_id)
    prs = point_estimates(pr, [ACCORD_PREFERENCE], [*keys, "dynamic"])
    prs["metric"] = "score_" + prs["dynamic"].astype(str)
    pooled = pd.concat([eps, prs.drop(columns="dynamic")], ignore_index=True)
    if unit:  # means per unit, then the unweighted mean over units; medians stay pooled
        fine_ep = point_estimates(ep, [m for m in _EPISODE_METRICS if m.kind != "median"],
                                  list(dict.fromkeys([*keys, *unit])))
        fine_ep["metric"] = fine_ep["metric"].map(paper_id)
        fine_pr = point_estimates(pr, [ACCORD_PREFERENCE],
                                  list(dict.fromkeys([*keys, *unit, "dynamic"])))
        fine_pr["metric"] = "score_" + fine_pr["dynamic"].astype(str)
        fine = pd.concat([fine_ep, fine_pr], ignore_index=True)
        group = [*keys, "metric"]
        macro = fine.groupby(group, dropna=False, sort=False)["estimate"].mean().reset_index()
        is_mean = (pooled["stat"] != "median").to_numpy()
        means = pooled.loc[is_mean, group].merge(macro, on=group, how="left")
        pooled.loc[is_mean, "estimate"] = means["estimate"].to_numpy()
    return pooled.rename(columns={"n_clusters": "n_scenarios"}).assign(
        n_rows=lambda f: f["n_events"].astype(np.int64))


def accord_table(episodes: pd.DataFrame, *, preferences: pd.DataFrame,
                 by: str | Sequence[str] = ("agent_model", "method"), agg: str = "episode",
                 include_incomplete: bool = False) -> pd.DataFrame:
    """AcCoRD point estimates per group: Table 3 (completion, outcome, perfect, task) and
    Table 4 (per-dynamic preference scores, env actions and utterances).

    Parameters
    ----------
    episodes : pandas.DataFrame
        ``accordkit.score(ds, level="episode")`` (rows of other benchmarks are ignored).
    preferences : pandas.DataFrame
        ``accordkit.score(ds, level="preference")`` of the same episodes.
    by : str or sequence of str
        Grouping columns, present in both frames (default model x method; ``()`` for one
        overall row).
    agg : {"episode", "scenario", "domain_macro"}
        ``episode``: pooled over episodes (and (episode, preference) pairs for the dynamics);
        ``scenario``: each metric per scenario, then the unweighted mean over scenarios;
        ``domain_macro``: each metric per domain (pooled), then the unweighted mean over
        domains. Medians are always pooled over the group's episodes.
    include_incomplete : bool
        Per-dynamic scores: count the preferences of incomplete episodes as unsatisfied
        instead of leaving them out (the default follows the paper: completed episodes only).

    Returns
    -------
    pandas.DataFrame
        Long format, one row per (group, metric in :data:`ACCORD_TABLE_METRICS`): the ``by``
        columns, ``metric``, ``estimate`` (float; NaN when nothing contributes), ``n_rows``
        (episodes or preference judgments that entered the estimate) and ``n_scenarios``.
        Rates are fractions. Pivot with
        ``t.pivot(index=list(by), columns="metric", values="estimate")``.

        The metrics are the catalogue's (:mod:`accordkit.tables.catalogue`) under
        :func:`~accordkit.tables.catalogue.paper_id` names: ``task_completion_rate`` = mean
        of ``completed``; ``outcome_score`` = mean ``outcome_score`` over completed
        episodes; ``perfect_outcome_rate`` and ``task_score`` over all episodes;
        ``score_<dynamic>`` = mean ``satisfied`` over judged preferences of that dynamic in
        completed episodes (:func:`~accordkit.tables.accord.preference_scores`).

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"agent_model": ["m", "m"], "scenario_id": ["s1", "s2"],
    ...                    "completed": [True, False], "outcome_score": [0.5, float("nan")],
    ...                    "perfect_outcome": [False, False], "task_score": [0.5, 0.0],
    ...                    "n_env_actions": [3, 5], "n_utterances": [1, 2],
    ...                    "n_user_utterances": [2, 2]})
    >>> pr = pd.DataFrame({"agent_model": ["m"], "scenario_id": ["s1"],
    ...                    "dynamic": ["triggered"], "satisfied": [True], "completed": [True]})
    >>> t = accord_table(ep, preferences=pr, by="agent_model")
    >>> t.set_index("metric").loc[["task_completion_rate", "task_score", "score_triggered"],
    ...                           "estimate"].tolist()
    [0.5, 0.25, 1.0]
    """
    keys = _check_by(by)
    if agg not in AGGREGATIONS:
        raise ValueError(f"agg must be one of {AGGREGATIONS}, got {agg!r}")
    if not isinstance(include_incomplete, bool):
        raise TypeError(f"include_incomplete must be True or False, got {include_incomplete!r}")
    unit = {"episode": [], "scenario": ["scenario_id"], "domain_macro": ["domain"]}[agg]
    need_ep = [*keys, "scenario_id", *unit, *(c for m in _EPISODE_METRICS for c in m.columns)]
    need_pr = [*keys, "scenario_id", *unit, "dynamic", "satisfied", "completed"]
    ep = _rows(episodes, "episodes", need_ep)
    pr = preference_scores(_rows(preferences, "preferences", need_pr),
                           include_incomplete=include_incomplete)
    columns = [*keys, "metric", "estimate", "n_rows", "n_scenarios"]
    if not len(ep):
        return pd.DataFrame({**{k: ep[k].iloc[:0] for k in keys},
                             "metric": pd.Series([], dtype=object),
                             "estimate": pd.Series([], dtype=float),
                             "n_rows": pd.Series([], dtype=np.int64),
                             "n_scenarios": pd.Series([], dtype=np.int64)})[columns]
    est = _estimates(ep, pr, keys, unit)
    groups = (ep[keys].drop_duplicates().sort_values(keys).itertuples(index=False, name=None)
              if keys else [()])
    cells = (pd.MultiIndex.from_tuples([(*g, m) for g in groups for m in ACCORD_TABLE_METRICS],
                                       names=[*keys, "metric"]) if keys
             else pd.Index(ACCORD_TABLE_METRICS, name="metric"))
    out = est.set_index([*keys, "metric"])[["estimate", "n_rows", "n_scenarios"]]
    out = out[~out.index.duplicated()].reindex(cells)
    out["n_rows"] = out["n_rows"].fillna(0).astype(np.int64)
    out["n_scenarios"] = out["n_scenarios"].fillna(0).astype(np.int64)
    out["estimate"] = out["estimate"].astype(float)
    out = out.reset_index()[columns]
    out.attrs.update({"agg": agg, "include_incomplete": include_incomplete, "by": tuple(keys)})
    return out
