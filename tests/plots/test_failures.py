"""The error analysis's figures draw the frames they are given (one source with the CSV)."""

from __future__ import annotations

import matplotlib
import pandas as pd
from matplotlib.collections import PathCollection

from accordkit.plots import (
    plot_cost_frontier,
    plot_cost_per_success,
    plot_divergence_turns,
    plot_failure_shares,
)
from accordkit.tables import cost_frontier, divergence_turns

matplotlib.use("Agg")


def _taxonomy():
    return pd.DataFrame({"domain": ["air"] * 4, "agent_model": ["m1", "m1", "m2", "m2"],
                         "metric": ["failed", "missing_action"] * 2,
                         "estimate": [.4, 0.0, .7, .2], "ci_low": [.2, 0.0, .5, .1],
                         "ci_high": [.6, 0.0, .9, .3], "small_cell": [False, False, True, False]})


def test_failure_shares_draw_each_share_at_its_estimate_with_its_interval():
    fig = plot_failure_shares(_taxonomy(), rows=["domain", "agent_model"], group="agent_model")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["failed", "missing action"]
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]
    xs = sorted(round(x, 3) for c in dots for x, _ in c.get_offsets().tolist())
    assert xs == [0.0, 0.2, 0.4, 0.7]
    # m2's failed share is a small cell: hollow (white inside)
    faces = [tuple(f) for f in dots[1].get_facecolors().tolist()]
    assert faces[0] == (1.0, 1.0, 1.0, 1.0) and faces[1] != (1.0, 1.0, 1.0, 1.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["m1", "m2"]


def test_divergence_turns_one_panel_per_configuration_with_bars_at_the_shares():
    actions = pd.DataFrame({"episode_id": ["a", "b", "c"],
                            "first_divergence_turn": pd.array([2, 2, 1], "Int64"),
                            "divergence_reason": ["missing", "extra", "missing"]})
    eps = pd.DataFrame({"episode_id": ["a", "b", "c"], "configuration": ["x", "x", "y"]})
    turns = divergence_turns(actions, episodes=eps)
    fig = plot_divergence_turns(turns)
    assert len(fig.axes) == 2
    heights = [[round(p.get_height(), 3) for p in ax.patches] for ax in fig.axes]
    assert heights == [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    assert fig.axes[0].get_title(loc="left").endswith("2 of 2 diverged")


def test_cost_figures_and_their_empty_cases():
    table = pd.DataFrame({"configuration": ["a"] * 3 + ["b"] * 3,
                          "metric": ["cost_per_success", "cost_per_episode", "success_rate"] * 2,
                          "estimate": [.5, .2, .4, 1.5, .9, .6], "ci_low": [.4, .1, .3, 1.0, .8, .5],
                          "ci_high": [.7, .3, .5, 2.0, 1.0, .7]})
    fig = plot_cost_per_success(table)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["b", "a"]
    frontier = cost_frontier(table)
    fig = plot_cost_frontier(frontier)
    assert frontier["on_frontier"].tolist() == [True, True]
    line = [ln for ln in fig.axes[0].lines if ln.get_label() == "frontier"][0]
    assert line.get_xdata().tolist() == [.2, .9] and line.get_ydata().tolist() == [.4, .6]
    empty = plot_cost_per_success(table.iloc[:0])
    assert "nothing to plot" in empty.axes[0].texts[0].get_text()
