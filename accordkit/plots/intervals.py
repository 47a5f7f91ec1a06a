"""Seaborn figures drawn from precomputed results.

Error bars always come from the intervals computed by :func:`accordkit.summarize` /
:func:`accordkit.compare` (clustered bootstrap), never from seaborn's own bootstrap, which
resamples rows and ignores clusters. Each agent model keeps one colour across figures.

Every text on these figures is drawn as text, never as matplotlib mathtext: a model name
such as ``$\\notacommand$`` from a results file is shown as written instead of failing the
figure (:func:`plain_text`, applied by every figure function of accordkit and by
:func:`save_figure`).
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

__all__ = [
    "model_palette",
    "short_label",
    "plot_intervals",
    "plot_forest",
    "plot_passk",
    "plot_gsrt",
    "save_figure",
    "plain_text",
    "plain_figure",
]

_PALETTE = "colorblind"

_F = TypeVar("_F", bound=Callable[..., Any])

#: matplotlib reads a text holding two unescaped ``$`` as mathtext; figures never should.
_PLAIN_RC = {"text.parse_math": False}


def plain_text(fig: Any) -> Any:
    r"""Mark every text of ``fig`` (a Figure or a seaborn grid) as plain text, not mathtext.

    Titles, legends, axis and tick labels drawn from data (model names, domains, metrics)
    may hold ``$``; matplotlib would parse a pair of them as mathematics, showing something
    other than the name or failing the whole figure (``$\notacommand$``). Returns ``fig``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_title(r"$\notacommand$")
    >>> plain_text(fig).axes[0].title.get_parse_math()
    False
    >>> plt.close(fig)
    """
    from matplotlib.text import Text

    figure = getattr(fig, "figure", fig)
    for text in figure.findobj(Text):
        text.set_parse_math(False)
    return fig


def plain_figure(func: _F) -> _F:
    """Decorate a figure function: its texts are made and stay plain (:func:`plain_text`).

    The body runs with ``text.parse_math`` off, so that a layout pass inside it (which
    measures every text) never parses a label as mathematics; every text of the returned
    figure is marked plain afterwards.
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with plt.rc_context(_PLAIN_RC):
            return plain_text(func(*args, **kwargs))
    return wrapper  # type: ignore[return-value]


def model_palette(models: Iterable[str]) -> dict[str, tuple[float, float, float]]:
    """A stable colour per model: sorted names mapped onto seaborn's colour-blind palette.

    Examples
    --------
    >>> pal = model_palette(["b-model", "a-model"])
    >>> list(pal) == ["a-model", "b-model"]
    True
    """
    names = sorted({str(m) for m in models})
    colours = sns.color_palette(_PALETTE, n_colors=max(len(names), 1))
    return {name: tuple(colours[i % len(colours)]) for i, name in enumerate(names)}


def short_label(text: object, limit: int = 48) -> str:
    """A label that fits a legend or an axis: at most ``limit`` characters, cut in the
    middle (``head…tail``) so that names differing at their end stay apart. Full names
    are in the CSV beside every figure.

    Examples
    --------
    >>> short_label("openai/gpt-4o-mini-2024-07-18 with a very long method name v2", 30)
    'openai/gpt-4o-mini-…od name v2'
    """
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    tail = limit // 3
    return text[: limit - tail - 1] + "…" + text[-tail:]


def _errors(frame: pd.DataFrame) -> np.ndarray:
    lo = (frame["estimate"] - frame["ci_low"]).clip(lower=0).to_numpy(dtype=float)
    hi = (frame["ci_high"] - frame["estimate"]).clip(lower=0).to_numpy(dtype=float)
    return np.vstack([np.nan_to_num(lo), np.nan_to_num(hi)])


@plain_figure
def plot_intervals(
    summary: pd.DataFrame,
    *,
    x: str = "metric",
    hue: str | None = "agent_model",
    col: str | None = None,
    order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
    palette: dict | None = None,
    ylabel: str = "estimate",
    title: str | None = None,
    height: float = 3.6,
    aspect: float = 1.6,
    sharey: bool = True,
    col_wrap: int = 3,
) -> sns.FacetGrid:
    """Point estimates with their confidence intervals, dodged by ``hue``.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`accordkit.summarize` (``estimate``, ``ci_low``, ``ci_high``).
    x, hue, col : str
        Columns for the x axis, colour and facet columns.
    sharey : bool
        One y scale for all facets (set False when facets are different metrics).
    palette : dict, optional
        Colours per hue value; defaults to :func:`model_palette`.

    Returns
    -------
    seaborn.FacetGrid
        One panel saying there is nothing to plot when ``summary`` has no rows.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"metric": ["a", "a"], "agent_model": ["m1", "m2"],
    ...                   "estimate": [.5, .6], "ci_low": [.4, .5], "ci_high": [.6, .7]})
    >>> g = plot_intervals(s)
    """
    data = summary.copy()
    if data.empty:  # e.g. no (episode, preference) pair at all: say so, do not fail
        grid = sns.FacetGrid(pd.DataFrame({x: [0]}), height=height, aspect=aspect)
        grid.ax.text(0.5, 0.5, "nothing to plot: no rows", ha="center", va="center",
                     transform=grid.ax.transAxes)
        grid.ax.set_axis_off()
        if title:
            grid.figure.suptitle(title)
        return grid
    order = list(order) if order is not None else list(dict.fromkeys(data[x]))
    hues = (list(hue_order) if hue_order is not None
            else sorted(data[hue].astype(str).unique()) if hue else [None])
    palette = palette or (model_palette(hues) if hue else None)
    grid = sns.FacetGrid(data, col=col, height=height, aspect=aspect, sharey=sharey,
                         col_wrap=None if col is None else min(col_wrap, data[col].nunique()))

    def draw(*_: object, data: pd.DataFrame, **__: object) -> None:
        frame = data
        ax = plt.gca()
        width = 0.5 / max(len(hues), 1)
        for j, h in enumerate(hues):
            part = frame if h is None else frame[frame[hue].astype(str) == h]
            pos = np.array([order.index(v) for v in part[x]], dtype=float)
            pos += (j - (len(hues) - 1) / 2) * width
            colour = palette[h] if palette and h is not None else None
            ax.errorbar(pos, part["estimate"], yerr=_errors(part), fmt="o", capsize=3,
                        color=colour, label=None if h is None else short_label(h))
            if "small_cell" in part:
                small = part["small_cell"].fillna(False).astype(bool).to_numpy()
                ax.scatter(pos[small], part["estimate"].to_numpy()[small], marker="o",
                           facecolors="white", edgecolors=colour, zorder=3)
        ax.set_xticks(range(len(order)), [short_label(v) for v in order], rotation=30,
                      ha="right")

    grid.map_dataframe(draw)
    grid.set_axis_labels("", ylabel)
    if col is not None:
        for ax, name in zip(grid.axes.flat, grid.col_names, strict=False):
            ax.set_title(short_label(f"{col} = {name}"))
    if hue:
        grid.add_legend(title=hue)
    if title:
        grid.figure.suptitle(title, y=1.03)
    return grid


@plain_figure
def plot_forest(comparison: pd.DataFrame, *, label: str = "agent_model",
                title: str | None = None) -> plt.Figure:
    """Forest plot of paired differences against a baseline (:func:`accordkit.compare`).

    Points are the differences, bars their intervals; filled points are significant after
    adjustment (``p_adjusted`` < 0.05), hollow points are not.
    """
    data = comparison.reset_index(drop=True)
    labels = [f"{r[label]} vs {r['baseline']}" if "baseline" in data else str(r[label])
              for _, r in data.iterrows()]
    if "metric" in data and data["metric"].nunique() > 1:
        labels = [f"{m}: {lab}" for m, lab in zip(data["metric"], labels, strict=True)]
    if "domain" in data and data["domain"].nunique() > 1:   # else rows of two domains read alike
        labels = [f"{d} · {lab}" for d, lab in zip(data["domain"], labels, strict=True)]
    # long configuration names wrap, so that the axis keeps its width
    labels = [textwrap.fill(lab, 64) for lab in labels]
    lines = sum(lab.count("\n") + 1 for lab in labels)
    fig, ax = plt.subplots(figsize=(10.0, 0.3 * lines + 0.2 * len(data) + 1.2))
    y = np.arange(len(data))[::-1]
    palette = model_palette(data[label].astype(str))
    for yi, (_, row) in zip(y, data.iterrows(), strict=True):
        colour = palette[str(row[label])]
        sig = bool(row.get("p_adjusted", 1.0) < 0.05)
        ax.errorbar(row["delta"], yi, xerr=[[max(row["delta"] - row["ci_low"], 0)],
                                            [max(row["ci_high"] - row["delta"], 0)]],
                    fmt="o", color=colour, capsize=3, mfc=colour if sig else "white")
    ax.axvline(0, color="0.5", lw=1, ls="--")
    ax.set_yticks(y, labels)
    ax.set_xlabel("difference (candidate − baseline)")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


@plain_figure
def plot_passk(passk: pd.DataFrame, *, hue: str | None = "agent_model",
               title: str | None = None) -> plt.Figure:
    """pass^k against k, with bootstrap bands when ``ci_low``/``ci_high`` are present.

    With a single k there is no curve: each group is a dot with its interval as a whisker,
    side by side at that k (a band of one point would not show, and the dots would stack).
    """
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    groups = list(passk.groupby(hue, sort=True)) if hue else [(None, passk)]
    palette = model_palette(passk[hue].astype(str)) if hue else {}
    one_k = len(passk) > 0 and passk["k"].nunique() == 1
    width = 0.6 if one_k and len(groups) > 1 else 0.0
    for i, (name, part) in enumerate(groups):
        part = part.sort_values("k")
        colour = palette.get(str(name)) if hue else None
        label = None if name is None else short_label(name)
        has_ci = {"ci_low", "ci_high"} <= set(part.columns)
        if one_k:
            x = part["k"].astype(float) + (-width / 2 + width * i / (len(groups) - 1)
                                           if len(groups) > 1 else 0.0)
            y = part["pass_hat_k"].astype(float)
            yerr = ([y - part["ci_low"].astype(float), part["ci_high"].astype(float) - y]
                    if has_ci else None)
            ax.errorbar(x, y, yerr=yerr, marker="o", linestyle="none", capsize=4,
                        color=colour, label=label)
            continue
        ax.plot(part["k"], part["pass_hat_k"], marker="o", color=colour, label=label)
        if has_ci:
            ax.fill_between(part["k"], part["ci_low"], part["ci_high"], color=colour, alpha=.2)
    ax.set_xlabel("k")
    ax.set_ylabel("pass^k")
    ax.set_ylim(-0.02, 1.02)
    if one_k:
        k = int(passk["k"].iloc[0])
        ax.set_xticks([k])
        ax.set_xlim(k - 0.5, k + 0.5)
    else:
        ax.xaxis.get_major_locator().set_params(integer=True)
    if hue:
        ax.legend(title=hue, frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


@plain_figure
def plot_gsrt(shifts: pd.DataFrame, *, hue: str = "agent_model",
              title: str | None = None) -> plt.Figure:
    """Distributions of goal-shift recovery times (ack, tool, outcome).

    Censored shifts (event not reached in the episode) cannot be placed on the axis; their
    share is written in each panel's title so they are never silently dropped.
    """
    variants = [("gsrt_ack", "acknowledgement"), ("gsrt_tool", "first relevant tool"),
                ("gsrt_outcome", "outcome")]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
    shifts = shifts.assign(**{hue: shifts[hue].map(short_label)}) if len(shifts) else shifts
    palette = model_palette(shifts[hue].astype(str)) if len(shifts) else {}
    for ax, (column, label) in zip(axes, variants, strict=True):
        data = shifts.dropna(subset=[column])
        n_missing = int(shifts[column].isna().sum())
        if len(data):
            sns.histplot(data, x=column, hue=hue, palette=palette, ax=ax, discrete=True,
                         multiple="dodge", shrink=.8, legend=ax is axes[-1])
        ax.set_title(f"{label}\n{n_missing} of {len(shifts)} not reached", fontsize=9)
        ax.set_xlabel("messages after the shift")
    if title:
        fig.suptitle(title, y=1.05)
    fig.tight_layout()
    return fig


def save_figure(fig: plt.Figure | sns.FacetGrid, stem: str | Path, *,
                description: str = "", close: bool = False) -> list[Path]:
    """Save a figure as PNG and SVG (``<stem>.png``, ``<stem>.svg``), every text plain.

    ``description`` (e.g. the provenance line) goes into both files' metadata. SVG output
    carries no date, so the same figure gives the same file. With ``close=True`` the figure
    is closed afterwards (batch use); notebooks keep it open so that it is displayed.
    """
    figure = getattr(fig, "figure", fig)
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    with plt.rc_context(_PLAIN_RC):   # texts made while saving (new ticks) are plain too
        plain_text(figure)
        figure.savefig(paths[0], dpi=150, bbox_inches="tight",
                       metadata={"Description": description} if description else None)
        figure.savefig(paths[1], bbox_inches="tight",
                       metadata={"Date": None, "Description": description or None})
    if close:
        plt.close(figure)
    return paths
