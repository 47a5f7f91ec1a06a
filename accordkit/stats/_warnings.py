"""Warning classes of the statistics layer, so users can filter them one by one.

A class with a ``headline`` (:class:`BCaFallbackWarning`) is *shown* as that one line —
what happened and what to do — in a terminal, a notebook or JupyterLab, instead of the
file, line and long message of the ``warn`` call (its cells are often many, each a long
label). The message itself keeps every detail: ``str(w.message)`` of a caught warning, and
``pytest.warns(..., match=...)``, see the cells. Only the display of these classes
changes; every other warning is formatted as before.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["BCaFallbackWarning", "DegenerateIntervalWarning", "MixedBenchmarksWarning",
           "UnpairedComparisonWarning", "headline_of"]


class BCaFallbackWarning(UserWarning):
    """The BCa interval was undefined for some cells; the percentile interval was used."""

    #: How it is shown: one line, with what to do.
    headline = ("the BCa interval was undefined for some cells (a constant share or too "
                "few distinct values), so the percentile interval is used there and the "
                "`ci_method` column says which; nothing to fix: pass method='percentile' "
                "to use it everywhere, or hide this with warnings.simplefilter('ignore', "
                "accordkit.BCaFallbackWarning)")


class DegenerateIntervalWarning(UserWarning):
    """An interval could not be computed (too few clusters) or some resamples were empty."""


class UnpairedComparisonWarning(UserWarning):
    """Two groups were compared unpaired because their scenario sets differ."""


class MixedBenchmarksWarning(UserWarning):
    """A cell pooled the values of a metric from several benchmarks (e.g. AgentChangeBench
    and tau2-bench runs of one agent in one domain): group by ``benchmark`` too."""


def headline_of(category: Any) -> str | None:
    """The one line a warning category is shown as, or None (shown as Python shows it).

    Examples
    --------
    >>> headline_of(BCaFallbackWarning).startswith("the BCa interval was undefined")
    True
    >>> headline_of(UserWarning) is None
    True
    """
    text = getattr(category, "headline", None) if isinstance(category, type) else None
    return text if isinstance(text, str) else None


def _one_line(format_: Any) -> Any:
    """``format_`` (a ``warnings.formatwarning``), with the categories that have a headline
    shown as ``Category: headline``."""
    def formatwarning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, line: str | None = None) -> str:
        text = headline_of(category)
        if text is None:
            return format_(message, category, filename, lineno, line)
        return f"{category.__name__}: {text}\n"

    formatwarning._accordkit_one_line = True  # type: ignore[attr-defined]
    return formatwarning


# shown as one line wherever warnings are printed (stderr of a script, a notebook's output);
# installed once, over whatever formatter is in place, and chaining to it for the rest
if not getattr(warnings.formatwarning, "_accordkit_one_line", False):
    warnings.formatwarning = _one_line(warnings.formatwarning)
