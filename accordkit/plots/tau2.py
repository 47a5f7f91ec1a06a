"""Figures of the ``tau2_results`` notebook."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from .intervals import plain_figure, short_label

__all__ = ["plot_pass_curves"]

#: Up to this many values of k, each gets its own tick.
_MAX_K_TICKS = 12


def _k_axis(ax: plt.Axes, ks) -> None:
    """Whole-number ticks at the values of k, with half a step of room on each side (one k
    alone gave ticks 0.945 … 1.050)."""
    values = sorted({int(k) for k in ks})
    if not values:
        ax.set_xticks([])
        return
    if len(values) <= _MAX_K_TICKS:
        ax.set_xticks(values)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(values[0] - 0.5, values[-1] + 0.5)


@plain_figure
def plot_pass_curves(passk: pd.DataFrame, *, panel: str = "domain",
                     hue: str = "configuration", title: str | None = None) -> plt.Figure:
    """pass^k (solid, with its band) and pass@k (dashed) against k, one panel per domain.

    With a single k (one trial per task: k = 1 only) there is no curve to draw: each
    configuration is a dot with its interval as a whisker, side by side at that k (pass@1
    is pass^1, so it is not drawn twice), instead of a stack of bars at one x.

    Parameters
    ----------
    passk : pandas.DataFrame
        From :func:`accordkit.tables.tau2.pass_k_table`.
    panel, hue : str
        Column giving one panel each, and column giving one colour each.
    """
    if len(passk) and passk["k"].nunique() == 1:
        return _one_k(passk, panel=panel, hue=hue, title=title)
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
            ax.plot(rows["k"], rows["pass_at_k"], linestyle="--", marker="x", color=colour,
                    label=f"{short_label(label)} pass@k")
            if {"ci_low", "ci_high"} <= set(rows.columns):
                if len(rows) > 1:
                    ax.fill_between(rows["k"].astype(float), rows["ci_low"].astype(float),
                                    rows["ci_high"].astype(float), color=colour, alpha=.2)
                else:   # one k: a band of one point is invisible; an error bar is not
                    ax.errorbar(rows["k"].astype(float), rows["pass_hat_k"].astype(float),
                                yerr=[rows["pass_hat_k"] - rows["ci_low"],
                                      rows["ci_high"] - rows["pass_hat_k"]],
                                color=colour, capsize=4, linestyle="none")
        ax.set_title(short_label(name))
        ax.set_xlabel("k")
        _k_axis(ax, part["k"] if len(part) else [])
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("probability")
    if hues:
        fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center",
                   ncol=2, fontsize="small", bbox_to_anchor=(0.5, -0.02 - 0.05 * len(hues)))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _one_k(passk: pd.DataFrame, *, panel: str, hue: str, title: str | None) -> plt.Figure:
    """One k: a dot and a whisker per configuration, dodged around k, one panel per
    domain."""
    k = int(passk["k"].iloc[0])
    panels = sorted(passk[panel].astype(str).unique())
    hues = sorted(passk[hue].astype(str).unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6),
                             squeeze=False, sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # side by side within half a step of k: never two dots at one x
    width = 0.6 if len(hues) > 1 else 0.0
    offsets = {label: (-width / 2 + width * i / (len(hues) - 1) if len(hues) > 1 else 0.0)
               for i, label in enumerate(hues)}
    for ax, name in zip(axes[0], panels, strict=True):
        part = passk[passk[panel].astype(str) == name]
        for i, label in enumerate(hues):
            rows = part[part[hue].astype(str) == label]
            if not len(rows):
                continue
            row = rows.iloc[0]
            y = float(row["pass_hat_k"])
            x = k + offsets[label]
            colour = colours[i % len(colours)]
            if {"ci_low", "ci_high"} <= set(rows.columns) and \
                    pd.notna(row["ci_low"]) and pd.notna(row["ci_high"]):
                ax.errorbar([x], [y], yerr=[[y - float(row["ci_low"])],
                                            [float(row["ci_high"]) - y]],
                            color=colour, capsize=4, linestyle="none", marker="o",
                            label=short_label(label))
            else:   # no interval (one task): the dot alone, said in the table
                ax.plot([x], [y], marker="o", linestyle="none", color=colour,
                        label=short_label(label))
        ax.set_title(short_label(name))
        ax.set_xlabel("k")
        _k_axis(ax, [k])
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel(f"pass^{k} (= pass@{k})" if k == 1 else f"pass^{k}")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=2,
               fontsize="small", bbox_to_anchor=(0.5, -0.02 - 0.05 * len(hues)))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
