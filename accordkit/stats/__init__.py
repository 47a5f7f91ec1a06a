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

Numbers an LLM judge produced, corrected for the judge (issue 44):

- :func:`judge_calibration`: the judge's sensitivity, specificity, accuracy and kappa;
- :func:`corrected_rate`: the Rogan–Gladen rate with the interval of Lee et al.;
- :func:`ppi_mean`: a prediction-powered (PPI++) mean from judged and labelled items.

Tables are rendered by :func:`accordkit.tables.format_table`.
"""

from ._adjust import adjust_pvalues
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

# isort: split
# numbers an LLM judge produced, corrected for the judge (issue 44)
from .judge_correction import corrected_rate, judge_calibration
from .ppi import ppi_mean

__all__ = [
    "adjust_pvalues",
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
    # judge correction (issue 44)
    "judge_calibration",
    "corrected_rate",
    "ppi_mean",
]
