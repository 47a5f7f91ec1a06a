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
    * Other warnings read ``Category: message`` in the page's Notes box, without the path
      and source line of the code that raised them.
    * pandas shows up to 200 rows and 3 decimals.
    * Inside a Jupyter kernel, figures are shown inline even when ``MPLBACKEND=Agg`` is set
      for batch runs (papermill kernels inherit it).
    """
    import pandas as pd

    from .._internal.warnings_format import plain_warnings
    from ..tables import INTERVAL_WARNINGS

    plain_warnings()

    for category in INTERVAL_WARNINGS:
        warnings.simplefilter("ignore", category)
    try:
        from tqdm import TqdmWarning

        warnings.simplefilter("ignore", TqdmWarning)
    except ImportError:  # pragma: no cover - tqdm is a dependency
        pass
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.precision", 3)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        shell.run_line_magic("matplotlib", "inline")
