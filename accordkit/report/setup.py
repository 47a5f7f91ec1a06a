"""``notebook_setup``: the same display settings for every report notebook."""

from __future__ import annotations

import warnings

__all__ = ["notebook_setup"]


def notebook_setup() -> None:
    """Display settings shared by the report notebooks.

    * Interval warnings (BCa falling back to percentile, cells too small for an interval)
      are not repeated on the page: every table's caption and its ``ci_method`` column
      already say which interval each cell has.
    * tqdm's notice about missing Jupyter widgets is hidden (bars fall back to text).
    * pandas shows up to 200 rows and 3 decimals.
    """
    import pandas as pd

    from ..stats import BCaFallbackWarning, DegenerateIntervalWarning

    for category in (BCaFallbackWarning, DegenerateIntervalWarning):
        warnings.simplefilter("ignore", category)
    try:
        from tqdm import TqdmWarning

        warnings.simplefilter("ignore", TqdmWarning)
    except ImportError:  # pragma: no cover - tqdm is a dependency
        pass
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.precision", 3)
