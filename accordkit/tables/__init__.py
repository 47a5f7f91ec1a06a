"""Paper tables: the catalogue of metrics, the builders, rendering and figures.

- :mod:`~accordkit.tables.catalogue`: which metrics each table shows, each defined once;
- :mod:`~accordkit.tables.builders`: the report tables with intervals (:func:`accordkit.summarize`);
- :mod:`~accordkit.tables.paper`: :func:`accord_table`, the same metrics' point estimates;
- :mod:`~accordkit.tables.passk`: :func:`pass_hat_k`, pass^k per group with intervals;
- :mod:`~accordkit.tables.format`: :func:`format_table` (``estimate [low, high]`` cells);
- :mod:`~accordkit.tables.plots`: seaborn figures drawn from those intervals (imported on
  first use, so matplotlib is only loaded when a figure is drawn).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .builders import (
    FAILURES,
    accord_cost,
    accord_dynamics,
    accord_main,
    accord_main_and_cost,
    accord_tables,
    bootstrap_options,
    failure_benchmarks,
    failure_flags,
    failure_rates,
    goalshift_gsrt,
    goalshift_main,
    preference_scores,
    select,
    summarize_together,
    with_tue_points,
)
from .catalogue import (
    ACCORD_COST,
    ACCORD_DYNAMICS,
    ACCORD_MAIN,
    ACCORD_PREFERENCE,
    ACCORD_USER_COST,
    CATALOGUE,
    COMPARISON_METRICS,
    GOALSHIFT_GSRT,
    GOALSHIFT_MAIN,
    paper_id,
)
from .format import FORMATS, format_table, interval_caption
from .paper import ACCORD_TABLE_METRICS, accord_table
from .passk import pass_hat_k

_PLOTS = ("model_palette", "plot_intervals", "plot_forest", "plot_passk", "plot_gsrt",
          "save_figure")

__all__ = [
    "format_table", "interval_caption", "FORMATS",
    "accord_table", "ACCORD_TABLE_METRICS", "pass_hat_k",
    "accord_main", "accord_dynamics", "accord_cost", "accord_main_and_cost", "accord_tables",
    "goalshift_main",
    "goalshift_gsrt",
    "failure_flags", "failure_rates", "failure_benchmarks", "FAILURES", "bootstrap_options", "select", "preference_scores",
    "with_tue_points", "summarize_together",
    "ACCORD_MAIN", "ACCORD_DYNAMICS", "ACCORD_PREFERENCE", "ACCORD_COST", "ACCORD_USER_COST",
    "GOALSHIFT_MAIN", "GOALSHIFT_GSRT", "COMPARISON_METRICS", "CATALOGUE", "paper_id",
    *_PLOTS,
]


def __getattr__(name: str) -> Any:
    if name in _PLOTS:
        value = getattr(import_module(".plots", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
