"""Kaplan–Meier recovery curves after a goal shift, one panel per event.

Draws the curves computed by :func:`accordkit.stats.recovery_curves`; the number of shifts
and of censored shifts (no recovery before the conversation ended) of each curve is written
in its legend entry, so a curve resting on a few shifts is recognisable.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd

from .intervals import model_palette, plain_figure

__all__ = ["plot_recovery_curves"]

_LABELS = {"ack": "acknowledgement", "tool": "first relevant tool call", "outcome": "outcome"}


@plain_figure
def plot_recovery_curves(curves: pd.DataFrame, *, hue: str = "agent_model",
                         title: str | None = None) -> plt.Figure:
    """Step plots of the share of shifts not yet recovered, per ``hue`` and event.

    Parameters
    ----------
    curves : DataFrame
        :func:`accordkit.stats.recovery_curves` output (``event``, ``time``, ``survival``,
        ``n_shifts``, ``n_censored`` and the ``hue`` column).
    hue : str, default "agent_model"
        The column that names a curve (one colour per value, as in the other figures).

    Examples
    --------
    >>> import accordkit as ak                                           # doctest: +SKIP
    >>> shifts = ak.score(ak.load("data/sample/goalshift"), level="shift")  # doctest: +SKIP
    >>> fig = plot_recovery_curves(ak.recovery_curves(shifts))          # doctest: +SKIP
    """
    missing = {hue, "event", "time", "survival", "n_shifts", "n_censored"} - set(curves.columns)
    if missing:
        raise ValueError(f"`curves` lacks column(s) {sorted(missing)!r}; pass the output of "
                         "accordkit.stats.recovery_curves")
    events = list(dict.fromkeys(curves["event"]))
    n_curves = curves[hue].nunique()
    # legends go below their panel (long configuration names would cover the curves), and
    # the figure grows with them; constrained layout makes room for them
    fig, axes = plt.subplots(1, max(len(events), 1),
                             figsize=(3.8 * max(len(events), 1), 3.0 + 0.32 * n_curves),
                             sharey=True, squeeze=False, layout="constrained")
    palette = model_palette(curves[hue].astype(str))
    for ax, event in zip(axes[0], events, strict=False):
        part = curves[curves["event"] == event]
        for name, curve in part.groupby(hue, sort=True):
            first = curve.iloc[0]
            label = textwrap.fill(f"{name} ({int(first.n_shifts)} shifts, "
                                  f"{int(first.n_censored)} censored)", 46)
            ax.step(curve["time"], curve["survival"], where="post", label=label,
                    color=palette[str(name)])
        ax.axhline(0.5, color="0.6", lw=0.8, ls=":")
        ax.set_title(_LABELS.get(event, str(event)), fontsize=9)
        ax.set_xlabel("messages after the shift")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=6.5, frameon=False, loc="upper center",
                  bbox_to_anchor=(0.5, -0.2), ncol=1)
    axes[0][0].set_ylabel("share not yet recovered (KM)")
    if title:
        fig.suptitle(title)
    return fig
