"""The Kaplan–Meier median of a cell under any cluster weighting (see :mod:`._estimators`).

Lives below :mod:`.summarize` and :mod:`.survival`: the resampling engine builds it for a
``Metric(..., stat="km_median")``, and :mod:`.survival` reads :data:`HALF` from it.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._resample import CHUNK_ELEMENTS

__all__ = ["KMMedianEstimator", "HALF"]

#: tolerance when comparing a product of survival factors with 0.5
HALF = 0.5 + 1e-12


class KMMedianEstimator:
    """The KM median over weighted clusters, for the resampling engine of ``summarize``.

    With ``J`` distinct event times and cluster weights ``w`` (bootstrap counts), the
    events and the rows at risk at each time are ``w @ D`` and ``w @ R`` for the
    (clusters x J) count tables ``D`` and ``R``; the survival curve is the cumulative
    product of ``1 - d / n``, so a block of resamples costs two matrix products.

    A resample in which the survival never falls to one half (more than half its shifts
    still unrecovered at the last event time) has a median beyond the follow-up: its value
    is ``+inf`` ("not reached"), not left out, so an interval's upper end can be open. A
    resample with no row at risk at the first event time is NaN. The full-data
    :attr:`estimate` is ``+inf`` when not reached too, so a table row reads "not reached
    [low, not reached]" (the scalar :func:`~accordkit.stats.survival.km_median` gives NaN).
    """

    #: the jackknife is one Kaplan–Meier median per left-out cluster
    dense_jackknife = True

    kind = "km_median"

    def __init__(self, time: np.ndarray, observed: np.ndarray, codes: np.ndarray,
                 n_clusters: int) -> None:
        time = np.asarray(time, dtype=float)
        observed = np.asarray(observed, dtype=float)
        valid = ~(np.isnan(time) | np.isnan(observed))
        time, observed, codes = time[valid], observed[valid] > 0, codes[valid]
        self.n_clusters_total = n_clusters
        self.n_censored = int(np.count_nonzero(~observed))
        self._n_events = int(np.count_nonzero(observed))
        self.times = np.unique(time[observed])
        n_t = len(self.times)
        self._events = np.zeros((n_clusters, n_t))
        if n_t:
            j = np.searchsorted(self.times, time[observed])
            np.add.at(self._events, (codes[observed], j), 1.0)
            # rows at risk at times[j]: rows with time >= times[j]
            first_after = np.searchsorted(self.times, time, side="right")  # times[j] <= time
            per = np.zeros((n_clusters, n_t + 1))
            np.add.at(per, (codes, first_after), 1.0)
            self._at_risk = np.cumsum(per[:, ::-1], axis=1)[:, ::-1][:, 1:]
        else:
            self._at_risk = np.zeros((n_clusters, 0))
        self._contributing = np.unique(codes)

    @property
    def n_clusters(self) -> int:
        """Clusters with at least one shift (observed or censored)."""
        return len(self._contributing)

    def contributing(self) -> np.ndarray:
        return self._contributing

    @property
    def n_events(self) -> int:
        """Observed events (recoveries)."""
        return self._n_events

    #: the statistic is a function of ``weights @ totals_columns`` (see :meth:`from_totals`)
    totals_only = True

    @cached_property
    def totals_columns(self) -> np.ndarray:
        """Per cluster, its events and its rows at risk at each event time: (clusters x 2J).

        Not ``columns``: those join the one product of a block of counts with every
        metric's, and 2J columns may be many. These are used only when the totals of all
        resamples are small (:func:`~accordkit.stats._estimators.totals_suffice`).
        """
        return np.hstack([self._events, self._at_risk])

    def from_totals(self, totals: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """KM medians from ``weights @ totals_columns``: events ``d`` and rows at risk ``n`` at
        each time, ``S = cumprod(1 - d / n)``, the first time with ``S <= 1/2``.

        ``+inf`` when ``S`` stays above 1/2 (not reached); NaN when no row is at risk at the
        first event time (no rows, or only rows censored before any event: nothing to say).
        """
        b, n_t = totals.shape[0], len(self.times)
        out = np.full(b, np.nan)
        if not n_t:
            return out
        step = max(1, CHUNK_ELEMENTS // n_t)
        for start in range(0, b, step):
            d = totals[start : start + step, :n_t]
            n = totals[start : start + step, n_t:]
            with np.errstate(divide="ignore", invalid="ignore"):
                factor = np.where(n > 0, 1.0 - d / n, 1.0)
            surv = np.cumprod(factor, axis=1)
            below = surv <= HALF
            hit = below.any(axis=1)
            idx = np.argmax(below, axis=1)
            out[start : start + step] = np.where(
                hit, self.times[idx], np.where(n[:, 0] > 0, np.inf, np.nan))
        return out

    def on_counts(self, weights: np.ndarray) -> np.ndarray:
        b = weights.shape[0]
        if not len(self.times):
            return np.full(b, np.nan)
        step = max(1, CHUNK_ELEMENTS // max(len(self.times), 1))
        return np.concatenate([
            self.from_totals(np.hstack([w @ self._events, w @ self._at_risk]))
            for w in (weights[start : start + step] for start in range(0, b, step))])

    @property
    def estimate(self) -> float:
        """The KM median of all rows: ``+inf`` when not reached, NaN with no rows."""
        return float(self.on_counts(np.ones((1, self.n_clusters_total)))[0])

    def jackknife(self) -> np.ndarray:
        return self.on_counts(1.0 - np.eye(self.n_clusters_total))

    def cluster_values(self) -> np.ndarray:
        return self.on_counts(np.eye(self.n_clusters_total))

    def influence(self) -> None:
        return None
