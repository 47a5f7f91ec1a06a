"""Deprecated location of the figures: they live in :mod:`accordkit.tables.plots`.

Kept as a re-export for one release so existing notebooks keep working.
"""

from .tables.plots import (  # noqa: F401
    __all__,
    model_palette,
    plot_forest,
    plot_gsrt,
    plot_intervals,
    plot_passk,
    save_figure,
)
