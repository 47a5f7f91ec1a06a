"""Figures of the ``tau2_results`` notebook."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..tables.plots import short_label

__all__ = ["plot_pass_curves"]


def plot_pass_curves(passk: pd.DataFrame, *, panel: str = "domain",
                     hue: str = "configuration", title: str | None = None) -> plt.Figure:
    """pass^k (solid, with its band) and pass@k (dashed) against k, one panel per domain.

    Parameters
    ----------
    passk : pandas.DataFrame
        From :func:`accordkit.report.tau2_views.pass_k_table`.
    panel, hue : str
        Column giving one panel each, and column giving one colour each.
    """
    panels = sorted(passk[panel].astype(str).unique()) if len(passk) else ["(no episodes)"]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False,
                             sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    hues = sorted(passk[hue].astype(str).unique()) if len(passk) else []
    for ax, name in zip(axes[0], panels, strict=True):
        part = passk[passk[panel].astype(str) == name] if len(passk) else passk
        for i, label in enumerate(hues):
            rows = part[part[hue].astype(str) == label].sort_values("k")
            if not len(rows):
                continue
            colour = colours[i % len(colours)]
            ax.plot(rows["k"], rows["pass_hat_k"], marker="o", color=colour,
                    label=f"{short_label(label)} pass^k")
            ax.plot(rows["k"], rows["pass_at_k"], linestyle="--", color=colour,
                    label=f"{short_label(label)} pass@k")
            if {"ci_low", "ci_high"} <= set(rows.columns):
                ax.fill_between(rows["k"].astype(float), rows["ci_low"].astype(float),
                                rows["ci_high"].astype(float), color=colour, alpha=.2)
        ax.set_title(short_label(name))
        ax.set_xlabel("k")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("probability")
    if hues:
        fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center",
                   ncol=2, fontsize="small", bbox_to_anchor=(0.5, -0.02 - 0.05 * len(hues)))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
