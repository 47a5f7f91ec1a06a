"""The tables the report notebooks show, as plain functions (so tests can reach them).

Each function takes tidy score frames (from :func:`accordkit.score`) and returns a
summary from :func:`accordkit.summarize`; notebooks only choose parameters and display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..stats import Metric, summarize

__all__ = [
    "ACCORD_MAIN",
    "ACCORD_DYNAMICS",
    "GOALSHIFT_MAIN",
    "GOALSHIFT_GSRT",
    "bootstrap_options",
    "select",
    "accord_main",
    "accord_dynamics",
    "accord_cost",
    "goalshift_main",
    "goalshift_gsrt",
    "failure_flags",
    "FAILURES",
]

ACCORD_MAIN = (
    Metric("task completion rate", "completed"),
    Metric("outcome score", "outcome_score"),
    Metric("perfect outcome rate", "perfect_outcome"),
    Metric("task score", "task_score"),
)
ACCORD_DYNAMICS = ("hard_underspec", "soft_underspec", "unachievable", "triggered", "stated")

GOALSHIFT_MAIN = (
    Metric("TSR", "tsr"),
    Metric("TSR action", "tsr_action"),
    Metric("TSR NL", "tsr_nl"),
    Metric("TSR communicate", "tsr_communicate"),
    Metric("TUE", ("tue_points", "n_tool_calls")),
    Metric("tool correctness T", ("n_correct_calls", "n_tool_calls")),
    Metric("parameter validity P", ("n_valid_param_calls", "n_tool_calls")),
    Metric("TCRR", ("n_redundant_calls", "n_tcrr_calls"), higher_is_better=False),
    Metric("recovery rate", ("n_recovered", "n_shifts")),
)
GOALSHIFT_GSRT = (
    Metric("GSRT ack (median)", "gsrt_ack", stat="median", higher_is_better=False),
    Metric("GSRT tool (median)", "gsrt_tool", stat="median", higher_is_better=False),
    Metric("GSRT outcome (median)", "gsrt_outcome", stat="median", higher_is_better=False),
)


def bootstrap_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`accordkit.summarize` options from notebook parameters."""
    return {
        "cluster": params.get("cluster", "scenario_id"),
        "method": params.get("ci_method", "bca"),
        "confidence": params.get("confidence", 0.95),
        "n_resamples": int(params.get("n_resamples", 10_000)),
        "seed": int(params.get("seed", 0)),
    }


def select(frame: pd.DataFrame, *, models: Sequence[str] | None = None,
           domains: Sequence[str] | None = None,
           benchmarks: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of a score frame restricted to some agent models, domains or benchmarks."""
    keep = pd.Series(True, index=frame.index)
    for column, values in (("agent_model", models), ("domain", domains),
                           ("benchmark", benchmarks)):
        if values:
            keep &= frame[column].isin(list(values))
    return frame[keep].reset_index(drop=True)


def accord_main(episodes: pd.DataFrame, *, by: Sequence[str] = ("agent_model", "method"),
                **options: Any) -> pd.DataFrame:
    """AcCoRD Table 3: completion, outcome (over completed), perfect outcome, task score."""
    return summarize(episodes, list(ACCORD_MAIN), list(by), **options)


def accord_dynamics(preferences: pd.DataFrame, *,
                    by: Sequence[str] = ("agent_model", "method"),
                    include_incomplete: bool = False, **options: Any) -> pd.DataFrame:
    """AcCoRD Table 4: preference scores per dynamic, pooled over (episode, preference).

    Over completed episodes by default; with ``include_incomplete=True`` preferences of
    incomplete episodes count as unsatisfied (0).
    """
    prefs = preferences.copy()
    satisfied = prefs["satisfied"].astype("Float64")
    if include_incomplete:
        satisfied = satisfied.where(prefs["completed"].astype(bool), 0.0)
    else:
        satisfied = satisfied.where(prefs["completed"].astype(bool))
    prefs["preference score"] = satisfied
    out = summarize(prefs, ["preference score"], [*by, "dynamic"], **options)
    order = {d: i for i, d in enumerate(ACCORD_DYNAMICS)}
    out = out.sort_values([*by, "dynamic"], key=lambda s: s.map(order) if s.name == "dynamic"
                          else s, kind="stable").reset_index(drop=True)
    return out


def accord_cost(episodes: pd.DataFrame, *, by: Sequence[str] = ("agent_model", "method"),
                **options: Any) -> pd.DataFrame:
    """AcCoRD Table 4, right half: env actions and agent utterances, mean and median."""
    metrics = [
        Metric("# env actions (mean)", "n_env_actions", higher_is_better=False),
        Metric("# env actions (median)", "n_env_actions", stat="median", higher_is_better=False),
        Metric("# utterances (mean)", "n_utterances"),
        Metric("# utterances (median)", "n_utterances", stat="median"),
    ]
    return summarize(episodes, metrics, list(by), **options)


def _with_tue_points(episodes: pd.DataFrame) -> pd.DataFrame:
    out = episodes.copy()
    correct = out["n_correct_calls"].astype("Float64")
    valid = out["n_valid_param_calls"].astype("Float64")
    out["tue_points"] = (0.6 * correct + 0.4 * valid).astype(float)
    return out


def goalshift_main(episodes: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   **options: Any) -> pd.DataFrame:
    """TSR and channels, TUE (= 0.6 T + 0.4 P over all calls), T, P, TCRR, recovery rate.

    T, P, TUE, TCRR and recovery are ratios of sums over the group's episodes (the
    file-level definitions), not means of per-episode ratios.
    """
    return summarize(_with_tue_points(episodes), list(GOALSHIFT_MAIN), list(by), **options)


def goalshift_gsrt(shifts: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   **options: Any) -> pd.DataFrame:
    """Medians of the pooled per-shift recovery times; censored shifts are counted."""
    return summarize(shifts, list(GOALSHIFT_GSRT), list(by), **options)


#: Failure types for error analysis: name -> (frame, description).
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

    out["not_completed"] = (col("completed").astype("boolean") == False).fillna(False)  # noqa: E712
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
