"""Statistics for tidy score frames: clustered bootstrap intervals and paired comparisons.

Pure functions on pandas frames, with no knowledge of any benchmark and no I/O:

- :func:`summarize` estimates metrics per group, with cluster-bootstrap intervals;
- :func:`compare` gives paired differences between models, adjusted p-values,
  probabilities of improvement and tie groups;
- :class:`Metric` names a metric (a mean, a ratio of sums or a median).

How far a number can be trusted (issue 15):

- :func:`noise_floor`: variance components, flip rate and minimum detectable difference;
- :func:`plan_trials`: (tasks, trials per task) designs that reach a power;
- :func:`recovery_curves`, :func:`km_medians`: Kaplan–Meier recovery times after a shift;
- :func:`task_discrimination`: task difficulty and discrimination across configurations.

Tables are rendered by :func:`accordkit.tables.format_table`.
"""

from ._point import point_estimates
from ._validate import COMPARE_COLUMNS, SUMMARY_COLUMNS
from ._warnings import (
    BCaFallbackWarning,
    DegenerateIntervalWarning,
    MixedBenchmarksWarning,
    UnpairedComparisonWarning,
)
from .compare import compare, compare_metrics
from .metrics import Metric
from .summarize import summarize, summarize_tables

# isort: split
# reliability (issue 15)
from .discrimination import TaskDiscrimination, task_discrimination
from .noise import noise_floor
from .planning import plan_trials
from .survival import kaplan_meier, km_median, km_medians, recovery_curves, recovery_times

__all__ = [
    "summarize",
    "summarize_tables",
    "compare",
    "compare_metrics",
    "Metric",
    "point_estimates",
    "SUMMARY_COLUMNS",
    "COMPARE_COLUMNS",
    "BCaFallbackWarning",
    "DegenerateIntervalWarning",
    "MixedBenchmarksWarning",
    "UnpairedComparisonWarning",
    # reliability (issue 15)
    "noise_floor",
    "plan_trials",
    "kaplan_meier",
    "km_median",
    "km_medians",
    "recovery_curves",
    "recovery_times",
    "task_discrimination",
    "TaskDiscrimination",
]
