"""AcCoRD's tables: main, dynamics and cost, with intervals, and the preference score.

Each builder returns the output of :func:`accordkit.summarize` for one table of
:mod:`accordkit.tables.catalogue` (``options`` are its interval options).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..stats import summarize, summarize_tables
from .catalogue import ACCORD_COST, ACCORD_DYNAMICS, ACCORD_MAIN, ACCORD_PREFERENCE

__all__ = ["preference_scores", "accord_main", "accord_dynamics", "accord_cost",
           "accord_main_and_cost", "accord_tables"]


def preference_scores(preferences: pd.DataFrame, *,
                      include_incomplete: bool = False) -> pd.DataFrame:
    """The preference frame with a float ``preference score`` column: the one rule for
    which judgments count.

    ``satisfied`` of completed episodes; preferences of incomplete episodes are left out
    (NaN), or count as unsatisfied (0) with ``include_incomplete=True``; an episode whose
    completion is unknown is always left out.

    Examples
    --------
    >>> p = pd.DataFrame({"satisfied": [True, True, None], "completed": [True, False, True]})
    >>> preference_scores(p)["preference score"].tolist()
    [1.0, nan, nan]
    >>> preference_scores(p, include_incomplete=True)["preference score"].tolist()
    [1.0, 0.0, nan]
    """
    if not isinstance(include_incomplete, bool):
        raise TypeError(f"include_incomplete must be True or False, got {include_incomplete!r}")
    for column in ("satisfied", "completed"):
        if column not in preferences.columns:
            raise ValueError(f"the preferences frame lacks the column {column!r}; pass the "
                             "output of accordkit.score(..., level='preference')")
    satisfied = preferences["satisfied"].to_numpy(dtype=float, na_value=np.nan)
    done = preferences["completed"].to_numpy(dtype=float, na_value=np.nan)
    score = np.where(done == 0.0, 0.0 if include_incomplete else np.nan, satisfied)
    score = np.where(np.isnan(done), np.nan, score)
    return preferences.assign(**{ACCORD_PREFERENCE.column: score})


def accord_main(episodes: pd.DataFrame, *, by: Sequence[str] = ("agent_model", "method"),
                **options: Any) -> pd.DataFrame:
    """AcCoRD Table 3 (:data:`~accordkit.tables.catalogue.ACCORD_MAIN`): completion,
    outcome (over completed episodes), perfect outcome and task score per group.

    Examples
    --------
    >>> ep = pd.DataFrame({"agent_model": "m", "method": "react",
    ...                    "scenario_id": ["s1", "s2", "s3", "s4"],
    ...                    "completed": [True, True, True, False],
    ...                    "outcome_score": [1.0, 0.5, 0.0, None], "perfect_outcome": [1, 0, 0, 0],
    ...                    "task_score": [1.0, 0.5, 0.0, 0.0]})
    >>> t = accord_main(ep, n_resamples=200)
    >>> t.set_index("metric")["estimate"].round(3).to_dict()
    {'task completion rate': 0.75, 'outcome score': 0.5, 'perfect outcome rate': 0.25, 'task score': 0.375}
    """
    return summarize(episodes, list(ACCORD_MAIN), list(by), **options)


def accord_dynamics(preferences: pd.DataFrame, *,
                    by: Sequence[str] = ("agent_model", "method"),
                    include_incomplete: bool = False, **options: Any) -> pd.DataFrame:
    """AcCoRD Table 4: preference scores per dynamic, pooled over (episode, preference).

    Rows follow :data:`~accordkit.tables.catalogue.ACCORD_DYNAMICS` within each group; which
    judgments count is :func:`preference_scores`'s rule.
    """
    prefs = preference_scores(preferences, include_incomplete=include_incomplete)
    out = summarize(prefs, [ACCORD_PREFERENCE], [*by, "dynamic"], **options)
    return _in_dynamic_order(out, by)


def _in_dynamic_order(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Rows of a dynamics table in :data:`ACCORD_DYNAMICS` order within each group."""
    order = {d: i for i, d in enumerate(ACCORD_DYNAMICS)}
    return table.sort_values([*by, "dynamic"], key=lambda s: s.map(order)
                             if s.name == "dynamic" else s,
                             kind="stable").reset_index(drop=True)


def accord_tables(episodes: pd.DataFrame, *, preferences: pd.DataFrame,
                  by: Sequence[str] = ("agent_model", "method"),
                  include_incomplete: bool = False, cluster: str | None = "scenario_id",
                  method: str = "bca", confidence: float = 0.95, n_resamples: int = 10_000,
                  seed: int = 0, share_draws: bool = True) -> dict[str, pd.DataFrame]:
    """Every AcCoRD table of the report from one resampling of the scenarios.

    Table 3 and the interaction cost, pooled and per domain, and Table 4 (preference score
    by dynamic), pooled and per domain, are cuts of the same scenarios: one
    :func:`accordkit.stats.summarize_tables` with ``share_draws=True`` draws their
    resamples once instead of five times (a million episodes: 83,334 scenarios x 10,000
    resamples per draw). The pooled tables are those of :func:`accord_main_and_cost` and
    :func:`accord_dynamics` with ``share_draws=True`` to the last bit (their cells cover
    every scenario); the per-domain tables' intervals are within Monte Carlo error of their
    own draws (docs/statistics.md, "Shared draws"). With ``share_draws=False`` every table
    is its builder's, drawn per cell.

    Parameters
    ----------
    episodes, preferences : pandas.DataFrame
        Episode and preference scores (:func:`accordkit.score`, or a score store).
    by : sequence of str
        The groups of every table (``domain`` is added in front for the per-domain ones).
    include_incomplete : bool
        As in :func:`accord_dynamics`.
    cluster, method, confidence, n_resamples, seed
        As in :func:`accordkit.summarize`.
    share_draws : bool, default True
        As in :func:`accordkit.summarize`; the report shares (True).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``main``, ``cost``, ``main_by_domain``, ``dynamics``, ``dynamics_by_domain``.

    Examples
    --------
    >>> ep = pd.DataFrame({"agent_model": "m", "method": "react", "domain": "shop",
    ...                    "scenario_id": ["s1", "s2", "s3", "s4"], "completed": True,
    ...                    "outcome_score": [1.0, 0.5, 0.0, 0.5],
    ...                    "perfect_outcome": [1, 0, 0, 0], "task_score": [1.0, 0.5, 0.0, 0.5],
    ...                    "n_env_actions": [3, 4, 5, 6], "n_utterances": [2, 2, 3, 4]})
    >>> prefs = pd.DataFrame({"agent_model": "m", "method": "react", "domain": "shop",
    ...                       "scenario_id": ["s1", "s2", "s3", "s4"] * 2,
    ...                       "dynamic": ["hard"] * 4 + ["soft"] * 4,
    ...                       "satisfied": [True, False, True, True, False, True, True, True],
    ...                       "completed": True})
    >>> tables = accord_tables(ep, preferences=prefs, n_resamples=200, method="percentile")
    >>> sorted(tables)
    ['cost', 'dynamics', 'dynamics_by_domain', 'main', 'main_by_domain']
    >>> tables["main"].set_index("metric")["estimate"]["task score"]
    np.float64(0.5)
    """
    by = list(by)
    prefs = preference_scores(preferences, include_incomplete=include_incomplete)
    found = summarize_tables({
        "main": (episodes, list(ACCORD_MAIN), by),
        "cost": (episodes, list(ACCORD_COST), by),
        "main_by_domain": (episodes, list(ACCORD_MAIN), ["domain", *by]),
        "dynamics": (prefs, [ACCORD_PREFERENCE], [*by, "dynamic"]),
        "dynamics_by_domain": (prefs, [ACCORD_PREFERENCE], ["domain", *by, "dynamic"]),
    }, cluster=cluster, method=method, confidence=confidence, n_resamples=n_resamples,
        seed=seed, share_draws=share_draws)
    return {**found, "dynamics": _in_dynamic_order(found["dynamics"], by),
            "dynamics_by_domain": _in_dynamic_order(found["dynamics_by_domain"],
                                                    ["domain", *by])}


def accord_cost(episodes: pd.DataFrame, *, by: Sequence[str] = ("agent_model", "method"),
                **options: Any) -> pd.DataFrame:
    """AcCoRD Table 4, right half (:data:`~accordkit.tables.catalogue.ACCORD_COST`):
    environment actions and agent utterances per episode, mean and median."""
    return summarize(episodes, list(ACCORD_COST), list(by), **options)


def accord_main_and_cost(episodes: pd.DataFrame, *,
                         by: Sequence[str] = ("agent_model", "method"),
                         **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`accord_main` and :func:`accord_cost` from one set of resamples.

    The two tables have the same cells over the same clusters: one
    :func:`accordkit.stats.summarize_tables` computes them as one table of both tables'
    metrics, so each cell draws once for both. The tables are those of the two separate
    calls (equal up to the last bit of an interval end where the cost table's median takes
    the cell's sums in larger blocks; see docs/statistics.md); on 200,000 AcCoRD episodes
    at 10,000 resamples this takes 5.1 s instead of 9.5 s.

    Returns
    -------
    main, cost : pandas.DataFrame
        As :func:`accord_main` and :func:`accord_cost` give them.
    """
    by = list(by)
    tables = summarize_tables({"main": (episodes, list(ACCORD_MAIN), by),
                               "cost": (episodes, list(ACCORD_COST), by)}, **options)
    return tables["main"], tables["cost"]
