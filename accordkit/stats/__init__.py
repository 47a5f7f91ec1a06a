"""Statistics for tidy score frames: clustered bootstrap intervals and paired comparisons.

Pure functions on pandas frames, with no knowledge of any benchmark and no I/O:

- :func:`summarize` estimates metrics per group, with cluster-bootstrap intervals;
- :func:`compare` gives paired differences between models, adjusted p-values,
  probabilities of improvement and tie groups;
- :class:`Metric` names a metric (a mean, a ratio of sums or a median).

Tables are rendered by :func:`accordkit.tables.format_table`.
"""

from ._warnings import BCaFallbackWarning, DegenerateIntervalWarning, UnpairedComparisonWarning
from .compare import compare
from .metrics import Metric
from .summarize import summarize

__all__ = [
    "summarize",
    "compare",
    "Metric",
    "BCaFallbackWarning",
    "DegenerateIntervalWarning",
    "UnpairedComparisonWarning",
]
