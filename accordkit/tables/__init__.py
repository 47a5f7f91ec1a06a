"""Every table a page shows: builders of one call shape, ``builder(frame, *, by,
**options) -> long frame`` (:func:`accordkit.summarize`'s output), one module per benchmark
or family (accord, goalshift, failures, tau2, comparisons, reliability; shared), the
catalogue of their metrics, :func:`accord_table`, :func:`pass_hat_k` and
:func:`format_table`. Figures are in :mod:`accordkit.plots`."""

from __future__ import annotations

from ..stats import SUMMARY_COLUMNS, BCaFallbackWarning, DegenerateIntervalWarning
from . import accord, catalogue, failures, goalshift, shared
from .accord import *  # noqa: F403
from .catalogue import *  # noqa: F403
from .comparisons import agent_model_named, benchmark_comparisons, paired_comparisons
from .failure_figures import cost_frontier, cost_per_success, divergence_turns
from .failures import *  # noqa: F403
from .format import FORMATS, format_table, interval_caption
from .goalshift import *  # noqa: F403
from .judge import judge_tables, judged_items
from .paper import ACCORD_TABLE_METRICS, accord_table
from .passk import one_interval, pass_hat_k
from .shared import *  # noqa: F403
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
    *accord.__all__, *goalshift.__all__, *failures.__all__, *shared.__all__,
    *catalogue.__all__, "format_table", "interval_caption", "FORMATS", "accord_table",
    "ACCORD_TABLE_METRICS", "pass_hat_k", "one_interval", "TAU2_BENCHMARKS", "REWARD_METRICS", "COST_METRICS",
    "with_configuration", "tau2_episodes", "episode_tables", "reward_table",
    "termination_table", "cost_per_task", "pass_k_table", "paired_comparisons", "agent_model_named",
    "benchmark_comparisons", "SUMMARY_COLUMNS", "INTERVAL_WARNINGS",
    "divergence_turns", "cost_per_success", "cost_frontier", "judge_tables", "judged_items",
]
