"""Every figure of the reports, ``frame -> Figure``, one module per family.

- :mod:`~accordkit.plots.intervals`: intervals, forests, pass^k and GSRT figures drawn from
  :func:`accordkit.summarize` / :func:`accordkit.compare` results, the palette, ``save_figure``;
- :mod:`~accordkit.plots.survival`: Kaplan-Meier recovery curves after a goal shift;
- :mod:`~accordkit.plots.tau2`: pass^k curves of tau2 runs;
- :mod:`~accordkit.plots.comparisons`: paired comparisons, one panel per benchmark and domain;
- :mod:`~accordkit.plots.labels`: short configuration labels (the full one kept for hover).

Notebooks import the names below from ``accordkit.plots``. They are loaded on first use,
so matplotlib and seaborn are imported only when a figure is drawn.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: name -> the module of this package that defines it
_NAMES = {
    "model_palette": "intervals",
    "short_label": "intervals",
    "plot_intervals": "intervals",
    "plot_forest": "intervals",
    "plot_passk": "intervals",
    "plot_gsrt": "intervals",
    "save_figure": "intervals",
    "plot_recovery_curves": "survival",
    "plot_pass_curves": "tau2",
    "plot_forest_facets": "comparisons",
    "short_labels": "labels",
    "shared_part": "labels",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
