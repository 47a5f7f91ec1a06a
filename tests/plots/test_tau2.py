"""The pass^k figure's k axis (issue 36, item 3: one k gave ticks 0.945 … 1.050)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from accordkit.plots.tau2 import plot_pass_curves  # noqa: E402


def _passk(ks):
    return pd.DataFrame({"domain": "airline", "configuration": "a", "k": ks,
                         "pass_hat_k": [0.5] * len(ks), "pass_at_k": [0.6] * len(ks),
                         "ci_low": [0.3] * len(ks), "ci_high": [0.7] * len(ks)})


def test_one_k_has_one_whole_number_tick_and_a_visible_interval():
    fig = plot_pass_curves(_passk([1]))
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [1]
    assert ax.get_xlim() == (0.5, 1.5)
    # the interval of a single point is drawn as an error bar from 0.3 to 0.7
    bars = [seg for coll in ax.collections for seg in getattr(coll, "get_segments",
                                                                lambda: [])()]
    assert [(float(s[0][1]), float(s[1][1])) for s in bars] == [(0.3, 0.7)]
    plt.close(fig)


def test_several_k_get_a_tick_each():
    fig = plot_pass_curves(_passk([1, 2, 3, 4]))
    assert list(fig.axes[0].get_xticks()) == [1, 2, 3, 4]
    assert fig.axes[0].get_xlim() == (0.5, 4.5)
    plt.close(fig)


def test_one_k_is_a_dot_and_whisker_per_configuration():
    """One trial per task (k = 1 only), three configurations: three dots with their
    intervals side by side, not a stack at one x; pass@1 is not drawn again."""
    passk = pd.DataFrame({"domain": "airline", "configuration": ["a", "b", "c"], "k": 1,
                          "pass_hat_k": [0.4, 0.55, 0.7], "pass_at_k": [0.4, 0.55, 0.7],
                          "ci_low": [0.2, 0.35, 0.5], "ci_high": [0.6, 0.75, 0.9]})
    fig = plot_pass_curves(passk)
    ax = fig.axes[0]
    segs = sorted((float(s[0][0]), float(s[0][1]), float(s[1][1]))
                  for coll in ax.collections
                  for s in getattr(coll, "get_segments", lambda: [])())
    assert len(segs) == 3
    xs = [x for x, _, _ in segs]
    assert len(set(xs)) == 3 and all(0.5 < x < 1.5 for x in xs)       # side by side at k=1
    assert [(lo, hi) for _, lo, hi in segs] == [(0.2, 0.6), (0.35, 0.75), (0.5, 0.9)]
    dots = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert sorted(float(d.get_ydata()[0]) for d in dots) == [0.4, 0.55, 0.7]
    assert not [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert list(ax.get_xticks()) == [1]
    assert ax.get_ylabel() == "pass^1 (= pass@1)"
    plt.close(fig)


def test_plot_passk_with_one_k_dodges_its_groups():
    from accordkit.plots.intervals import plot_passk

    passk = pd.DataFrame({"agent_model": ["a", "b"], "k": 1, "pass_hat_k": [0.3, 0.6],
                          "ci_low": [0.1, 0.4], "ci_high": [0.5, 0.8]})
    fig = plot_passk(passk)
    ax = fig.axes[0]
    segs = sorted((float(s[0][0]), float(s[0][1]), float(s[1][1]))
                  for coll in ax.collections
                  for s in getattr(coll, "get_segments", lambda: [])())
    assert [(lo, hi) for _, lo, hi in segs] == [(0.1, 0.5), (0.4, 0.8)]
    assert segs[0][0] != segs[1][0] and list(ax.get_xticks()) == [1]
    plt.close(fig)
