"""Every figure of the reports, ``frame -> Figure``, one module per family (intervals,
survival, tau2, comparisons, failures; labels: short configuration labels). Notebooks import the
names of ``_MODULES`` from here; a module loads on first use, matplotlib with it."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_MODULES = {
    "intervals": ("model_palette", "short_label", "plot_intervals", "plot_forest",
                  "plot_passk", "plot_gsrt", "save_figure", "plain_text", "plain_figure"),
    "failures": ("plot_failure_shares", "plot_divergence_turns", "plot_cost_per_success",
                 "plot_cost_frontier"),
    "survival": ("plot_recovery_curves",), "tau2": ("plot_pass_curves",),
    "comparisons": ("plot_forest_facets",), "labels": ("short_labels", "shared_part"),
}
_NAMES = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = getattr(import_module(f".{_NAMES[name]}", __name__), name)
    return globals()[name]
