"""Point estimates per cell: the estimators of :func:`summarize` without resampling.

:func:`point_estimates` and :func:`summarize` build the same estimator objects on the same
cells, so a table's numbers are the same whether or not intervals are asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._cells import cluster_codes, iter_cells, local_clusters
from ._estimators import estimator_for
from ._validate import _summarize_iv, metric_values
from .metrics import MetricLike

__all__ = ["point_estimates", "POINT_COLUMNS"]

#: columns of a point-estimate table after the ``by`` columns
POINT_COLUMNS = ("metric", "stat", "estimate", "n_clusters", "n_rows", "n_events")


def point_estimates(frame: pd.DataFrame, metrics: MetricLike | Sequence[MetricLike],
                    by: str | Sequence[str] | None = None, *,
                    cluster: str | None = "scenario_id") -> pd.DataFrame:
    """Estimate metrics per group, exactly as :func:`summarize` does, with no interval.

    Parameters
    ----------
    frame, metrics, by, cluster
        As for :func:`accordkit.summarize`; ``cluster`` only sets ``n_clusters``.

    Returns
    -------
    pandas.DataFrame
        One row per cell and metric: the ``by`` columns, then :data:`POINT_COLUMNS`
        (``n_events`` is the denominator: non-NaN rows of a mean or median, the
        denominator sum of a ratio). An empty frame gives an empty, typed table.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"m": ["a", "a", "b"], "scenario_id": [1, 2, 1],
    ...                   "x": [1.0, 0.0, float("nan")]})
    >>> point_estimates(f, "x", "m")[["m", "estimate", "n_events"]]
       m  estimate  n_events
    0  a       0.5       2.0
    1  b       NaN       0.0
    """
    args = _summarize_iv(frame, metrics, by, cluster, None, "percentile", 0.95, 1, 0)
    frame = args.frame
    values = {col: metric_values(frame, col) for m in args.metrics for col in m.columns}
    codes_of_rows = cluster_codes(frame, args.cluster)
    rows = []
    for cell in iter_cells(frame, args.by) if len(frame) else ():
        pos = cell.positions
        codes, members = local_clusters(codes_of_rows[pos])
        for metric in args.metrics:
            est = estimator_for(metric, values, pos, codes, len(members))
            rows.append({**dict(zip(args.by, cell.values, strict=True)),
                         "metric": metric.name, "stat": metric.kind,
                         "estimate": float(est.estimate), "n_clusters": int(est.n_clusters),
                         "n_rows": len(pos), "n_events": float(est.n_events)})
    out = pd.DataFrame(rows, columns=[*args.by, *POINT_COLUMNS])
    if not rows:
        out = out.astype({"metric": object, "stat": object, "estimate": float,
                          "n_clusters": np.int64, "n_rows": np.int64, "n_events": float})
        for key in args.by:
            out[key] = frame[key].iloc[:0].to_numpy()
    return out
