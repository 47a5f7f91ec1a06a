"""The tables of the reports: catalogue metrics summarised with intervals.

Each builder takes tidy score frames (:func:`accordkit.score`) and returns the output of
:func:`accordkit.summarize` for one table of :mod:`accordkit.tables.catalogue`; notebooks
only choose parameters and display. ``options`` are :func:`accordkit.summarize`'s
(``cluster``, ``method``, ``confidence``, ``n_resamples``, ``seed``, ``strata``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import ids as benchmark_ids
from ..metrics.tue import tue_points
from ..stats import summarize, summarize_tables
from .catalogue import (
    ACCORD_COST,
    ACCORD_DYNAMICS,
    ACCORD_MAIN,
    ACCORD_PREFERENCE,
    GOALSHIFT_GSRT,
    GOALSHIFT_MAIN,
)

__all__ = [
    "bootstrap_options",
    "select",
    "preference_scores",
    "with_tue_points",
    "accord_main",
    "accord_dynamics",
    "accord_cost",
    "accord_main_and_cost",
    "accord_tables",
    "summarize_together",
    "goalshift_main",
    "goalshift_gsrt",
    "failure_flags",
    "FAILURES",
]


def bootstrap_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`accordkit.summarize` options from notebook parameters.

    ``method`` is read from ``method`` or, as the notebooks name it, ``ci_method``.

    Examples
    --------
    >>> bootstrap_options({"ci_method": "percentile", "n_resamples": 500})["method"]
    'percentile'
    """
    return {
        "cluster": params.get("cluster", "scenario_id"),
        "method": params.get("method", params.get("ci_method", "bca")),
        "confidence": params.get("confidence", 0.95),
        "n_resamples": int(params.get("n_resamples", 10_000)),
        "seed": int(params.get("seed", 0)),
    }


def select(frame: pd.DataFrame, *, models: Sequence[str] | None = None,
           domains: Sequence[str] | None = None,
           benchmarks: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of a score frame restricted to some agent models, domains or benchmarks.

    Examples
    --------
    >>> f = pd.DataFrame({"agent_model": ["a", "b"], "domain": ["x", "x"],
    ...                   "benchmark": ["accord", "accord"]})
    >>> select(f, models=["b"])["agent_model"].tolist()
    ['b']
    """
    keep = pd.Series(True, index=frame.index)
    for column, values in (("agent_model", models), ("domain", domains),
                           ("benchmark", benchmarks)):
        if values:   # one name given as text is that name, not its letters
            keep &= frame[column].isin([values] if isinstance(values, str) else list(values))
    return frame[keep].reset_index(drop=True)


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


def with_tue_points(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episode frame with ``tue_points`` (weighted correct and valid calls), so that
    TUE of a group is a ratio of sums over its calls."""
    correct = episodes["n_correct_calls"].astype("Float64")
    valid = episodes["n_valid_param_calls"].astype("Float64")
    return episodes.assign(tue_points=tue_points(correct, valid).astype(float))


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


def accord_tables(episodes: pd.DataFrame, preferences: pd.DataFrame, *,
                  by: Sequence[str] = ("agent_model", "method"),
                  include_incomplete: bool = False, cluster: str | None = "scenario_id",
                  method: str = "bca", confidence: float = 0.95, n_resamples: int = 10_000,
                  seed: int = 0, share_draws: bool = True) -> dict[str, pd.DataFrame]:
    """Every AcCoRD table of the report from one resampling of the scenarios.

    Table 3 and the interaction cost, pooled and per domain, and Table 4 (preference score
    by dynamic), pooled and per domain, are cuts of the same scenarios: one
    :func:`accordkit.stats.summarize_tables` draws their resamples once instead of five
    times (a million episodes: 83,334 scenarios x 10,000 resamples per draw). The pooled
    tables are those of :func:`accord_main_and_cost` and :func:`accord_dynamics` with
    ``share_draws=True`` to the last bit (their cells cover every scenario); the per-domain
    tables' intervals are within Monte Carlo error of their own draws (docs/statistics.md,
    "Shared draws").

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
        Must be True (accepted so that ``summarize`` options can be passed as they are).

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
    >>> tables = accord_tables(ep, prefs, n_resamples=200, method="percentile")
    >>> sorted(tables)
    ['cost', 'dynamics', 'dynamics_by_domain', 'main', 'main_by_domain']
    >>> tables["main"].set_index("metric")["estimate"]["task score"]
    np.float64(0.5)
    """
    if share_draws is not True:
        raise ValueError("accord_tables always shares its draws (share_draws=True); call "
                         "accord_main, accord_cost and accord_dynamics for per-cell draws")
    by = list(by)
    options = {"cluster": cluster, "method": method, "confidence": confidence,
               "n_resamples": n_resamples, "seed": seed}
    prefs = preference_scores(preferences, include_incomplete=include_incomplete)
    every = [*ACCORD_MAIN, *ACCORD_COST]
    found = summarize_tables({
        "main_cost": (episodes, every, by),
        "main_by_domain": (episodes, list(ACCORD_MAIN), ["domain", *by]),
        "dynamics": (prefs, [ACCORD_PREFERENCE], [*by, "dynamic"]),
        "dynamics_by_domain": (prefs, [ACCORD_PREFERENCE], ["domain", *by, "dynamic"]),
    }, **options)
    return {
        **_split_by_metrics(found["main_cost"], {"main": ACCORD_MAIN, "cost": ACCORD_COST}),
        "main_by_domain": found["main_by_domain"],
        "dynamics": _in_dynamic_order(found["dynamics"], by),
        "dynamics_by_domain": _in_dynamic_order(found["dynamics_by_domain"], ["domain", *by]),
    }


def accord_cost(episodes: pd.DataFrame, *, by: Sequence[str] = ("agent_model", "method"),
                **options: Any) -> pd.DataFrame:
    """AcCoRD Table 4, right half (:data:`~accordkit.tables.catalogue.ACCORD_COST`):
    environment actions and agent utterances per episode, mean and median."""
    return summarize(episodes, list(ACCORD_COST), list(by), **options)


def accord_main_and_cost(episodes: pd.DataFrame, *,
                         by: Sequence[str] = ("agent_model", "method"),
                         **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`accord_main` and :func:`accord_cost` from one set of resamples.

    The two tables have the same cells over the same clusters, and a cell's resamples are
    seeded from its key alone, so both draw the same resamples: one
    :func:`accordkit.summarize` over the metrics of both draws them once. The tables are
    those of the two separate calls (equal up to the last bit of an interval end where the
    cost table's median takes the cell's sums in larger blocks; see docs/statistics.md);
    on 200,000 AcCoRD episodes at 10,000 resamples this takes 5.1 s instead of 9.5 s.

    Returns
    -------
    main, cost : pandas.DataFrame
        As :func:`accord_main` and :func:`accord_cost` give them.
    """
    tables = summarize_together(episodes, {"main": ACCORD_MAIN, "cost": ACCORD_COST},
                                by=by, **options)
    return tables["main"], tables["cost"]


def summarize_together(frame: pd.DataFrame, tables: Mapping[str, Sequence[Any]], *,
                       by: Sequence[str], **options: Any) -> dict[str, pd.DataFrame]:
    """Several :func:`accordkit.summarize` tables of ``frame`` with the same cells, from one
    set of resamples.

    A cell's resamples are seeded from its key alone, whatever the metrics: one summary of
    every table's metrics draws them once, and its rows, split back by metric, are the
    tables the separate calls give.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows every table summarises.
    tables : mapping of str to sequence of Metric
        Each table's metrics (names unique across the tables).
    by, **options
        As in :func:`accordkit.summarize`.

    Returns
    -------
    dict of str to pandas.DataFrame
        Each table, by its key in ``tables``.
    """
    every = [m for metrics in tables.values() for m in metrics]
    return _split_by_metrics(summarize(frame, every, list(by), **options), tables)


def _split_by_metrics(summary: pd.DataFrame,
                      tables: Mapping[str, Sequence[Any]]) -> dict[str, pd.DataFrame]:
    """The rows of one summary of several tables' metrics, split back into those tables."""
    return {name: summary[summary["metric"].isin([m.name for m in metrics]).to_numpy()]
            .reset_index(drop=True) for name, metrics in tables.items()}


def goalshift_main(episodes: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   **options: Any) -> pd.DataFrame:
    """Goal-shift main table (:data:`~accordkit.tables.catalogue.GOALSHIFT_MAIN`): TSR and
    its channels, TUE, T, P, TCRR and recovery rate.

    T, P, TUE, TCRR and recovery are ratios of sums over the group's episodes (the
    file-level definitions), not means of per-episode ratios.
    """
    return summarize(with_tue_points(episodes), list(GOALSHIFT_MAIN), list(by), **options)


#: Labels of the Kaplan–Meier GSRT rows, per recovery event.
GSRT_KM_LABELS = {"ack": "GSRT ack (KM median)", "tool": "GSRT tool (KM median)",
                  "outcome": "GSRT outcome (KM median)"}


def goalshift_gsrt(shifts: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   median: str = "km", **options: Any) -> pd.DataFrame:
    """Medians of the per-shift recovery times (messages after the shift).

    Parameters
    ----------
    shifts : DataFrame
        ``ak.score(ds, level="shift")``.
    by : list of str
        Grouping columns.
    median : {"km", "observed"}, default "km"
        ``"km"``: the Kaplan–Meier median, which counts a shift whose event never came as
        right-censored at the messages left after it (:func:`accordkit.km_medians`);
        ``"observed"``: the median over the shifts whose event was observed
        (:data:`~accordkit.tables.catalogue.GOALSHIFT_GSRT`), which leaves out the slowest
        recoveries and so reads too fast when many are censored.
    **options
        Interval options of :func:`accordkit.summarize`.
    """
    if median == "observed":
        return summarize(shifts, list(GOALSHIFT_GSRT), list(by), **options)
    if median != "km":
        raise ValueError(f"median must be 'km' or 'observed', got {median!r}")
    from ..stats.survival import km_medians

    res = km_medians(shifts, by=list(by) or None, observed_only=False, **options)
    res["metric"] = res["event"].map(GSRT_KM_LABELS)
    return res.drop(columns="event")


#: Failure types for error analysis: name -> description.
FAILURES = {
    "not_completed": "AcCoRD episode ended without a purchase / all bookings",
    "unsatisfied_triggered": "a triggered preference was judged unsatisfied",
    "unrecovered_shift": "a goal shift was never acknowledged (or handed to a human)",
    "redundant_calls": "at least one redundant tool call",
    "transfer": "the agent handed a goal shift to a human",
}


def failure_flags(episodes: pd.DataFrame, preferences: pd.DataFrame | None = None,
                  shifts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per episode, one boolean column per failure type in :data:`FAILURES`.

    A flag is False (not missing) when the failure cannot occur for the episode's benchmark.
    """
    out = episodes[["episode_id"]].copy()
    ids = out["episode_id"]

    def col(name: str) -> pd.Series:
        if name in episodes:
            return episodes[name]
        return pd.Series(np.nan, index=episodes.index)

    not_completed = (col("completed").astype("boolean") == False).fillna(False)  # noqa: E712
    if "benchmark" in episodes:  # an AcCoRD failure (no purchase); tau2 rows say `completed`
        # of termination (the catalogue's ``incomplete_is_failure``)
        not_completed &= episodes["benchmark"].isin(benchmark_ids(incomplete_is_failure=True))
    out["not_completed"] = not_completed
    bad_trig: set[str] = set()
    if preferences is not None and len(preferences):
        trig = preferences[(preferences["dynamic"] == "triggered")
                           & (preferences["satisfied"].astype("boolean") == False)]  # noqa: E712
        bad_trig = set(trig["episode_id"])
    out["unsatisfied_triggered"] = ids.isin(bad_trig)
    unrecovered: set[str] = set()
    transferred: set[str] = set()
    if shifts is not None and len(shifts):
        unrecovered = set(shifts.loc[shifts["recovered"].astype("boolean") == False,  # noqa: E712
                                     "episode_id"])
        transferred = set(shifts.loc[shifts["transferred"].astype("boolean").fillna(False),
                                     "episode_id"])
    out["unrecovered_shift"] = ids.isin(unrecovered)
    out["redundant_calls"] = (col("n_redundant_calls").astype("Float64") > 0).fillna(False)
    out["transfer"] = ids.isin(transferred)
    return out
