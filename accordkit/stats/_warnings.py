"""Warning classes of the statistics layer, so users can filter them one by one."""

from __future__ import annotations

__all__ = ["BCaFallbackWarning", "DegenerateIntervalWarning", "MixedBenchmarksWarning",
           "UnpairedComparisonWarning"]


class BCaFallbackWarning(UserWarning):
    """The BCa interval was undefined for some cells; the percentile interval was used."""


class DegenerateIntervalWarning(UserWarning):
    """An interval could not be computed (too few clusters) or some resamples were empty."""


class UnpairedComparisonWarning(UserWarning):
    """Two groups were compared unpaired because their scenario sets differ."""


class MixedBenchmarksWarning(UserWarning):
    """A cell pooled the values of a metric from several benchmarks (e.g. AgentChangeBench
    and tau2-bench runs of one agent in one domain): group by ``benchmark`` too."""
