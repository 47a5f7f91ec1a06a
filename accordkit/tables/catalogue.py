"""The catalogue: which metrics each paper table shows, each defined once.

Every table is a tuple of :class:`~accordkit.stats.Metric` specs, built from the single
constants of the layers below (:data:`accordkit.schema.DYNAMICS`,
:data:`accordkit.metrics.tue.TUE_WEIGHTS` through the ``tue_points`` column). The builders
in :mod:`accordkit.tables.accord` and :mod:`accordkit.tables.goalshift` summarise them with intervals; :func:`accord_table`
gives the same metrics' point estimates under the ids of :func:`paper_id`.
"""

from __future__ import annotations

import re

from ..benchmarks import CATALOG
from ..names import DYNAMICS
from ..stats import Metric

__all__ = ["ACCORD_MAIN", "ACCORD_DYNAMICS", "ACCORD_PREFERENCE", "ACCORD_COST",
           "ACCORD_USER_COST", "GOALSHIFT_MAIN", "GOALSHIFT_GSRT", "COMPARISON_METRICS",
           "CATALOGUE", "paper_id"]

#: AcCoRD Table 4's column order: the dynamics discovered in conversation, then the
#: preferences stated up front (``schema.DYNAMICS`` lists ``stated`` first).
ACCORD_DYNAMICS = (*DYNAMICS[1:], DYNAMICS[0])

#: AcCoRD Table 3 (episode frame). ``outcome_score`` is NaN for incomplete episodes, so
#: the outcome score is over completed episodes; the other three are over all episodes.
ACCORD_MAIN = (
    Metric("task completion rate", "completed"),
    Metric("outcome score", "outcome_score"),
    Metric("perfect outcome rate", "perfect_outcome"),
    Metric("task score", "task_score"),
)
#: AcCoRD Table 4, per dynamic (preference frame with the ``preference score`` column of
#: :func:`accordkit.tables.accord.preference_scores`, grouped by ``dynamic``).
ACCORD_PREFERENCE = Metric("preference score", "preference score")
#: AcCoRD Table 4, right half: interaction cost per episode (episode frame).
ACCORD_COST = (
    Metric("# env actions (mean)", "n_env_actions", higher_is_better=False),
    Metric("# env actions (median)", "n_env_actions", stat="median", higher_is_better=False),
    Metric("# utterances (mean)", "n_utterances"),
    Metric("# utterances (median)", "n_utterances", stat="median"),
)
#: User-simulator turns per episode, reported beside the cost in the point-estimate table.
ACCORD_USER_COST = (
    Metric("# user utterances (mean)", "n_user_utterances"),
    Metric("# user utterances (median)", "n_user_utterances", stat="median"),
)

#: Goal-shift main table (episode frame with ``tue_points``): T, P, TUE, TCRR and recovery
#: are ratios of sums over the group's episodes (the file-level definitions).
GOALSHIFT_MAIN = (
    Metric("TSR", "tsr"),
    Metric("TSR action", "tsr_action"),
    Metric("TSR NL", "tsr_nl"),
    Metric("TSR communicate", "tsr_communicate"),
    Metric("TUE", ("tue_points", "n_tool_calls")),
    Metric("tool correctness T", ("n_correct_calls", "n_tool_calls")),
    Metric("parameter validity P", ("n_valid_param_calls", "n_tool_calls")),
    Metric("TCRR", ("n_redundant_calls", "n_tcrr_calls"), higher_is_better=False),
    Metric("recovery rate", ("n_recovered", "n_shifts")),
)
#: Goal-shift recovery times (shift frame): medians of the pooled per-shift times;
#: never-recovered shifts are NaN and counted as censored.
GOALSHIFT_GSRT = (
    Metric("GSRT ack (median)", "gsrt_ack", stat="median", higher_is_better=False),
    Metric("GSRT tool (median)", "gsrt_tool", stat="median", higher_is_better=False),
    Metric("GSRT outcome (median)", "gsrt_outcome", stat="median", higher_is_better=False),
)

#: Default metrics of a model comparison per benchmark (column names or ratio pairs, as
#: :func:`accordkit.compare` takes them): each catalogue entry's ``paper_comparison_metrics``.
COMPARISON_METRICS: dict[str, tuple[str | tuple[str, str], ...]] = {
    b.id: b.paper_comparison_metrics for b in CATALOG.values() if b.paper_comparison_metrics}

#: Every table of the catalogue by name.
CATALOGUE: dict[str, tuple[Metric, ...]] = {
    "accord_main": ACCORD_MAIN,
    "accord_dynamics": (ACCORD_PREFERENCE,),
    "accord_cost": ACCORD_COST,
    "accord_user_cost": ACCORD_USER_COST,
    "goalshift_main": GOALSHIFT_MAIN,
    "goalshift_gsrt": GOALSHIFT_GSRT,
}


def paper_id(name: str) -> str:
    """The identifier of a catalogue metric in :func:`accord_table` (snake case).

    Examples
    --------
    >>> paper_id("task completion rate"), paper_id("# env actions (median)")
    ('task_completion_rate', 'env_actions_median')
    """
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
