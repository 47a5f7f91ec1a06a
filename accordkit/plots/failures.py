"""Figures of why it failed: failure shares with intervals per configuration, where the
first divergence falls, and what a solved task costs (with the cost–success frontier).

Each function draws one frame the report also shows or writes as a table: the failure
taxonomy (:func:`accordkit.failure_taxonomy`), :func:`accordkit.tables.failure_figures.
divergence_turns`, :func:`~accordkit.tables.failure_figures.cost_per_success` and
:func:`~accordkit.tables.failure_figures.cost_frontier`; the report saves that frame as the
figure's CSV.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .intervals import model_palette, plain_figure, short_label

__all__ = ["plot_failure_shares", "plot_divergence_turns", "plot_cost_per_success",
           "plot_cost_frontier"]


def _label(row: pd.Series, columns: Sequence[str]) -> str:
    return " · ".join(short_label(str(row[c])) for c in columns)


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"nothing to plot: {what}", ha="center", va="center",
            transform=ax.transAxes)
    ax.set_axis_off()


@plain_figure
def plot_failure_shares(taxonomy: pd.DataFrame, *, rows: Sequence[str],
                        group: str | Sequence[str] = "agent_model",
                        metrics: Sequence[str] | None = None,
                        title: str | None = None) -> plt.Figure:
    """Dot-and-whisker: each failure type's share per configuration, with its interval.

    Parameters
    ----------
    taxonomy : pandas.DataFrame
        :func:`accordkit.failure_taxonomy`'s table (``metric``, ``estimate``, ``ci_low``,
        ``ci_high``, ``small_cell`` and the grouping columns).
    rows : list of str
        The table's grouping columns (its ``by``).
    group : str or list of str
        The grouping columns that name a configuration; the others that vary (a domain)
        become part of each series' label (one colour per series).
    metrics : list of str, optional
        The failure types shown, top to bottom (default: those with a share above 0 in
        some configuration, in the table's order).
    """
    group = [group] if isinstance(group, str) else list(group)
    data = taxonomy.copy()
    rest = [c for c in rows if c not in group and data[c].nunique(dropna=False) > 1]
    if metrics is None:
        shown = data.groupby("metric", sort=False)["estimate"].max()
        metrics = [m for m in pd.unique(data["metric"]) if shown.get(m, 0) > 0]
    data = data[data["metric"].isin(metrics)]
    keys = [*rest, *group]
    configs = data[keys].drop_duplicates().reset_index(drop=True) if len(data) else \
        pd.DataFrame(columns=keys)
    fig, ax = plt.subplots(figsize=(9.0, 0.45 * max(len(metrics), 1) * max(
        1, min(len(configs), 4) / 2) + 1.6))
    if not len(data):
        _empty(ax, "no failure above 0")
        return fig
    names = [_label(r, keys) for _, r in configs.iterrows()]
    palette = model_palette(names)
    step = 0.8 / max(len(configs), 1)
    for j, (_, cfg) in enumerate(configs.iterrows()):
        mask = np.ones(len(data), dtype=bool)
        for c in keys:
            mask &= (data[c] == cfg[c]).to_numpy()
        part = data[mask].set_index("metric")
        ys, xs, lo, hi, small = [], [], [], [], []
        for i, metric in enumerate(metrics):
            if metric not in part.index:
                continue
            row = part.loc[metric]
            ys.append(len(metrics) - 1 - i + 0.4 - step * (j + 0.5))
            xs.append(float(row["estimate"]))
            lo.append(max(float(row["estimate"]) - float(row["ci_low"]), 0))
            hi.append(max(float(row["ci_high"]) - float(row["estimate"]), 0))
            small.append(bool(row.get("small_cell", False)))
        colour = palette[names[j]]
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="none", ecolor=colour, capsize=2, lw=1.2)
        ax.scatter(xs, ys, color=[("white" if s else colour) for s in small],
                   edgecolors=colour, zorder=3, s=28, label=textwrap.fill(names[j], 48))
    ax.set_yticks(np.arange(len(metrics))[::-1], [m.replace("_", " ") for m in metrics])
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("share of episodes (hollow: fewer than 10 tasks or events)")
    ax.grid(axis="x", color="0.9")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title or "Failure shares per configuration, with intervals")
    fig.tight_layout()
    return fig


@plain_figure
def plot_divergence_turns(turns: pd.DataFrame, *, by: str | Sequence[str] = "configuration",
                          title: str | None = None) -> plt.Figure:
    """Where the conversations first left the expected path: per configuration, the share
    of its episodes (with expected actions) whose first divergence is at each turn.

    ``turns`` is :func:`accordkit.tables.failure_figures.divergence_turns`'s frame.
    """
    by = [by] if isinstance(by, str) else list(by)
    groups = list(turns.groupby(by, sort=True, dropna=False)) if len(turns) else []
    n = max(len(groups), 1)
    fig, axes = plt.subplots(n, 1, figsize=(8.0, 1.5 * n + 0.9), sharex=True, squeeze=False)
    if not groups:
        _empty(axes[0, 0], "no episode with expected actions")
        return fig
    names = [" · ".join(short_label(str(v)) for v in (k if isinstance(k, tuple) else (k,)))
             for k, _ in groups]
    palette = model_palette(names)
    top = max(float(turns["share"].max()), 0.05)
    for ax, name, (_, part) in zip(axes[:, 0], names, groups, strict=True):
        part = part.sort_values("turn")
        ax.bar(part["turn"], part["share"], width=0.85, color=palette[name])
        total = int(part["n_episodes"].iloc[0])
        moved = int(part["episodes"].sum())
        ax.set_title(textwrap.shorten(f"{name}: {moved} of {total} diverged", 110),
                     fontsize=9, loc="left")
        ax.set_ylim(0, top * 1.15)
        ax.grid(axis="y", color="0.9")
    axes[-1, 0].set_xlabel("turn of the first divergence")
    fig.supylabel("share of episodes", fontsize=9)
    fig.suptitle(title or "Where the conversations first left the expected path")
    fig.tight_layout()
    return fig


@plain_figure
def plot_cost_per_success(table: pd.DataFrame, *, by: str | Sequence[str] = "configuration",
                          title: str | None = None) -> plt.Figure:
    """Dot-and-whisker: what one solved task costs per configuration, with its interval.

    ``table`` is :func:`accordkit.tables.failure_figures.cost_per_success`'s table.
    """
    by = [by] if isinstance(by, str) else list(by)
    data = table[table["metric"] == "cost_per_success"].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(8.0, 0.45 * max(len(data), 1) + 1.3))
    data = data[data["estimate"].notna()]
    if not len(data):
        _empty(ax, "no run stores a cost with a success")
        return fig
    data = data.sort_values("estimate", ascending=False, kind="stable")
    names = [_label(r, by) for _, r in data.iterrows()]
    palette = model_palette(names)
    y = np.arange(len(data))
    for yi, name, (_, row) in zip(y, names, data.iterrows(), strict=True):
        est = float(row["estimate"])
        ax.errorbar(est, yi, xerr=[[max(est - float(row["ci_low"]), 0)],
                                   [max(float(row["ci_high"]) - est, 0)]],
                    fmt="o", color=palette[name], capsize=3)
    ax.set_yticks(y, [textwrap.fill(n, 48) for n in names])
    ax.set_xlabel("cost per solved task (the run's total cost over its successes)")
    ax.grid(axis="x", color="0.9")
    ax.set_title(title or "Cost per successful task, with intervals")
    fig.tight_layout()
    return fig


@plain_figure
def plot_cost_frontier(frontier: pd.DataFrame, *, by: str | Sequence[str] = "configuration",
                       title: str | None = None) -> plt.Figure:
    """Success rate against mean cost per episode, one point per configuration with both
    intervals, and the frontier (no configuration succeeds as often for less) drawn.

    ``frontier`` is :func:`accordkit.tables.failure_figures.cost_frontier`'s frame.
    """
    by = [by] if isinstance(by, str) else list(by)
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    data = frontier.dropna(subset=["cost", "success"]).reset_index(drop=True)
    if not len(data):
        _empty(ax, "no run stores a cost")
        return fig
    names = [_label(r, by) for _, r in data.iterrows()]
    palette = model_palette(names)
    for name, (_, row) in zip(names, data.iterrows(), strict=True):
        ax.errorbar(row["cost"], row["success"],
                    xerr=[[max(row["cost"] - row["cost_low"], 0)],
                          [max(row["cost_high"] - row["cost"], 0)]],
                    yerr=[[max(row["success"] - row["success_low"], 0)],
                          [max(row["success_high"] - row["success"], 0)]],
                    fmt="o", color=palette[name], capsize=3,
                    mfc=palette[name] if row["on_frontier"] else "white",
                    label=textwrap.fill(name, 48))
    edge = data[data["on_frontier"]].sort_values("cost")
    ax.plot(edge["cost"], edge["success"], color="0.4", lw=1, ls="--", zorder=0,
            label="frontier")
    ax.set_xlabel("mean cost per episode")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(color="0.9")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title or "Cost and success per configuration (filled: on the frontier)")
    fig.tight_layout()
    return fig
