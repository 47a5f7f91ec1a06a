"""Goal-shift metrics (AgentChangeBench and plain tau2) for :func:`accordkit.score`.

:func:`score_episodes` returns one row per episode with TSR and its channels, TUE (T, P),
TCRR, goal-shift recovery and GSRT, and the stored outcome (reward, success, costs);
:func:`score_shifts` returns one row per goal shift. Definitions, modes and the differences
from the upstream code are in ``docs/metrics-goalshift.md``; each metric lives in its own
module (:mod:`.tsr`, :mod:`.tue`, :mod:`.tcrr`, :mod:`.gsrt`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._calls import Transcripts
from ._checks import check_episode_table
from .gsrt import SHIFT_COLUMNS, episode_gsrt, shift_rows
from .stored_checks import BASIS_COLUMNS, CHECK_COLUMNS, reward_checks
from .tcrr import resolve_mode, tcrr_counts
from .tsr import ACTION_MODES, tsr_channels
from .tue import tue_counts

__all__ = ["score_episodes", "score_shifts", "outcome_rewards", "EPISODE_COLUMNS",
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
    reward[premature & (np.asarray(benchmark, dtype=object) == "tau2") & np.isnan(reward)] = 0.0
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
        :func:`accordkit.judges.verdicts.attach_verdicts` (``nl_assertions`` and ``gsrt``
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
    check_episode_table(table, _REQUIRED, what="goal-shift scoring")
    if action_mode not in ACTION_MODES:
        raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
    mode = resolve_mode(tcrr_mode)
    if verdicts is not None:
        from ..judges.verdicts import attach_verdicts

        table = attach_verdicts(table, verdicts)
    tr = Transcripts(table)
    tsr = tsr_channels(table, action_mode=action_mode, transcripts=tr)
    tue = tue_counts(table, transcripts=tr)
    tcrr = tcrr_counts(table, mode=mode, transcripts=tr)
    shifts, source = shift_rows(table, transcripts=tr)
    gsrt = episode_gsrt(shifts, source)
    termination = np.asarray(table.column("termination_reason").to_pylist(), dtype=object)
    reward = outcome_rewards(np.asarray(table.column("benchmark").to_pylist(), dtype=object),
                             termination, _float(table, "reward"))
    with np.errstate(invalid="ignore"):
        success = np.abs(reward - 1.0) <= SUCCESS_TOLERANCE
        success_tsr = tsr["tsr"].to_numpy() >= 1.0 - TSR_SUCCESS_TOLERANCE
    out = pd.concat([tsr, tue, tcrr, gsrt], axis=1)
    out["reward"] = reward
    out["success"] = pd.array(np.where(np.isnan(reward), None, success), dtype="boolean")
    out["success_tsr"] = pd.array(np.where(tsr["tsr"].isna(), None, success_tsr),
                                  dtype="boolean")
    out["termination_reason"] = pd.Series(termination, dtype=object)
    out["agent_cost"] = _float(table, "agent_cost")
    out["user_cost"] = _float(table, "user_cost")
    out["num_trials"] = pd.array(table.column("num_trials").to_pylist(), dtype="Int64")
    # stored facts of the run, carried so that their tables need no transcripts
    out["task_set"] = pd.Series(table.column("task_set").to_pylist(), dtype=object)
    checks = reward_checks(table.column("episode_id").to_pylist(),
                           table.column("reward_info_json").to_pylist())
    for column in CHECK_COLUMNS:
        out[column] = checks[column].to_numpy()
    out["reward_basis"] = pd.Series(checks["reward_basis"].tolist(), dtype=object)
    out["reward_consistent"] = checks["reward_consistent"].array  # keeps the boolean NA
    _warn_inconsistent(table, checks["reward_consistent"])
    out = out[EPISODE_COLUMNS]
    excluded = _excluded(termination)
    if excluded.any():  # says nothing about the agent: no metric at all, as tau2 drops it
        for column in _UNSCORED_WHEN_EXCLUDED:
            out.loc[excluded, column] = None if out[column].dtype == object else np.nan
    return out


#: Columns left empty for an episode excluded from scoring (an infrastructure error); the
#: facts that say what the episode is (termination, declared trials, task set) are kept.
_UNSCORED_WHEN_EXCLUDED = [c for c in EPISODE_COLUMNS
                           if c not in ("termination_reason", "num_trials", "task_set")]


def _excluded(termination: np.ndarray) -> np.ndarray:
    """Whether each episode ended in a way that says nothing about the agent."""
    from .passk import EXCLUDED_TERMINATIONS

    return np.array([t in EXCLUDED_TERMINATIONS for t in termination], dtype=bool)


def _warn_inconsistent(table: pa.Table, consistent: pd.Series) -> None:
    """One warning naming the episodes whose stored reward breaks tau2's product rule."""
    bad = np.flatnonzero(consistent.eq(False).fillna(False).to_numpy(dtype=bool))
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
    frame, _ = shift_rows(table)
    excluded = _excluded(np.asarray(table.column("termination_reason").to_pylist(),
                                    dtype=object))
    if excluded.any() and len(frame):  # an infrastructure error's shifts say nothing
        frame = frame[~excluded[frame["row"].to_numpy()]].reset_index(drop=True)
    return frame
