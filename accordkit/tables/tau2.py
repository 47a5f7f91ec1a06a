"""The tables of the ``tau2_results`` notebook, as pure functions over score frames.

Every tau2-format episode (tau2-bench, AgentChangeBench, later τ-bench) is reported by
domain × configuration, where a configuration is the four columns of
:data:`accordkit.schema.CONFIG_COLUMNS` (agent model, agent implementation, user model,
user implementation) shown as one ``configuration`` label. Domains are never pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks import ids
from ..metrics.stored_checks import BASIS_COMPONENTS, REWARD_CHECKS
from ..names import CONFIG_COLUMNS
from ..stats import Metric, summarize, summarize_tables
from .passk import one_interval

__all__ = ["TAU2_BENCHMARKS", "REWARD_CHECKS", "REWARD_METRICS", "COST_METRICS", "UNKNOWN",
           "configuration_label", "with_configuration", "tau2_episodes", "reward_table",
           "check_table", "episode_tables", "termination_table", "cost_per_task",
           "cost_table", "pass_k_table", "one_interval"]

#: Benchmarks whose episodes come from tau2-format result files.
TAU2_BENCHMARKS = ids(tau2_format=True)

#: Shown for a configuration column the source file did not record.
UNKNOWN = "?"

def configuration_label(row: pd.Series | dict[str, Any]) -> str:
    """One readable label for the four configuration columns of an episode.

    Examples
    --------
    >>> configuration_label({"agent_model": "gpt-4.1", "method": "llm_agent",
    ...                      "user_model": "gpt-4.1", "user_implementation": None})
    'gpt-4.1 (llm_agent) | user: gpt-4.1 (?)'
    """
    def text(key: str) -> str:
        value = row.get(key) if hasattr(row, "get") else None
        return UNKNOWN if value is None or (isinstance(value, float) and np.isnan(value)) \
            else str(value)

    return (f"{text('agent_model')} ({text('method')}) | "
            f"user: {text('user_model')} ({text('user_implementation')})")


def with_configuration(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with a ``configuration`` label column (from the four columns).

    Configuration columns missing from the frame count as unknown; the frame's own
    columns are left as they are. When the frame holds episodes of several benchmarks, each
    label starts with its benchmark (``"tau2: gpt-4.1 (llm_agent) | …"``), so that a table
    grouped by domain and configuration never pools two benchmarks' runs of one agent (an
    AgentChangeBench airline run and a tau2-bench airline run, say).
    """
    out = frame.copy()
    parts = pd.DataFrame({c: (out[c] if c in out else pd.Series(None, index=out.index,
                                                                 dtype=object))
                          for c in CONFIG_COLUMNS})
    prefixed = "benchmark" in out and out["benchmark"].nunique(dropna=False) > 1
    if prefixed:
        parts["benchmark"] = out["benchmark"]
    if not len(out):
        out["configuration"] = pd.Series(dtype=object)
        return out
    # one label per distinct combination (a million episodes have a handful), then spread
    codes = parts.groupby(list(parts.columns), dropna=False, sort=False,
                          observed=True).ngroup().to_numpy()
    _, first = np.unique(codes, return_index=True)
    labels = []
    for row in parts.iloc[first].to_dict("records"):
        label = configuration_label(row)
        if prefixed:
            bench = row["benchmark"]
            label = f"{UNKNOWN if pd.isna(bench) else bench}: {label}"
        labels.append(label)
    out["configuration"] = pd.array(labels, dtype="str").take(codes)
    return out


def tau2_episodes(scores: pd.DataFrame) -> pd.DataFrame:
    """The tau2-format episodes of a score frame, with their ``configuration`` label.

    Parameters
    ----------
    scores : pandas.DataFrame
        Episode-level scores (:func:`accordkit.score` or a score store); they carry the
        stored reward checks (:data:`REWARD_CHECKS`) and ``task_set``.

    Returns
    -------
    pandas.DataFrame
        Rows of :data:`TAU2_BENCHMARKS` with a ``configuration`` column.
    """
    return with_configuration(scores[scores["benchmark"].isin(TAU2_BENCHMARKS)]
                              .reset_index(drop=True))


#: The stored reward and success (reward = 1) of :func:`reward_table`.
REWARD_METRICS = (Metric("mean reward", "reward"), Metric("success (reward = 1)", "success"))
#: The costs of :func:`cost_table`.
COST_METRICS = (Metric("agent cost per episode", "agent_cost", higher_is_better=False),
                Metric("user cost per episode", "user_cost", higher_is_better=False))


def _check_metrics(frame: pd.DataFrame) -> list[Metric]:
    """A metric for each stored reward check some episode of ``frame`` has."""
    return [Metric(label, key) for label, key in REWARD_CHECKS
            if key in frame and frame[key].notna().any()]


def _no_checks(by: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(columns=[*by, "metric", "estimate", "ci_low", "ci_high",
                                 "n_clusters", "n_rows", "in_reward_basis"])


def _with_basis_share(table: pd.DataFrame, frame: pd.DataFrame,
                      by: Sequence[str]) -> pd.DataFrame:
    """Each check row with ``in_reward_basis``: the share of its group's episodes whose
    reward was made with that check (``reward_basis``); a check outside the basis is a
    diagnostic only (spec ``tau2-format.md`` §7). NaN where no episode stored a basis."""
    key_of = {label: key for label, key in REWARD_CHECKS}
    basis = (frame["reward_basis"] if "reward_basis" in frame
             else pd.Series(None, index=frame.index, dtype=object))
    components = basis.map(lambda b: set(b.split("+")) if isinstance(b, str) else None)
    known = components.notna()
    shares = []
    for label, key in key_of.items():
        inside = components.map(lambda c, comp=BASIS_COMPONENTS[key]: c is not None
                                and comp in c).astype(float).where(known)
        part = inside.groupby([frame[c] for c in by], dropna=False, sort=False).mean()
        shares.append(part.rename("in_reward_basis").reset_index().assign(metric=label))
    share = pd.concat(shares, ignore_index=True) if shares else None
    if share is None or not len(table):
        return table.assign(in_reward_basis=pd.Series(dtype=float))
    return table.merge(share, on=[*by, "metric"], how="left", sort=False)


def _with_float_success(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(success=frame["success"].astype(float))


def reward_table(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
                 **boot: Any) -> pd.DataFrame:
    """Mean stored reward and success rate (reward = 1) with clustered intervals.

    ``boot`` holds the :func:`accordkit.summarize` options (cluster = task).
    """
    return summarize(_with_float_success(frame), list(REWARD_METRICS), by=list(by), **boot)


def check_table(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
                **boot: Any) -> pd.DataFrame:
    """Pass rate of each stored reward check present in the frame, with intervals.

    Checks no episode of the frame has are left out; an empty frame (or no checks at all)
    gives an empty frame with the summary's columns.
    """
    metrics = _check_metrics(frame)
    if not metrics:
        return _no_checks(by)
    return _with_basis_share(summarize(frame, metrics, by=list(by), **boot), frame, by)


def episode_tables(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
                   **boot: Any) -> dict[str, pd.DataFrame]:
    """:func:`reward_table`, :func:`check_table` and :func:`cost_table` from one set of
    resamples.

    The three tables have the same cells over the same tasks: one
    :func:`accordkit.stats.summarize_tables` computes them as one table of all their
    metrics, so each cell draws once, and gives the tables the separate calls give.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``"reward"``, ``"checks"`` and ``"cost"``.
    """
    groups = {"reward": REWARD_METRICS, "checks": _check_metrics(frame),
              "cost": COST_METRICS}
    rows, by = _with_float_success(frame), list(by)
    out = summarize_tables({name: (rows, list(metrics), by)
                            for name, metrics in groups.items()}, **boot)
    out["checks"] = (_with_basis_share(out["checks"], frame, by) if groups["checks"]
                     else _no_checks(by))
    return out


def termination_table(frame: pd.DataFrame, *,
                      by: Sequence[str] = ("domain", "configuration")) -> pd.DataFrame:
    """Episodes per termination reason within each group, with the group share.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``termination_reason`` (``"(none)"`` when not recorded),
        ``episodes`` and ``share`` (of the group's episodes).
    """
    cols = [*by, "termination_reason", "episodes", "share"]
    if not len(frame):
        return pd.DataFrame(columns=cols)
    data = frame.assign(termination_reason=frame["termination_reason"].fillna("(none)"))
    counts = (data.groupby([*by, "termination_reason"], dropna=False, sort=True).size()
              .rename("episodes").reset_index())
    totals = counts.groupby(list(by), dropna=False)["episodes"].transform("sum")
    counts["share"] = counts["episodes"] / totals
    return counts[cols]


def cost_per_task(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
                  cluster: str = "scenario_id") -> pd.DataFrame:
    """Mean agent and user cost of one run of each task, per group.

    No interval: a row per task is its mean over the task's runs.

    Parameters
    ----------
    frame : pandas.DataFrame
        Episode scores with the ``by`` columns, ``cluster``, ``agent_cost`` and
        ``user_cost``.
    by : sequence of str
        The groups.
    cluster : str, default "scenario_id"
        The task column (the clusters the other tables resample).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``cluster``, ``episodes``, ``agent_cost`` and ``user_cost``
        (means over the task's episodes that recorded a cost; NaN when none did).
    """
    cols = [*by, cluster, "episodes", "agent_cost", "user_cost"]
    if not len(frame):
        return pd.DataFrame(columns=cols)
    grouped = frame.groupby([*by, cluster], dropna=False, sort=True)
    out = grouped.agg(episodes=(cluster, "size"), agent_cost=("agent_cost", "mean"),
                      user_cost=("user_cost", "mean")).reset_index()
    return out[cols]


def cost_table(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
               **boot: Any) -> pd.DataFrame:
    """Mean agent and user cost per episode, with intervals clustered by task."""
    return summarize(frame, list(COST_METRICS), by=list(by), **boot)


def pass_k_table(frame: pd.DataFrame, *, by: Sequence[str] = ("domain", "configuration"),
                 cluster: str = "scenario_id", method: str = "bca", confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """pass^k and pass@k curves per group, with task-resampled intervals.

    The interval options are the page's (:func:`accordkit.summarize`'s ``cluster``, the
    task column, ``method``, ``confidence``, ``n_resamples``, ``seed``), so that every
    interval of a page is made the same way. pass^1 is the success rate (reward = 1),
    averaged over tasks.

    The one place the report calls :func:`accordkit.pass_hat_k`, so that a change of its
    interface touches only this function.
    """
    from .passk import pass_hat_k

    cols = [*by, "k", "pass_hat_k", "pass_at_k", "n_tasks", "n_episodes", "n_excluded",
            "ci_low", "ci_high", "small_cell"]
    if not len(frame):
        return pd.DataFrame(columns=cols)
    return pass_hat_k(frame, by=list(by), task=cluster, ci=True, method=method,
                      confidence=confidence, n_resamples=n_resamples, seed=seed)
