"""Flips: the tasks whose pass rate moved between two configurations, and whether trial noise
can explain each move.

Two configurations (values of one column, e.g. two agent models) are compared on the tasks
both ran, per domain. For each task: its pass rate under each (the mean of ``success`` over
its trials), the move ``delta = other - baseline``, and what the action diff says went wrong
in each (side by side). Whether noise explains a move comes from the trial-to-trial
variance of :func:`accordkit.noise_floor` (the within-task variance of each configuration,
pooled over its tasks): with ``n_b`` and ``n_o`` trials, a task's move has the noise standard
error ``noise_se = sqrt(var_b / n_b + var_o / n_o)``, and ``noise_explains`` is true when
``|delta| <= z(1 - alpha / 2) * noise_se`` (trials that differ only by chance move that far
at least ``1 - alpha`` of the time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["flips", "flip_pairs", "FLIP_COLUMNS"]

#: Columns of :func:`flips` after the ``by`` columns and the task column.
FLIP_COLUMNS = ["n_baseline", "n_other", "pass_baseline", "pass_other", "delta", "direction",
                "noise_se", "noise_explains", "divergence_baseline", "divergence_other",
                "actions_baseline", "actions_other"]


def _issues(actions: pd.DataFrame) -> pd.Series:
    """Per (config, task): the action diff's problems, as short text (most frequent first)."""
    bad = actions[actions["status"] != "matched"]
    if bad.empty:
        return pd.Series(dtype=object)
    counts = bad.groupby(["_config", "_task", "status", "name"], dropna=False).size()
    counts = counts.rename("n").reset_index().sort_values(
        ["_config", "_task", "n", "status", "name"], ascending=[True, True, False, True, True])
    text = counts["status"] + " " + counts["name"].astype(str) + " ×" + counts["n"].astype(str)
    return text.groupby([counts["_config"], counts["_task"]]).agg("; ".join)


def _divergences(actions: pd.DataFrame) -> pd.Series:
    """Per (config, task): how the trials first left the path, e.g. ``transfer 2/4``."""
    first = actions.drop_duplicates("episode_id")
    reasons = first.dropna(subset=["divergence_reason"])
    if reasons.empty:
        return pd.Series(dtype=object)
    counts = reasons.groupby(["_config", "_task", "divergence_reason"]).size()
    counts = counts.rename("n").reset_index().sort_values(
        ["_config", "_task", "n", "divergence_reason"], ascending=[True, True, False, True])
    text = counts["divergence_reason"] + " ×" + counts["n"].astype(str)
    return text.groupby([counts["_config"], counts["_task"]]).agg(", ".join)


def flips(episodes: pd.DataFrame, *, between: str = "agent_model", baseline: Any = None,
          other: Any = None, by: str | Sequence[str] | None = "domain",
          task: str = "scenario_id", success: str = "success",
          actions: pd.DataFrame | None = None, alpha: float = 0.05,
          include_unmoved: bool = False) -> pd.DataFrame:
    """The tasks whose pass rate moved between two configurations, with the noise floor.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores: ``episode_id``, ``between``, ``task``, ``success`` and the ``by``
        columns; several trials per task.
    between : str, default "agent_model"
        The column that tells the configurations apart.
    baseline, other : optional
        The two values of ``between`` to compare (default: its two values, sorted; an
        error when it has more than two).
    by : str or list of str, optional
        Compared separately (default ``domain``).
    task : str, default "scenario_id"
    success : str, default "success"
        A boolean or 0/1 column.
    actions : pandas.DataFrame, optional
        The action diff (:func:`accordkit.action_diff`) of the same episodes: adds what
        went wrong in each configuration, side by side.
    alpha : float, default 0.05
        Level of the noise test.
    include_unmoved : bool, default False
        Also list the tasks whose pass rate did not move.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``task``, then :data:`FLIP_COLUMNS`: trials and pass rate under
        each, ``delta``, ``direction`` (``gained``, ``lost`` or ``same``), ``noise_se``,
        ``noise_explains`` (NA when a configuration has one trial per task: no trial noise
        to measure), and from the action diff the trials' first divergences
        (``divergence_*``, e.g. ``transfer ×2``) and the actions that went wrong
        (``actions_*``, e.g. ``missing cancel_reservation ×2``). Largest moves first.
        ``attrs`` holds ``baseline``, ``other``, ``noise`` (the
        :func:`accordkit.noise_floor` table used), ``unshared`` (tasks only one
        configuration ran, left out) and ``z``.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"episode_id": [f"e{i}" for i in range(8)], "domain": "d",
    ...                    "agent_model": ["a"] * 4 + ["b"] * 4,
    ...                    "scenario_id": ["t1", "t1", "t2", "t2"] * 2,
    ...                    "success": [1, 1, 0, 1, 0, 0, 0, 1]})
    >>> out = flips(ep)
    >>> out[["scenario_id", "pass_baseline", "pass_other", "delta", "direction"]]
      scenario_id  pass_baseline  pass_other  delta direction
    0          t1            1.0         0.0   -1.0      lost
    """
    from scipy import stats

    from ..stats import noise_floor

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    by_cols = [] if by is None else ([by] if isinstance(by, str) else list(by))
    need = [*by_cols, between, task, success, "episode_id"]
    missing = [c for c in dict.fromkeys(need) if c not in episodes.columns]
    if missing:
        raise ValueError(f"flips: the episodes lack the column(s) {missing}")
    values = sorted(pd.unique(episodes[between].dropna()), key=str)
    if baseline is None and other is None:
        if len(values) != 2:
            raise ValueError(f"flips compares two configurations; {between!r} has "
                             f"{len(values)} ({values[:6]}): give baseline= and other=")
        baseline, other = values
    for name, value in (("baseline", baseline), ("other", other)):
        if value not in set(values):
            raise ValueError(f"{name} {value!r} is not a value of {between!r} ({values[:6]})")
    frame = episodes[episodes[between].isin([baseline, other])].copy()
    frame["_ok"] = pd.to_numeric(frame[success].astype("Float64"), errors="coerce")
    frame = frame[frame["_ok"].notna()]
    per = (frame.groupby([*by_cols, task, between], dropna=False)["_ok"]
           .agg(["mean", "size"]).reset_index())
    base = per[per[between] == baseline].drop(columns=between)
    oth = per[per[between] == other].drop(columns=between)
    keys = [*by_cols, task]
    both = base.merge(oth, on=keys, suffixes=("_b", "_o"), how="outer", indicator=True)
    unshared = both[both["_merge"] != "both"][keys]
    both = both[both["_merge"] == "both"].drop(columns="_merge")
    # trial-to-trial variance of each configuration (per by-cell) from the noise floor
    noise = noise_floor(frame.assign(_ok=frame["_ok"].astype(float)), metric="_ok",
                        by=[*by_cols, between], cluster=task)
    var = noise.set_index([*by_cols, between])["var_within"]

    def var_of(row: pd.Series, config: Any) -> float:
        key = (*[row[c] for c in by_cols], config) if by_cols else config
        try:
            value = var.loc[key]
        except KeyError:
            return np.nan
        return float(value.iloc[0]) if isinstance(value, pd.Series) else float(value)

    z = float(stats.norm.ppf(1 - alpha / 2))
    out = pd.DataFrame({c: both[c].to_numpy() for c in keys})
    out["n_baseline"] = both["size_b"].astype(np.int64).to_numpy()
    out["n_other"] = both["size_o"].astype(np.int64).to_numpy()
    out["pass_baseline"] = both["mean_b"].to_numpy()
    out["pass_other"] = both["mean_o"].to_numpy()
    out["delta"] = out["pass_other"] - out["pass_baseline"]
    out["direction"] = np.where(out["delta"] > 0, "gained",
                                np.where(out["delta"] < 0, "lost", "same"))
    vb = np.array([var_of(r, baseline) for _, r in both.iterrows()], dtype=float)
    vo = np.array([var_of(r, other) for _, r in both.iterrows()], dtype=float)
    out["noise_se"] = np.sqrt(vb / out["n_baseline"] + vo / out["n_other"])
    known = np.isfinite(out["noise_se"].to_numpy())
    explains = np.abs(out["delta"].to_numpy()) <= z * out["noise_se"].to_numpy() + 1e-12
    out["noise_explains"] = pd.array(np.where(known, explains, False), dtype="boolean")
    out.loc[~known, "noise_explains"] = pd.NA
    for side in ("baseline", "other"):
        out[f"divergence_{side}"] = None
        out[f"actions_{side}"] = None
    if actions is not None and len(actions):
        ids = frame[["episode_id", between, task]].rename(columns={between: "_config",
                                                                    task: "_task"})
        act = actions.drop(columns=[c for c in ("_config", "_task") if c in actions],
                           errors="ignore").merge(ids, on="episode_id", how="inner")
        issues, divs = _issues(act), _divergences(act)
        for side, config in (("baseline", baseline), ("other", other)):
            out[f"actions_{side}"] = [issues.get((config, t)) for t in out[task]]
            out[f"divergence_{side}"] = [divs.get((config, t)) for t in out[task]]
    if not include_unmoved:
        out = out[out["direction"] != "same"]
    out = out.assign(_size=out["delta"].abs()).sort_values(
        ["_size", *keys], ascending=[False, *[True] * len(keys)], kind="stable")
    out = out.drop(columns="_size").reset_index(drop=True)[[*keys, *FLIP_COLUMNS]]
    out.attrs.update({"baseline": baseline, "other": other, "between": between, "z": z,
                      "noise": noise, "unshared": unshared.reset_index(drop=True)})
    return out


def flip_pairs(episodes: pd.DataFrame, *, between: str = "agent_model", baseline: Any = None,
               by: str | Sequence[str] | None = "domain") -> list[tuple[Any, Any]]:
    """The (baseline, other) pairs worth a flips table: ``baseline`` against every other
    value of ``between`` that shares a task with it in some ``by`` cell; without a
    baseline, the first two values (sorted) that share tasks.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"agent_model": ["a", "b", "c", "c"], "domain": "d",
    ...                    "scenario_id": ["t", "t", "t", "u"]})
    >>> flip_pairs(ep), flip_pairs(ep, baseline="c")
    ([('a', 'b')], [('c', 'a'), ('c', 'b')])
    """
    if between not in episodes.columns:
        return []
    by_cols = [] if by is None else ([by] if isinstance(by, str) else list(by))
    keys = [c for c in by_cols if c in episodes.columns] + ["scenario_id"]
    tasks = {v: set(map(tuple, part[keys].astype(str).to_numpy()))
             for v, part in episodes.groupby(between, dropna=True)}
    values = sorted(tasks, key=str)
    if baseline is not None:
        return [(baseline, v) for v in values if v != baseline and baseline in tasks
                and tasks[baseline] & tasks[v]]
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            if tasks[a] & tasks[b]:
                return [(a, b)]
    return []
