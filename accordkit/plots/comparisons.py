"""The comparison page's forest plot, faceted: one panel per benchmark, domain and metric.

One forest of every paired difference of a report (two benchmarks, several domains, three
metrics each) is a column of dozens of rows whose labels repeat the domain and metric. Here
each (benchmark, domain) is a row of panels and each of its metrics a panel, with short
configuration labels (:func:`accordkit.plots.labels.short_labels`, within each row of
panels); the full labels are in the CSV beside the figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .intervals import model_palette, plain_figure, short_label
from .labels import short_labels

__all__ = ["plot_forest_facets"]


@plain_figure
def plot_forest_facets(results: pd.DataFrame, *, label: str = "configuration",
                       rows: tuple[str, ...] = ("benchmark", "domain"),
                       title: str | None = None) -> plt.Figure:
    """Paired differences against the baseline, one panel per group of ``rows`` and metric.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`accordkit.tables.comparisons.benchmark_comparisons` (``metric``,
        ``delta``, ``ci_low``, ``ci_high``, ``baseline``, ``p_adjusted`` and ``label``).
    label : str
        The column naming what is compared with the baseline.
    rows : tuple of str
        Columns whose groups are a row of panels each (those present in ``results``).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Filled points: significant after adjustment (``p_adjusted`` < 0.05); hollow: not.
    """
    keys = [c for c in rows if c in results]
    groups = list(results.groupby(keys, sort=True)) if keys and len(results) else \
        [((), results)]
    n_cols = max([part["metric"].nunique() for _, part in groups] + [1])
    heights = [max(1.6, 0.42 * max(1, part[label].nunique()) + 1.0) for _, part in groups]
    fig, axes = plt.subplots(len(groups), n_cols, figsize=(3.9 * n_cols + 2.2, sum(heights)),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    palette = model_palette(results[label].astype(str)) if len(results) else {}
    for (key, part), ax_row in zip(groups, axes, strict=True):
        key = key if isinstance(key, tuple) else (key,)
        names = sorted(part[label].astype(str).unique())
        # short within the row: its benchmark and domain are in the panel titles
        short = short_labels([*names, *(part["baseline"].astype(str)
                                        if "baseline" in part else [])])
        y = {name: len(names) - 1 - i for i, name in enumerate(names)}
        metrics = list(dict.fromkeys(part["metric"].astype(str)))
        for j, ax in enumerate(ax_row):
            if j >= len(metrics):
                ax.set_visible(False)
                continue
            cell = part[part["metric"].astype(str) == metrics[j]]
            for _, r in cell.iterrows():
                name = str(r[label])
                colour = palette.get(name)
                sig = bool(r.get("p_adjusted", 1.0) < 0.05)
                ax.errorbar(r["delta"], y[name],
                            xerr=[[max(r["delta"] - r["ci_low"], 0)],
                                  [max(r["ci_high"] - r["delta"], 0)]],
                            fmt="o", color=colour, capsize=3, mfc=colour if sig else "white")
            ax.axvline(0, color="0.5", lw=1, ls="--")
            ax.set_ylim(-0.7, len(names) - 0.3)
            ax.set_yticks(list(y.values()),
                          [short_label(short.get(n, n), 32) for n in y] if j == 0 else [])
            where = " · ".join(str(k) for k in key)
            base = short.get(str(cell["baseline"].iloc[0]), str(cell["baseline"].iloc[0])) \
                if "baseline" in cell and len(cell) else ""
            ax.set_title(f"{where}: {metrics[j]}" + (f"\nvs {short_label(base, 32)}"
                                                    if base else ""), fontsize=9)
            ax.tick_params(labelsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("difference (candidate − baseline)", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
