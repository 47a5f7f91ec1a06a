"""Cluster-level estimators: the statistic of a cell under any cluster weighting.

Every estimator answers the same questions for a fixed set of clusters:

- ``on_counts(W)``: the statistic for each row of a weight matrix ``W`` (resamples x
  clusters); the full-data estimate is the row of ones, the leave-one-cluster-out
  jackknife is ``1 - I``, and a bootstrap resample is a row of counts;
- ``cluster_values()``: the statistic within each cluster alone (for paired wins);
- ``influence()``: per-cluster linearisation terms for the cluster-robust t interval,
  or ``None`` when there is no closed form (medians).

Means and ratios reduce to per-cluster sums (``RatioEstimator``), so many of them are
evaluated together with one matrix product; medians keep their rows
(``MedianEstimator``) and are evaluated as weighted medians of the sorted values.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

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


class MedianEstimator:
    """The median of the non-NaN rows, with each row weighted by its cluster's weight.

    Resampling whole clusters multiplies every row of a cluster by the number of times
    the cluster was drawn, so the median of a resample is a weighted median of the
    original sorted values. Two equivalent evaluations are used, whichever is cheaper:
    a matrix product with a (clusters x distinct values) count table when values repeat
    (integer turn counts), else a gather of the weights row by row. The gather looks
    first at a window of sorted rows around the full-data median (where the resampled
    medians almost always fall), with the weight below the window from one matrix-vector
    product, and redoes the full gather only for the resamples whose median lies outside.
    """

    #: the window of sorted rows searched first, as quantiles of the rows
    WINDOW = (0.35, 0.65)

    kind = "median"
    #: :meth:`from_totals` needs the weights again for medians outside its window
    totals_only = False
    #: the jackknife is one weighted median per left-out cluster
    dense_jackknife = True

    def __init__(self, values: np.ndarray, codes: np.ndarray, n_clusters: int) -> None:
        values = np.asarray(values, dtype=np.float64)
        valid = ~np.isnan(values)
        self.n_clusters_total = n_clusters
        self.n_censored = int(np.count_nonzero(~valid))
        vals, cl = values[valid], codes[valid]
        order = np.argsort(vals, kind="stable")
        self._sorted = vals[order]
        self._codes = cl[order]
        self._n_rows = len(vals)
        self.uniq, inverse = np.unique(self._sorted, return_inverse=True)
        n_uniq = len(self.uniq)
        n = self._n_rows
        self._window = (int(np.floor(self.WINDOW[0] * n)), int(np.ceil(self.WINDOW[1] * n)))
        self._use_table = _prefer_table(n_uniq, n_clusters, n, self._window, inverse)
        self.columns = None
        if self._use_table:
            flat = np.bincount(self._codes * n_uniq + inverse, minlength=n_clusters * n_uniq)
            self._table = flat.reshape(n_clusters, n_uniq).astype(np.float64)
            if n:
                self._stack_window(inverse)
        lo = self._window[0]
        self._before = np.bincount(self._codes[:lo], minlength=n_clusters).astype(np.float64)
        self._per_cluster = np.bincount(self._codes, minlength=n_clusters).astype(np.float64)
        self._contributing = np.unique(self._codes)

    @property
    def n_clusters(self) -> int:
        """Clusters with at least one non-NaN row."""
        return len(self._contributing)

    def contributing(self) -> np.ndarray:
        """Indices of the clusters with at least one non-NaN row."""
        return self._contributing

    @property
    def n_events(self) -> int:
        """Non-NaN rows."""
        return self._n_rows

    def on_counts(self, weights: np.ndarray) -> np.ndarray:
        b = weights.shape[0]
        out = np.full(b, np.nan)
        if self._n_rows == 0:
            return out
        width = len(self.uniq) if self._use_table else self._n_rows
        step = max(1, CHUNK_ELEMENTS // width)
        for start in range(0, b, step):
            w = weights[start : start + step]
            if self.columns is not None:
                out[start : start + step] = self.from_totals(w @ self.columns, w)
            elif self._use_table:
                out[start : start + step] = _weighted_median(w @ self._table, self.uniq)
            else:
                out[start : start + step] = self._median_gather(w)
        return out

    def _stack_window(self, inverse: np.ndarray) -> None:
        """Columns that give most resampled medians from one matrix product.

        ``columns`` holds, per cluster, its rows and its rows at or below each distinct
        value of a window around the full-data median (``WINDOW`` of the rows, one value
        wider on each side). ``W @ columns`` then gives every resample's total weight and
        its cumulative weight at those values; :meth:`from_totals` reads the median off
        them, and only a resample whose median falls outside the window is recomputed from
        the whole count table. The caller can stack ``columns`` with other estimators'
        (one pass over the counts for a whole table cell).
        """
        first, last = _window_values(inverse, self._window, len(self.uniq))
        cum = np.cumsum(self._table, axis=1)
        self._win = (first, last + 1)
        # column 0: the cluster's rows below the window; then one column per window value
        before = cum[:, first - 1] if first > 0 else np.zeros(len(cum))
        self.columns = np.column_stack([before, cum[:, first : last + 1], cum[:, -1]])

    def from_totals(self, totals: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Medians from ``weights @ columns`` (see :meth:`_stack_window`); ``weights`` are
        used again only for resamples whose median lies outside the window."""
        before, cdf, total = totals[:, 0], totals[:, 1:-1], totals[:, -1]
        k_lo = np.floor((total + 1) / 2)
        k_hi = np.floor(total / 2) + 1
        first = self._win[0]
        inside = (before < k_lo) & (cdf[:, -1] >= k_hi)
        i_lo = first + np.count_nonzero(cdf < k_lo[:, None], axis=1)
        i_hi = first + np.count_nonzero(cdf < k_hi[:, None], axis=1)
        last = len(self.uniq) - 1
        out = (self.uniq[np.minimum(i_lo, last)] + self.uniq[np.minimum(i_hi, last)]) / 2
        outside = ~inside & (total > 0)
        if outside.any():
            out[outside] = _weighted_median(weights[outside] @ self._table, self.uniq)
        return np.where(total > 0, out, np.nan)

    def _median_gather(self, w: np.ndarray) -> np.ndarray:
        lo, hi = self._window
        if hi - lo >= self._n_rows or hi <= lo:
            return _weighted_median(w[:, self._codes], self._sorted)
        # einsum, not BLAS: threaded matrix-vector products cost more than they save here
        prefix = np.einsum("bc,c->b", w, self._before)
        total = np.einsum("bc,c->b", w, self._per_cluster)
        k_lo = np.floor((total + 1) / 2)
        k_hi = np.floor(total / 2) + 1
        # rows of the window x resamples: gathering whole rows of w.T and summing down
        # the first axis is several times faster than column gathers and an axis-1
        # cumsum; weights are whole numbers, so integers hold them exactly (int32 when
        # no resample's total weight can reach 2**31)
        dtype = np.int32 if self._n_rows * self.n_clusters_total < 2**31 else np.int64
        inner = np.ascontiguousarray(w.T, dtype=dtype)[self._codes[lo:hi]]
        np.cumsum(inner, axis=0, out=inner)
        inner += prefix.astype(dtype)
        inside = (prefix < k_lo) & (inner[-1] >= k_hi)
        last = self._n_rows - 1
        i_lo = np.minimum(lo + np.count_nonzero(inner < k_lo.astype(dtype), axis=0), last)
        i_hi = np.minimum(lo + np.count_nonzero(inner < k_hi.astype(dtype), axis=0), last)
        out = (self._sorted[i_lo] + self._sorted[i_hi]) / 2
        outside = ~inside & (total > 0)
        if outside.any():
            out[outside] = _weighted_median(w[outside][:, self._codes], self._sorted)
        return np.where(total > 0, out, np.nan)

    @cached_property
    def estimate(self) -> float:
        return float(self.on_counts(np.ones((1, self.n_clusters_total)))[0])

    def jackknife(self) -> np.ndarray:
        return self.on_counts(1.0 - np.eye(self.n_clusters_total))

    def cluster_values(self) -> np.ndarray:
        return self.on_counts(np.eye(self.n_clusters_total))

    def influence(self) -> None:
        return None


#: Largest (clusters x distinct values) count table a median builds (128 MB of float64).
_TABLE_MAX_ELEMENTS = 1 << 24


def _prefer_table(n_uniq: int, n_clusters: int, n_rows: int, window: tuple[int, int],
                  inverse: np.ndarray) -> bool:
    """Whether a median reads resamples off a count table rather than gathering rows.

    The table is always used when it is small against the rows (values repeat a lot). With
    many clusters it is also used when its window around the median is narrow: a matrix
    product over (clusters x window values) costs about 1/50 of gathering the same number
    of row weights (measured: 0.9 s against 7.4 s per 10,000 resamples of 83,334 clusters
    and 250,000 turn counts), so it wins up to 20 times the elements.
    """
    if n_uniq * n_clusters <= 8 * max(n_rows, 1):
        return True
    if n_clusters < 1000 or n_rows == 0 or n_uniq * n_clusters > _TABLE_MAX_ELEMENTS:
        return False
    first, last = _window_values(inverse, window, n_uniq)
    width = last - first + 2        # the window's values, and the columns before and total
    return n_clusters * width <= 20 * (window[1] - window[0])


def _window_values(inverse: np.ndarray, window: tuple[int, int],
                   n_uniq: int) -> tuple[int, int]:
    """First and last distinct value (positions in the sorted distinct values) of the
    window of sorted rows, one value wider on each side."""
    n_rows = len(inverse)
    lo, hi = window
    return (max(int(inverse[min(lo, n_rows - 1)]) - 1, 0),
            min(int(inverse[min(hi, n_rows - 1)]) + 1, n_uniq - 1))


def _weighted_median(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Median of sorted ``values`` repeated ``weights[i]`` times, for each row ``i``.

    Weights are whole numbers, so the result equals ``np.median`` of the repeated data:
    the mean of the order statistics ``floor((N + 1) / 2)`` and ``floor(N / 2) + 1``.
    """
    cum = np.cumsum(weights, axis=1)
    total = cum[:, -1]
    k_lo = np.floor((total + 1) / 2)[:, None]
    k_hi = (np.floor(total / 2) + 1)[:, None]
    last = len(values) - 1
    i_lo = np.minimum(np.count_nonzero(cum < k_lo, axis=1), last)
    i_hi = np.minimum(np.count_nonzero(cum < k_hi, axis=1), last)
    med = (values[i_lo] + values[i_hi]) / 2
    return np.where(total > 0, med, np.nan)


def estimator_for(
    metric: Metric,
    values: dict[str, np.ndarray],
    pos: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
) -> RatioEstimator | MedianEstimator:
    """The estimator of ``metric`` on the rows ``pos``, whose clusters are ``codes``."""
    if metric.kind == "km_median":
        from .survival import KMMedianEstimator

        time, observed = metric.column
        return KMMedianEstimator(values[time][pos], values[observed][pos], codes, n_clusters)
    if metric.kind == "median":
        return MedianEstimator(values[metric.column][pos], codes, n_clusters)
    if metric.kind == "ratio":
        num, den = metric.column
        return ratio_from_rows(values[num][pos], values[den][pos], codes, n_clusters)
    return ratio_from_rows(values[metric.column][pos], None, codes, n_clusters)
