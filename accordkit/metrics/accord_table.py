"""``accord_table``: the AcCoRD paper's point estimates per group (Tables 3 and 4).

Takes the tidy frames of :func:`accordkit.score` (``level="episode"`` and
``level="preference"``) and returns one row per (group, metric). Confidence intervals are
the statistics layer's job (:func:`accordkit.summarize`); this gives the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["accord_table", "ACCORD_TABLE_METRICS", "AGGREGATIONS", "DYNAMIC_ORDER"]

AGGREGATIONS = ("episode", "scenario", "domain_macro")
#: Table 4 column order; ``stated`` (accordkit's label for up-front preferences) last.
DYNAMIC_ORDER = ("hard_underspec", "soft_underspec", "unachievable", "triggered", "stated")
#: Metrics of :func:`accord_table`, in output order.
ACCORD_TABLE_METRICS = (
    "task_completion_rate", "outcome_score", "perfect_outcome_rate", "task_score",
    *(f"score_{d}" for d in DYNAMIC_ORDER),
    "env_actions_mean", "env_actions_median", "utterances_mean", "utterances_median",
    "user_utterances_mean", "user_utterances_median",
)
_EPISODE_VALUES = {  # metric -> episode-frame column
    "task_completion_rate": "completed",
    "outcome_score": "outcome_score",
    "perfect_outcome_rate": "perfect_outcome",
    "task_score": "task_score",
    "env_actions_mean": "n_env_actions",
    "env_actions_median": "n_env_actions",
    "utterances_mean": "n_utterances",
    "utterances_median": "n_utterances",
    "user_utterances_mean": "n_user_utterances",
    "user_utterances_median": "n_user_utterances",
}
_RESERVED = ("metric", "estimate", "n_rows", "n_scenarios", "_value", "_median")


def _floats(col: pd.Series) -> np.ndarray:
    if isinstance(col.dtype, pd.BooleanDtype) or col.dtype == bool:
        col = col.astype("Float64")
    return pd.to_numeric(col, errors="raise").to_numpy(dtype=float, na_value=np.nan)


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
        frame = frame.loc[frame["benchmark"] == "accord"]
    return frame


def _long_values(ep: pd.DataFrame, pr: pd.DataFrame, keys: list[str],
                 include_incomplete: bool) -> pd.DataFrame:
    """One row per (metric, contributing unit) with a float ``_value`` (NaN = left out)."""
    parts = []
    for metric in ACCORD_TABLE_METRICS:
        if metric in _EPISODE_VALUES:
            vals = _floats(ep[_EPISODE_VALUES[metric]])
            part = ep[keys].copy()
        else:
            dyn = metric.removeprefix("score_")
            sel = (pr["dynamic"] == dyn).to_numpy(dtype=bool, na_value=False)
            sub = pr.loc[sel]
            vals = _floats(sub["satisfied"])
            done = _floats(sub["completed"])
            if include_incomplete:
                vals = np.where(done == 0.0, 0.0, vals)  # incomplete episodes count as 0
            vals = np.where(np.isnan(done) | ((done == 0.0) & (not include_incomplete)),
                            np.nan, vals)
            part = sub[keys].copy()
        part["metric"] = metric
        part["_value"] = vals
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    return out.loc[~np.isnan(out["_value"].to_numpy())]


def accord_table(episodes: pd.DataFrame, preferences: pd.DataFrame, *,
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

        ``task_completion_rate`` = mean of ``completed``; ``outcome_score`` = mean
        ``outcome_score`` over completed episodes; ``perfect_outcome_rate`` = mean of
        ``perfect_outcome`` over all episodes; ``task_score`` = mean ``task_score`` over all
        episodes; ``score_<dynamic>`` = mean ``satisfied`` over judged preferences of that
        dynamic in completed episodes.

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
    >>> t = accord_table(ep, pr, by="agent_model")
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
    need_ep = [*keys, "scenario_id", *unit, *dict.fromkeys(_EPISODE_VALUES.values())]
    need_pr = [*keys, "scenario_id", *unit, "dynamic", "satisfied", "completed"]
    ep = _rows(episodes, "episodes", need_ep)
    pr = _rows(preferences, "preferences", need_pr)
    cols = list(dict.fromkeys([*keys, "scenario_id", *unit]))
    group = keys or ["_all"]
    if not keys:
        ep, pr = ep.assign(_all=0), pr.assign(_all=0)
        cols.append("_all")
    vals = _long_values(ep, pr, cols, include_incomplete)
    gkeys = [*group, "metric"]
    is_median = vals["metric"].str.endswith("_median").to_numpy()
    means = vals.loc[~is_median]
    if unit:
        fine = list(dict.fromkeys([*gkeys, *unit]))
        means = means.groupby(fine, dropna=False, sort=False)["_value"].mean().reset_index()
    est = pd.concat([
        means.groupby(gkeys, dropna=False, sort=False)["_value"].mean(),
        vals.loc[is_median].groupby(gkeys, dropna=False, sort=False)["_value"].median(),
    ]).rename("estimate")
    sizes = vals.groupby(gkeys, dropna=False, sort=False).agg(
        n_rows=("_value", "size"), n_scenarios=("scenario_id", "nunique"))
    groups = ep[group].drop_duplicates().sort_values(group).itertuples(index=False, name=None)
    cells = [(*g, m) for g in groups for m in ACCORD_TABLE_METRICS]
    if not cells:
        return pd.DataFrame({**{k: ep[k].iloc[:0] for k in keys},
                             "metric": pd.Series([], dtype=str),
                             "estimate": pd.Series([], dtype=float),
                             "n_rows": pd.Series([], dtype=np.int64),
                             "n_scenarios": pd.Series([], dtype=np.int64)})
    full = pd.MultiIndex.from_tuples(cells, names=gkeys)
    out = pd.concat([est, sizes], axis=1).reindex(full)
    out["n_rows"] = out["n_rows"].fillna(0).astype(np.int64)
    out["n_scenarios"] = out["n_scenarios"].fillna(0).astype(np.int64)
    out["estimate"] = out["estimate"].astype(float)
    out = out.reset_index()
    if not keys:
        out = out.drop(columns="_all")
    out.attrs.update({"agg": agg, "include_incomplete": include_incomplete, "by": tuple(keys)})
    return out[[*keys, "metric", "estimate", "n_rows", "n_scenarios"]]
