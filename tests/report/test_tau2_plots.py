"""The pass^k figure's k axis (issue 36, item 3: one k gave ticks 0.945 … 1.050)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from accordkit.report.tau2_plots import plot_pass_curves  # noqa: E402


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
