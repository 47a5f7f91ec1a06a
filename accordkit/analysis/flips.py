"""Flips: the tasks whose pass rate moved between two configurations, and whether trial noise
can explain each move.

Two configurations (values of one column, e.g. two agent models) are compared on the tasks
both ran, per domain. For each task: its pass rate under each (the mean of ``success`` over
its trials), the move ``delta = other - baseline``, and what the action diff says went wrong
in each (side by side).

Whether noise explains a move is a test of each task on its own trials: Fisher's exact test
of the 2 x 2 table (successes and failures under each configuration), which keeps the chance
of calling a same-rate task a flip at most ``alpha`` whatever that task's rate is. The
p-values of all the tasks of a comparison (one ``by`` cell) are then adjusted together
(Holm by default: the chance that a comparison of two equal configurations lists any flip
beyond noise is at most ``alpha``; ``adjust="bh"`` controls the false-discovery rate
instead), with the adjuster of :func:`accordkit.stats.compare`. With few trials the test
cannot reject at all (one trial per task never can; at 5 %, balanced, one task alone takes
four, and under Holm 50 tasks take seven): such a task's ``noise_explains`` is NA, and
:func:`flip_caption` says how many trials it needs rather than a count. The caption also says how many moves noise alone would make: each
task's chance to move when both configurations share its pooled rate, summed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["flips", "flip_pairs", "flip_caption", "FLIP_COLUMNS", "FLIP_ADJUST"]

#: Columns of :func:`flips` after the ``by`` columns and the task column.
FLIP_COLUMNS = ["n_baseline", "n_other", "pass_baseline", "pass_other", "delta", "direction",
                "p_value", "p_adjusted", "noise_explains", "divergence_baseline",
                "divergence_other", "actions_baseline", "actions_other"]

#: The adjustments of a comparison's per-task p-values (as :func:`accordkit.stats.compare`).
FLIP_ADJUST = {"holm": "Holm (family-wise error)", "bh": "Benjamini-Hochberg (false "
               "discovery rate)", "none": "no adjustment"}


@lru_cache(maxsize=4096)
def _fisher(k_b: int, n_b: int, k_o: int, n_o: int) -> float:
    """Two-sided p-value of Fisher's exact test of one task's 2 x 2 table."""
    from scipy import stats

    if n_b == 0 or n_o == 0:
        return float("nan")
    return float(stats.fisher_exact([[k_b, n_b - k_b], [k_o, n_o - k_o]]).pvalue)


def _smallest_p(n_b: int, n_o: int) -> float:
    """The smallest p-value Fisher's test can give with these trial counts."""
    return min(_fisher(n_b, n_b, 0, n_o), _fisher(0, n_b, n_o, n_o))


def _family_factor(adjust: str, n_tasks: int) -> int:
    """How much the adjustment raises the smallest p-value a task can get: Holm's first
    step multiplies it by the number of tasks; BH (all tasks at their best) and no
    adjustment leave it."""
    return max(1, n_tasks) if adjust == "holm" else 1


def trials_needed(alpha: float = 0.05, *, n_tasks: int = 1, adjust: str = "holm") -> int:
    """Fewest trials per task, on each side, for a task to be found beyond noise at
    ``alpha`` among ``n_tasks`` tasks adjusted by ``adjust``.

    Examples
    --------
    >>> trials_needed(0.05), trials_needed(0.01), trials_needed(0.05, n_tasks=50)
    (4, 5, 7)
    """
    factor = _family_factor(adjust, n_tasks)
    n = 1
    while _smallest_p(n, n) * factor > alpha:
        n += 1
    return n


@lru_cache(maxsize=4096)
def _noise_moves(k: int, n_b: int, n_o: int) -> float:
    """Chance that a task moves (unequal observed rates) when both configurations have its
    pooled rate ``k / (n_b + n_o)``."""
    from scipy import stats

    p = k / (n_b + n_o)
    pb = stats.binom.pmf(np.arange(n_b + 1), n_b, p)
    po = stats.binom.pmf(np.arange(n_o + 1), n_o, p)
    same = np.arange(n_b + 1)[:, None] * n_o == np.arange(n_o + 1)[None, :] * n_b
    return float(max(0.0, 1.0 - (pb[:, None] * po[None, :])[same].sum()))


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
          actions: pd.DataFrame | None = None, alpha: float = 0.05, adjust: str = "holm",
          include_unmoved: bool = False) -> pd.DataFrame:
    """The tasks whose pass rate moved between two configurations, each tested against noise.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores: ``episode_id``, ``between``, ``task``, ``success`` and the ``by``
        columns; several trials per task.
    between : str, default "agent_model"
        The column that tells the configurations apart.
    baseline, other : optional
        The two values of ``between`` to compare (default: its two values, sorted; an
        error when it has more than two: :func:`flip_pairs` lists the pairs).
    by : str or list of str, optional
        Compared separately (default ``domain``); each cell is one family of tests.
    task : str, default "scenario_id"
    success : str, default "success"
        A boolean or 0/1 column.
    actions : pandas.DataFrame, optional
        The action diff (:func:`accordkit.action_diff`) of the same episodes: adds what
        went wrong in each configuration, side by side.
    alpha : float, default 0.05
        Level of the noise test.
    adjust : {"holm", "bh", "none"}, default "holm"
        Adjustment of the per-task p-values over the shared tasks of a cell.
    include_unmoved : bool, default False
        Also list the tasks whose pass rate did not move (they are in the family of tests
        either way).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``task``, then :data:`FLIP_COLUMNS`: trials and pass rate under
        each, ``delta``, ``direction`` (``gained``, ``lost`` or ``same``), ``p_value``
        (Fisher's exact test of the task's trials), ``p_adjusted`` (over the cell's shared
        tasks), ``noise_explains`` (``p_adjusted >= alpha``; NA when the task's trial
        counts cannot give an adjusted p-value below ``alpha``: one trial per task never
        can, and under Holm the smallest p-value is multiplied by the number of tasks, so
        50 tasks need 7 trials a side), and from
        the action diff the trials' first divergences (``divergence_*``, e.g.
        ``transfer ×2``) and the actions that went wrong (``actions_*``, e.g.
        ``missing cancel_reservation ×2``). Largest moves first. ``attrs`` holds
        ``baseline``, ``other``, ``alpha``, ``adjust``, ``unshared`` (tasks only one
        configuration ran, left out) and ``cells``: per ``by`` cell, ``n_tasks`` (shared),
        ``n_moved``, ``noise_moves`` (moves noise alone would make: each task's chance to
        move at its pooled rate, summed), ``n_testable`` (tasks whose trials allow a
        rejection after the adjustment), ``n_beyond_noise`` and ``min_trials`` (fewest trials of a side).

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
    >>> flip_caption(out)
    '1 of 2 shared task(s) moved from a to b; telling a move from trial noise over 2 tasks (Holm) needs ≥ 5 trials per task on each side (here 2): not tested'
    """
    from ..stats import adjust_pvalues

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if adjust not in FLIP_ADJUST:
        raise ValueError(f"adjust must be one of {sorted(FLIP_ADJUST)}, got {adjust!r}")
    by_cols = [] if by is None else ([by] if isinstance(by, str) else list(by))
    need = [*by_cols, between, task, success, "episode_id"]
    missing = [c for c in dict.fromkeys(need) if c not in episodes.columns]
    if missing:
        raise ValueError(f"flips: the episodes lack the column(s) {missing}")
    values = sorted(pd.unique(episodes[between].dropna()), key=str)
    if baseline is None and other is None:
        if len(values) != 2:
            raise ValueError(f"flips compares two configurations; {between!r} has "
                             f"{len(values)} ({values[:6]}): give baseline= and other= "
                             "(flip_pairs lists the pairs that share tasks)")
        baseline, other = values
    for name, value in (("baseline", baseline), ("other", other)):
        if value not in set(values):
            raise ValueError(f"{name} {value!r} is not a value of {between!r} ({values[:6]})")
    frame = episodes[episodes[between].isin([baseline, other])].copy()
    frame["_ok"] = pd.to_numeric(frame[success].astype("Float64"), errors="coerce")
    frame = frame[frame["_ok"].notna()]
    per = (frame.groupby([*by_cols, task, between], dropna=False)["_ok"]
           .agg(["mean", "size", "sum"]).reset_index())
    base = per[per[between] == baseline].drop(columns=between)
    oth = per[per[between] == other].drop(columns=between)
    keys = [*by_cols, task]
    both = base.merge(oth, on=keys, suffixes=("_b", "_o"), how="outer", indicator=True)
    unshared = both[both["_merge"] != "both"][keys]
    both = both[both["_merge"] == "both"].drop(columns="_merge").reset_index(drop=True)
    out = pd.DataFrame({c: both[c].to_numpy() for c in keys})
    n_b = both["size_b"].astype(np.int64).to_numpy()
    n_o = both["size_o"].astype(np.int64).to_numpy()
    # successes as whole numbers (a 0/1 column; a fractional one is rounded per trial sum)
    k_b = np.rint(both["sum_b"].to_numpy(dtype=float)).astype(np.int64)
    k_o = np.rint(both["sum_o"].to_numpy(dtype=float)).astype(np.int64)
    out["n_baseline"], out["n_other"] = n_b, n_o
    out["pass_baseline"] = both["mean_b"].to_numpy()
    out["pass_other"] = both["mean_o"].to_numpy()
    out["delta"] = out["pass_other"] - out["pass_baseline"]
    out["direction"] = np.where(out["delta"] > 0, "gained",
                                np.where(out["delta"] < 0, "lost", "same"))
    out["p_value"] = [_fisher(*t) for t in zip(k_b.tolist(), n_b.tolist(), k_o.tolist(),
                                                n_o.tolist(), strict=True)]
    cell_of = (out.groupby(by_cols, dropna=False, sort=False).ngroup().to_numpy()
               if by_cols else np.zeros(len(out), dtype=np.int64))
    family = np.bincount(cell_of)[cell_of] if len(out) else np.zeros(0, dtype=np.int64)
    # a task can be found beyond noise only if its best p-value survives the adjustment
    testable = np.array([_smallest_p(b, o) * _family_factor(adjust, int(m)) <= alpha
                         for b, o, m in zip(n_b.tolist(), n_o.tolist(), family.tolist(),
                                            strict=True)], dtype=bool)
    noise_moves = np.array([_noise_moves(int(kb + ko), int(b), int(o)) for kb, ko, b, o
                            in zip(k_b, k_o, n_b, n_o, strict=True)], dtype=float)
    adjusted = np.full(len(out), np.nan)
    for code in np.unique(cell_of):
        rows = np.flatnonzero(cell_of == code)
        adjusted[rows] = adjust_pvalues(out["p_value"].to_numpy()[rows], adjust)
    out["p_adjusted"] = adjusted
    explains = pd.array(adjusted >= alpha, dtype="boolean")
    explains[~testable] = pd.NA
    out["noise_explains"] = explains
    cells = _cells(out, by_cols, cell_of, testable, noise_moves)
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
    out.attrs.update({"baseline": baseline, "other": other, "between": between,
                      "alpha": alpha, "adjust": adjust, "cells": cells,
                      "unshared": unshared.reset_index(drop=True)})
    return out


def _cells(out: pd.DataFrame, by_cols: list[str], cell_of: np.ndarray, testable: np.ndarray,
           noise_moves: np.ndarray) -> pd.DataFrame:
    """Per ``by`` cell: shared tasks, moves, moves noise would make, testable tasks, flips
    beyond noise."""
    rows = []
    for code in np.unique(cell_of):
        idx = np.flatnonzero(cell_of == code)
        part = out.iloc[idx]
        row = {c: part[c].iloc[0] for c in by_cols}
        beyond = part["noise_explains"].eq(False).sum()
        row.update({"n_tasks": len(idx), "n_moved": int((part["direction"] != "same").sum()),
                    "noise_moves": float(noise_moves[idx].sum()),
                    "n_testable": int(testable[idx].sum()),
                    "n_beyond_noise": int(beyond),
                    "min_trials": int(min(part["n_baseline"].min(), part["n_other"].min()))})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by_cols, "n_tasks", "n_moved", "noise_moves",
                                       "n_testable", "n_beyond_noise", "min_trials"])


def flip_caption(table: pd.DataFrame) -> str:
    """One sentence for a :func:`flips` table: how many shared tasks moved, how many moves
    noise alone would make, and how many are beyond it; when no task has the trials for
    the test, how many it needs instead of a count.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"episode_id": range(16), "domain": "d",
    ...                    "agent_model": ["a"] * 8 + ["b"] * 8,
    ...                    "scenario_id": (["t1"] * 4 + ["t2"] * 4) * 2,
    ...                    "success": [1] * 4 + [0, 1, 0, 1] + [0] * 4 + [0, 1, 0, 1]})
    >>> print(flip_caption(flips(ep)))
    1 of 2 shared task(s) moved from a to b; telling a move from trial noise over 2 tasks (Holm) needs ≥ 5 trials per task on each side (here 4): not tested
    >>> print(flip_caption(flips(ep, adjust="none")))
    1 of 2 shared task(s) moved from a to b; trial noise alone would move about 1.5 (each task at its pooled rate); 1 beyond noise (Fisher's exact test per task, not adjusted for the 2 shared tasks, 5 %)
    """
    cells = table.attrs["cells"]
    base, other = table.attrs["baseline"], table.attrs["other"]
    alpha = table.attrs["alpha"]
    n_tasks, n_moved = int(cells["n_tasks"].sum()), int(cells["n_moved"].sum())
    head = f"{n_moved} of {n_tasks} shared task(s) moved from {base} to {other}"
    if n_tasks == 0:
        return f"{base} and {other} share no task: nothing to compare"
    testable = int(cells["n_testable"].sum())
    adjust = table.attrs["adjust"]
    family = int(cells["n_tasks"].max())
    needed = trials_needed(alpha, n_tasks=family, adjust=adjust)
    over = f" over {family} tasks (Holm)" if adjust == "holm" and family > 1 else ""
    if testable == 0:
        return (f"{head}; telling a move from trial noise{over} needs ≥ {needed} "
                f"trials per task on each side (here {int(cells['min_trials'].min())}): "
                "not tested")
    family_text = (f"not adjusted for the {n_tasks} shared tasks" if adjust == "none"
                   else f"{FLIP_ADJUST[adjust]} over the {n_tasks} shared tasks")
    text = (f"{head}; trial noise alone would move about {cells['noise_moves'].sum():.1f} "
            f"(each task at its pooled rate); {int(cells['n_beyond_noise'].sum())} beyond "
            f"noise (Fisher's exact test per task, {family_text}, {alpha * 100:g} %)")
    if testable < n_tasks:
        text += (f"; {n_tasks - testable} task(s) with too few trials to test "
                 f"(≥ {needed} per side needed)")
    return text


def flip_pairs(episodes: pd.DataFrame, *, between: str = "agent_model", baseline: Any = None,
               pairs: Sequence[Sequence[Any]] | None = None,
               by: str | Sequence[str] | None = "domain",
               task: str = "scenario_id") -> list[tuple[Any, Any]]:
    """The (baseline, other) pairs worth a flips table: every two values of ``between``
    that share a task in some ``by`` cell (the one sorted first as the baseline), or
    ``baseline`` against each value sharing a task with it, or the ``pairs`` named.

    Raises
    ------
    ValueError
        When ``baseline`` or a value of ``pairs`` is not a value of ``between``, listing
        the values there are.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"agent_model": ["a", "b", "c", "c"], "domain": "d",
    ...                    "scenario_id": ["t", "t", "t", "u"]})
    >>> flip_pairs(ep)
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> flip_pairs(ep, baseline="c"), flip_pairs(ep, pairs=[["b", "a"]])
    ([('c', 'a'), ('c', 'b')], [('b', 'a')])
    """
    if between not in episodes.columns:
        return []
    by_cols = [] if by is None else ([by] if isinstance(by, str) else list(by))
    keys = [c for c in by_cols if c in episodes.columns] + [task]
    tasks = {v: set(map(tuple, part[keys].astype(str).drop_duplicates().to_numpy()))
             for v, part in episodes.groupby(between, dropna=True)}
    values = sorted(tasks, key=str)

    def known(value: Any, what: str) -> None:
        if value not in tasks:
            raise ValueError(f"{what} {value!r} is not a value of {between!r}; the values "
                             f"are: {', '.join(map(str, values))}")

    if pairs is not None:
        chosen = []
        for pair in pairs:
            if isinstance(pair, str) or len(pair) != 2:
                raise ValueError(f"pairs: each pair is two values of {between!r}, got "
                                 f"{pair!r}")
            a, b = pair
            known(a, "pairs:")
            known(b, "pairs:")
            chosen.append((a, b))
        return chosen
    if baseline is not None:
        known(baseline, "baseline")
        return [(baseline, v) for v in values if v != baseline and tasks[baseline] & tasks[v]]
    return [(a, b) for i, a in enumerate(values) for b in values[i + 1:]
            if tasks[a] & tasks[b]]
