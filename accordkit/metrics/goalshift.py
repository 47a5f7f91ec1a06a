"""Goal-shift metrics (AgentChangeBench and plain tau2) for :func:`accordkit.score`.

:func:`score_episodes` returns one row per episode with TSR and its channels, TUE (T, P),
TCRR, goal-shift recovery and GSRT, and the stored outcome (reward, success, costs);
:func:`score_shifts` returns one row per goal shift. Definitions, modes and the differences
from the upstream code are in ``docs/metrics-goalshift.md``; each metric lives in its own
module (:mod:`.tsr`, :mod:`.tue`, :mod:`.tcrr`, :mod:`.gsrt`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_chunk
from ..benchmarks import CATALOG
from ._checks import check_episode_table
from .calls import Transcripts, arrow_to_numpy
from .gsrt import SHIFT_COLUMNS, gsrt_columns, shift_arrays, shift_rows
from .stored_checks import BASIS_COLUMNS, CHECK_COLUMNS, reward_check_columns
from .tcrr import resolve_mode, tcrr_columns
from .tsr import check_action_mode, tsr_columns
from .tue import tue_columns

__all__ = ["score_episodes", "episode_columns", "score_shifts", "outcome_rewards", "EPISODE_COLUMNS",
           "SHIFT_COLUMNS", "SUCCESS_TOLERANCE", "TSR_SUCCESS_TOLERANCE", "STOP_TERMINATIONS"]

#: ``success`` = |reward - 1| <= this (upstream ``is_successful``).
SUCCESS_TOLERANCE = 1e-6
#: ``success_tsr`` = re-scored TSR >= 1 - this.
TSR_SUCCESS_TOLERANCE = 1e-9
#: Terminations after which tau2 evaluates the conversation; after any other (except an
#: infrastructure error) its reward is 0 (spec ``tau2-format.md`` §7, rule 1).
STOP_TERMINATIONS = ("user_stop", "agent_stop")

EPISODE_COLUMNS = [
    "tsr", "tsr_action", "tsr_nl", "tsr_communicate", "nl_unjudged",
    "tue", "tool_correctness", "param_validity", "n_tool_calls", "n_correct_calls",
    "n_valid_param_calls",
    "tcrr", "n_redundant_calls", "n_tcrr_calls",
    "n_shifts", "n_recovered", "n_transferred", "recovery_rate", "gsrt_ack", "gsrt_tool",
    "gsrt_outcome", "shift_source",
    "reward", "success", "success_tsr", "termination_reason", "agent_cost", "user_cost",
    "num_trials", "task_set", *CHECK_COLUMNS, *BASIS_COLUMNS,
]

_REQUIRED = ("messages", "criteria", "nl_verdicts", "tsr_details", "gsrt_judge", "reward",
             "termination_reason", "agent_cost", "user_cost", "episode_id", "source",
             "task_id", "num_trials", "task_set", "reward_info_json", "benchmark")


def _float(table: pa.Table, name: str) -> np.ndarray:
    col = pc.cast(table.column(name), pa.float64())
    return pc.fill_null(col, np.nan).to_numpy(zero_copy_only=False).astype(float)


def outcome_rewards(benchmark: np.ndarray, termination: np.ndarray,
                    stored: np.ndarray) -> np.ndarray:
    """The reward each episode is scored with: the stored one, by tau2's rules.

    * An infrastructure error (:data:`~accordkit.metrics.passk.EXCLUDED_TERMINATIONS`) says
      nothing about the agent: NaN, so that it is left out of the mean reward as it is of
      pass^k (``tau2-format.md`` §8, step 1).
    * A plain tau2 run that ended any other way than :data:`STOP_TERMINATIONS` has reward 0
      (§7, rule 1); when its ``reward_info`` is missing, that 0 is filled in. A stored
      reward is kept. AgentChangeBench runs are not zeroed: its current pipeline scores
      premature ends by their channels (``agentchangebench.md`` §3.1).

    Parameters
    ----------
    benchmark, termination : numpy.ndarray of object
        ``benchmark`` and ``termination_reason`` per episode (None when unknown).
    stored : numpy.ndarray of float
        The stored reward per episode, NaN when none is stored.

    Returns
    -------
    numpy.ndarray of float

    Examples
    --------
    >>> import numpy as np
    >>> outcome_rewards(np.array(["tau2", "tau2", "tau2", "agentchangebench"], dtype=object),
    ...                 np.array(["max_steps", "infrastructure_error", None, "max_steps"],
    ...                          dtype=object),
    ...                 np.array([np.nan, 0.0, np.nan, np.nan])).tolist()
    [0.0, nan, nan, nan]
    """
    from .passk import EXCLUDED_TERMINATIONS

    reward = np.array(stored, dtype=float)
    evaluated = {*STOP_TERMINATIONS, *EXCLUDED_TERMINATIONS}
    excluded = np.array([t in EXCLUDED_TERMINATIONS for t in termination], dtype=bool)
    premature = np.array([t is not None and t not in evaluated for t in termination],
                         dtype=bool)
    bench = np.asarray(benchmark, dtype=object)
    for spec in CATALOG.values():  # tau2 scores an early stop without a stored reward 0
        if spec.premature_stop_reward is not None:
            reward[premature & (bench == spec.id) & np.isnan(reward)] = spec.premature_stop_reward
    reward[excluded] = np.nan
    return reward


def score_episodes(table: pa.Table, *, tcrr_mode: str = "episode",
                   action_mode: str = "best_match",
                   verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Goal-shift metrics for every episode of ``table``, in the same order.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical AgentChangeBench / tau2 episodes.
    tcrr_mode : {"episode", "upstream_a6a9157", "upstream_b2cc83c", "upstream"}
        How redundant tool calls are counted (:mod:`accordkit.metrics.tcrr`). The upstream
        modes pool the conversations of each ``source`` file present in ``table``.
    action_mode : {"best_match", "upstream"}
        How calls are matched against action sets (:mod:`accordkit.metrics.tsr`).
    verdicts : pandas.DataFrame, optional
        Stored judge verdicts, attached first by
        :func:`accordkit.verdicts.attach_verdicts` (``nl_assertions`` and ``gsrt``
        rows fill ``nl_verdicts`` and ``gsrt_judge`` where the episode has none).

    Returns
    -------
    pandas.DataFrame
        Metric columns only (:data:`EPISODE_COLUMNS`); NaN means "undefined / does not
        apply", never 0.

    Examples
    --------
    >>> import accordkit as ak
    >>> frame = ak.score(ak.load("data/sample/goalshift"))          # doctest: +SKIP
    >>> frame.groupby("agent_model")[["tsr", "recovery_rate"]].mean()  # doctest: +SKIP
    """
    return pd.DataFrame(episode_columns(table, tcrr_mode=tcrr_mode, action_mode=action_mode,
                                        verdicts=verdicts))


def episode_columns(table: pa.Table, *, tcrr_mode: str = "episode",
                    action_mode: str = "best_match",
                    verdicts: pd.DataFrame | None = None) -> dict[str, Any]:
    """:func:`score_episodes`' columns (:data:`EPISODE_COLUMNS`), as arrays.

    Same parameters and checks. Every metric module gives its columns as arrays, and the
    caller builds one frame of them (:func:`accordkit.score` puts the id columns first).
    """
    check_episode_table(table, _REQUIRED, what="goal-shift scoring")
    table = one_chunk(table, keep=("messages",))
    check_action_mode(action_mode)
    mode = resolve_mode(tcrr_mode)
    if verdicts is not None:
        from ..verdicts.attach import attach_verdicts

        table = attach_verdicts(table, verdicts)
    tr = Transcripts(table)
    cols: dict[str, Any] = tsr_columns(table, action_mode=action_mode, transcripts=tr)
    cols.update(tue_columns(tr))
    cols.update(tcrr_columns(table, mode=mode, transcripts=tr))
    shifts, source = shift_arrays(table, tr)
    cols.update(gsrt_columns(shifts, source))
    termination = table.column("termination_reason").to_numpy()
    reward = outcome_rewards(table.column("benchmark").to_numpy(), termination,
                             _float(table, "reward"))
    with np.errstate(invalid="ignore"):
        success = np.abs(reward - 1.0) <= SUCCESS_TOLERANCE
        success_tsr = cols["tsr"] >= 1.0 - TSR_SUCCESS_TOLERANCE
    cols["reward"] = reward
    cols["success"] = pd.arrays.BooleanArray(success, np.isnan(reward))
    cols["success_tsr"] = pd.arrays.BooleanArray(success_tsr, np.isnan(cols["tsr"]))
    cols["termination_reason"] = pd.Series(termination, dtype=object)
    cols["agent_cost"] = _float(table, "agent_cost")
    cols["user_cost"] = _float(table, "user_cost")
    trials = pc.cast(table.column("num_trials"), pa.int64())
    cols["num_trials"] = pd.arrays.IntegerArray(
        arrow_to_numpy(trials, fill=0).astype(np.int64), arrow_to_numpy(trials.is_null(), fill=False).astype(bool))
    # stored facts of the run, carried so that their tables need no transcripts
    cols["task_set"] = pd.Series(table.column("task_set").to_numpy(), dtype=object)
    cols.update(reward_check_columns(table.column("episode_id").to_pylist(),
                                     table.column("reward_info_json").to_pylist()))
    _warn_inconsistent(table, cols["reward_consistent"])
    excluded = _excluded(termination)
    if excluded.any():  # says nothing about the agent: no metric at all, as tau2 drops it
        cols = {name: _blanked(cols[name], excluded) if name in _UNSCORED_WHEN_EXCLUDED
                else cols[name] for name in EPISODE_COLUMNS}
    return {name: cols[name] for name in EPISODE_COLUMNS}


def _blanked(values: Any, rows: np.ndarray) -> Any:
    """``values`` with ``rows`` missing (NaN, NA or None, as its type marks missing)."""
    if isinstance(values, pd.Series):
        values = values.copy()
        values[rows] = None if values.dtype == object else np.nan
        return values
    if isinstance(values, pd.api.extensions.ExtensionArray):
        values = values.copy()
        values[rows] = pd.NA
        return values
    values = np.array(values, copy=True)
    values[rows] = None if values.dtype == object else np.nan
    return values


#: Columns left empty for an episode excluded from scoring (an infrastructure error); the
#: facts that say what the episode is (termination, declared trials, task set) are kept.
_UNSCORED_WHEN_EXCLUDED = [c for c in EPISODE_COLUMNS
                           if c not in ("termination_reason", "num_trials", "task_set")]


def _excluded(termination: np.ndarray) -> np.ndarray:
    """Whether each episode ended in a way that says nothing about the agent."""
    from .passk import EXCLUDED_TERMINATIONS

    return np.array([t in EXCLUDED_TERMINATIONS for t in termination], dtype=bool)


def _warn_inconsistent(table: pa.Table, consistent: pd.arrays.BooleanArray) -> None:
    """One warning naming the episodes whose stored reward breaks tau2's product rule."""
    bad = np.flatnonzero(~consistent.fillna(True).to_numpy(dtype=bool))
    if not len(bad):
        return
    ids = table.column("episode_id").take(pa.array(bad[:3])).to_pylist()
    sources = sorted(set(table.column("source").take(pa.array(bad)).to_pylist()) - {None})
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    warnings.warn(
        f"{len(bad)} episode(s) store a reward that is not the product of reward_breakdown "
        f"over reward_basis ({', '.join(map(str, ids))}{more}; in {', '.join(sources[:3])}"
        f"{' ...' if len(sources) > 3 else ''}); success follows the stored reward, and "
        "the column reward_consistent marks them", stacklevel=4)


def score_shifts(table: pa.Table) -> pd.DataFrame:
    """One row per goal shift: ``row`` (position of the episode in ``table``) and the shift.

    Columns: :data:`SHIFT_COLUMNS` (see :mod:`accordkit.metrics.gsrt`). Episodes without
    shifts contribute no row.

    Examples
    --------
    >>> import accordkit as ak
    >>> shifts = ak.score(ak.load("data/sample/goalshift"), level="shift")   # doctest: +SKIP
    >>> shifts.groupby("agent_model")["recovered"].mean()                 # doctest: +SKIP
    """
    check_episode_table(table, _REQUIRED, what="goal-shift scoring")
    frame, _ = shift_rows(one_chunk(table, keep=("messages",)))
    excluded = _excluded(np.asarray(table.column("termination_reason").to_pylist(),
                                    dtype=object))
    if excluded.any() and len(frame):  # an infrastructure error's shifts say nothing
        frame = frame[~excluded[frame["row"].to_numpy()]].reset_index(drop=True)
    return frame
