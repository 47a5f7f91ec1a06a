"""Cluster-level estimators: the statistic of a cell under any cluster weighting.

Every estimator answers the same questions for a fixed set of clusters:

- ``on_counts(W)``: the statistic for each row of a weight matrix ``W`` (resamples x
  clusters); the full-data estimate is the row of ones, the leave-one-cluster-out
  jackknife is ``1 - I``, and a bootstrap resample is a row of counts;
- ``cluster_values()``: the statistic within each cluster alone (for paired wins);
- ``influence()``: per-cluster linearisation terms for the cluster-robust t interval,
  or ``None`` when there is no closed form (medians).

Means and ratios reduce to per-cluster sums (``RatioEstimator``, here), so many of them
are evaluated together with one matrix product; medians keep their rows
(:class:`~._median.MedianEstimator`) and are evaluated as weighted medians of the sorted
values; Kaplan–Meier medians (:class:`~._km.KMMedianEstimator`) reduce to per-cluster
events and rows at risk at each event time. :func:`estimator_for` picks one for a metric.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ._km import KMMedianEstimator
from ._median import MedianEstimator
from ._resample import CHUNK_ELEMENTS, resample_totals
from .metrics import Metric

__all__ = ["RatioEstimator", "MedianEstimator", "ratio_from_rows", "estimator_for",
           "totals_suffice", "distributions_from_totals"]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den == 0, np.nan, out)


class RatioEstimator:
    """``sum(numerator) / sum(denominator)`` over weighted clusters.

    A NaN-aware mean is the ratio whose numerator is the value (0 where NaN) and whose
    denominator is the indicator of a non-NaN value.
    """

    kind = "ratio"
    #: the statistic is a function of ``weights @ totals_columns`` (see :meth:`from_totals`)
    totals_only = True

    def __init__(self, num_c: np.ndarray, den_c: np.ndarray) -> None:
        self.num_c = np.asarray(num_c, dtype=np.float64)
        self.den_c = np.asarray(den_c, dtype=np.float64)
        self.columns = np.column_stack([self.num_c, self.den_c])
        self.totals_columns = self.columns

    @property
    def n_clusters(self) -> int:
        """Clusters that contribute to the denominator."""
        return int(np.count_nonzero(self.den_c))

    def contributing(self) -> np.ndarray:
        """Indices of the clusters with a non-zero denominator."""
        return np.flatnonzero(self.den_c)

    @property
    def n_events(self) -> float:
        """The denominator total (rows counted in a mean)."""
        return float(self.den_c.sum())

    def from_totals(self, totals: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """The statistic from weighted totals ``W @ columns`` (shape (b, 2))."""
        return _ratio(totals[:, 0], totals[:, 1])

    def on_counts(self, weights: np.ndarray) -> np.ndarray:
        return self.from_totals(weights @ self.columns)

    @cached_property
    def estimate(self) -> float:
        return float(self.from_totals(self.columns.sum(axis=0)[None, :])[0])

    def jackknife(self) -> np.ndarray:
        """Leave-one-cluster-out values, in closed form."""
        total = self.columns.sum(axis=0)
        return _ratio(total[0] - self.num_c, total[1] - self.den_c)

    def cluster_values(self) -> np.ndarray:
        return _ratio(self.num_c, self.den_c)

    def influence(self) -> np.ndarray:
        """Linearisation ``(num_c - R den_c) / sum(den)`` of each cluster."""
        total_den = self.den_c.sum()
        if total_den == 0:
            return np.full_like(self.num_c, np.nan)
        return (self.num_c - self.estimate * self.den_c) / total_den


def totals_suffice(estimators: Any, n_resamples: int) -> bool:
    """Whether the bootstrap values of ``estimators`` need only their totals.

    True when every one is a function of ``weights @ totals_columns`` alone
    (``totals_only``: means, ratios, Kaplan–Meier medians; not medians of rows) and the
    totals of all resamples, ``n_resamples`` x their columns, fit in one block of
    :data:`~accordkit.stats._resample.CHUNK_ELEMENTS`: then
    :func:`~accordkit.stats._resample.resample_totals` gives them without the counts.
    """
    estimators = list(estimators)
    if not all(getattr(e, "totals_only", False) for e in estimators):
        return False
    width = sum(e.totals_columns.shape[1] for e in estimators)
    return width * n_resamples <= CHUNK_ELEMENTS


def distributions_from_totals(estimators: Any, streams: Any, n_clusters: int,
                              n_resamples: int) -> list[np.ndarray]:
    """Each estimator's bootstrap values, from one :func:`resample_totals` of their columns.

    For estimators that :func:`totals_suffice`: the resamples are those of
    :func:`~accordkit.stats._resample.count_chunks` for ``streams``, shared by all; each
    estimator's products are its own, whatever the other estimators.
    """
    estimators = list(estimators)
    totals = resample_totals(streams, n_clusters, n_resamples,
                             [e.totals_columns for e in estimators])
    return [e.from_totals(t) for e, t in zip(estimators, totals, strict=True)]


def ratio_from_rows(
    num: np.ndarray, den: np.ndarray | None, codes: np.ndarray, n_clusters: int
) -> RatioEstimator:
    """Per-cluster sums of a mean (``den=None``) or of a ratio, skipping NaN rows.

    Rows are added in the order given: :func:`summarize` and :func:`compare` give each
    cell's rows in the metric's value order (:func:`~accordkit.stats._cells.metric_ranks`),
    so the sums depend neither on the order of the frame nor on the other metrics.
    """
    if den is None:
        valid = ~np.isnan(num)
        den_rows = valid.astype(np.float64)
    else:
        valid = ~(np.isnan(num) | np.isnan(den))
        den_rows = np.where(valid, den, 0.0)
    num_rows = np.where(valid, num, 0.0)
    num_c = np.bincount(codes, weights=num_rows, minlength=n_clusters)
    den_c = np.bincount(codes, weights=den_rows, minlength=n_clusters)
    return RatioEstimator(num_c, den_c)


#: Estimators whose jackknife is dense (``dense_jackknife``: one full estimate per left-out
#: cluster, a clusters x clusters computation) skip it above this many clusters: BCa then
#: falls back to the percentile interval, with a warning (52 GB at 83,334 clusters).
DENSE_JACKKNIFE_MAX_CLUSTERS = 5_000


def jackknife_affordable(est: Any) -> bool:
    """Whether BCa may ask ``est`` for its jackknife (see :data:`DENSE_JACKKNIFE_MAX_CLUSTERS`)."""
    return (not getattr(est, "dense_jackknife", False)
            or est.n_clusters_total <= DENSE_JACKKNIFE_MAX_CLUSTERS)


def estimator_for(
    metric: Metric,
    values: dict[str, np.ndarray],
    pos: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
) -> RatioEstimator | MedianEstimator | KMMedianEstimator:
    """The estimator of ``metric`` on the rows ``pos``, whose clusters are ``codes``."""
    if metric.kind == "km_median":
        time, observed = metric.column
        return KMMedianEstimator(values[time][pos], values[observed][pos], codes, n_clusters)
    if metric.kind == "median":
        return MedianEstimator(values[metric.column][pos], codes, n_clusters)
    if metric.kind == "ratio":
        num, den = metric.column
        return ratio_from_rows(values[num][pos], values[den][pos], codes, n_clusters)
    return ratio_from_rows(values[metric.column][pos], None, codes, n_clusters)
