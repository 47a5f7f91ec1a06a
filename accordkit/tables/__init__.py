"""Paper tables: the catalogue of metrics, the builders, rendering and figures.

- :mod:`~accordkit.tables.catalogue`: which metrics each table shows, each defined once;
- :mod:`~accordkit.tables.accord`, :mod:`~accordkit.tables.goalshift`,
  :mod:`~accordkit.tables.failures`: the report tables with intervals
  (:func:`accordkit.summarize`), one module per benchmark; what they share in
  :mod:`~accordkit.tables.shared`;
- :mod:`~accordkit.tables.paper`: :func:`accord_table`, the same metrics' point estimates;
- :mod:`~accordkit.tables.passk`: :func:`pass_hat_k`, pass^k per group with intervals;
- :mod:`~accordkit.tables.tau2`: tau2's reward, check, termination, cost and pass^k tables;
- :mod:`~accordkit.tables.comparisons`: paired comparisons of configurations per benchmark;
- :mod:`~accordkit.tables.reliability`: noise floors, trial plans and task discrimination;
- :mod:`~accordkit.tables.format`: :func:`format_table` (``estimate [low, high]`` cells).

The figures drawn from these tables are in :mod:`accordkit.plots`.
"""

from __future__ import annotations

from ..stats import (
    SUMMARY_COLUMNS,
    BCaFallbackWarning,
    DegenerateIntervalWarning,
)
from .accord import (
    accord_cost,
    accord_dynamics,
    accord_main,
    accord_main_and_cost,
    accord_tables,
    preference_scores,
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
from .comparisons import benchmark_comparisons, paired_comparisons
from .failures import FAILURES, failure_benchmarks, failure_flags, failure_rates
from .format import FORMATS, format_table, interval_caption
from .goalshift import goalshift_gsrt, goalshift_main
from .paper import ACCORD_TABLE_METRICS, accord_table
from .passk import one_interval, pass_hat_k
from .shared import bootstrap_options, select, summarize_together, with_tue_points
from .tau2 import (
    COST_METRICS,
    REWARD_METRICS,
    TAU2_BENCHMARKS,
    cost_per_task,
    episode_tables,
    pass_k_table,
    reward_table,
    tau2_episodes,
    termination_table,
    with_configuration,
)

#: The warnings a table's intervals may raise (a BCa interval that fell back to the
#: percentile one, a degenerate interval); a page states each cell's interval instead.
INTERVAL_WARNINGS = (BCaFallbackWarning, DegenerateIntervalWarning)

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
    "TAU2_BENCHMARKS", "REWARD_METRICS", "COST_METRICS", "with_configuration", "tau2_episodes",
    "episode_tables", "reward_table", "termination_table", "cost_per_task", "pass_k_table",
    "one_interval", "paired_comparisons", "benchmark_comparisons",
    "SUMMARY_COLUMNS", "INTERVAL_WARNINGS",
]
