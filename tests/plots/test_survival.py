"""The recovery-curve figure draws one step curve per configuration and event."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from accordkit.plots.survival import plot_recovery_curves  # noqa: E402
from accordkit.stats import recovery_curves  # noqa: E402


def _shifts():
    rng = np.random.default_rng(0)
    n = 40
    ack = rng.integers(1, 6, n).astype(float)
    ack[rng.random(n) < 0.3] = np.nan
    return pd.DataFrame({
        "agent_model": np.repeat(["a", "b"], n // 2), "scenario_id": np.arange(n) % 10,
        "gsrt_ack": ack, "gsrt_tool": ack + 1, "gsrt_outcome": ack + 3,
        "censored_ack": pd.array(np.isnan(ack), dtype="boolean"),
        "censored_tool": pd.array(np.isnan(ack), dtype="boolean"),
        "censored_outcome": pd.array(np.isnan(ack), dtype="boolean"),
        "messages_after_shift": rng.integers(3, 12, n),
    })


def test_plot_recovery_curves():
    curves = recovery_curves(_shifts())
    fig = plot_recovery_curves(curves)
    axes = fig.axes
    assert len(axes) == 3
    assert len(axes[0].lines) == 3  # two curves and the 0.5 guide
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels[0].startswith("a (20 shifts, ") and "censored" in labels[0]
    plt.close(fig)


def test_plot_recovery_curves_bad_input():
    with pytest.raises(ValueError, match="lacks column"):
        plot_recovery_curves(pd.DataFrame({"time": [0]}))
