"""The median of a cell's rows under any cluster weighting (see :mod:`._estimators`).

A resample weights every row by the number of times its cluster was drawn, so a resampled
median is a weighted median of the sorted values: read off a (clusters x distinct values)
count table when values repeat, else gathered row by row around the full-data median.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._resample import CHUNK_ELEMENTS

__all__ = ["MedianEstimator"]


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

    #: the window of sorted rows searched first, as quantiles of the rows; with many
    #: clusters it narrows to 0.5 +- 4 / sqrt(clusters) (:meth:`window_quantiles`)
    WINDOW = (0.35, 0.65)

    @classmethod
    def window_quantiles(cls, n_clusters: int) -> tuple[float, float]:
        """The window, as quantiles of the rows, for ``n_clusters`` clusters.

        A resample's share of rows below the full-data median has a standard deviation of
        at most ``0.5 / sqrt(clusters)``, so its median lies within ``0.5 +- 4 /
        sqrt(clusters)`` (eight of them) but in a vanishing share of resamples; those are
        redone from the whole count table, so the window changes the speed, never the
        result. Narrow windows keep few columns: the products cost less.

        >>> [round(q, 3) for q in MedianEstimator.window_quantiles(30)]
        [0.35, 0.65]
        >>> [round(q, 3) for q in MedianEstimator.window_quantiles(40_000)]
        [0.48, 0.52]
        """
        half = min(0.5 - cls.WINDOW[0], 4.0 / np.sqrt(max(n_clusters, 1)))
        return float(0.5 - half), float(0.5 + half)

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
        # the choice of table or gather weighs costs over the default window
        wide = (int(np.floor(self.WINDOW[0] * n)), int(np.ceil(self.WINDOW[1] * n)))
        self._use_table = _prefer_table(n_uniq, n_clusters, n, wide, inverse)
        low, high = self.window_quantiles(n_clusters)
        self._window = (int(np.floor(low * n)), int(np.ceil(high * n)))
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
