"""Bootstrap distributions of a table's estimators: one cell at a time, or shared by cells.

:func:`cell_distributions` is :func:`~accordkit.stats.summarize`'s default: each cell draws
its own resamples, seeded from its key. :func:`shared_distributions` serves every cell of
one set of clusters (``summarize(..., share_draws=True)``): the resamples are seeded from
the set's ids, drawn once, and each block of counts is multiplied once by the stacked
per-cluster columns of every metric of every one of those cells (exactly, see
:func:`exact_parts`). A table whose cells share their scenarios (agent model x method,
x dynamic ...) then draws and reads its counts once instead of once per cell and metric.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._estimators import distributions_from_totals, totals_suffice
from ._resample import CACHE_ELEMENTS, CHUNK_ELEMENTS, count_chunks

__all__ = ["cell_distributions", "shared_distributions", "exact_parts"]


def _needed(estimators: Sequence[Any], method: str) -> list[int]:
    """The estimators that need resamples (all but those of ``method="t"``, save medians)."""
    return [i for i, est in enumerate(estimators) if method != "t" or est.kind == "median"]


def cell_distributions(estimators, streams, n_clusters, args) -> list[np.ndarray | None]:
    """Bootstrap distributions of every metric of a cell, from one set of draws.

    Every estimator with per-cluster ``columns`` (means and ratios: two sums; medians of
    repeated values: cumulative counts near the median) is multiplied by each block of
    resample counts on its own, so that its digits do not depend on the other metrics
    (see :func:`~._resample.resample_totals`). When every
    metric is a function of such products alone (means, ratios, KM medians; not medians of
    rows), only the products are kept (:func:`~._estimators.distributions_from_totals`).
    """
    needed = _needed(estimators, args.method)
    out: list[np.ndarray | None] = [None] * len(estimators)
    if not needed:
        return out
    if totals_suffice([estimators[i] for i in needed], args.n_resamples):
        # totals alone (means, ratios, KM medians): the counts are never needed whole
        found = distributions_from_totals([estimators[i] for i in needed], streams,
                                          n_clusters, args.n_resamples)
        for i, values in zip(needed, found, strict=True):
            out[i] = values
        return out
    stack_idx = [i for i in needed if getattr(estimators[i], "columns", None) is not None]
    other_idx = [i for i in needed if i not in stack_idx]
    parts: dict[int, list[np.ndarray]] = {i: [] for i in stack_idx + other_idx}
    for counts in count_chunks(streams, n_clusters, args.n_resamples):
        for i in stack_idx:  # one product each: its digits whatever the other metrics
            parts[i].append(estimators[i].from_totals(counts @ estimators[i].columns, counts))
        for i in other_idx:
            parts[i].append(estimators[i].on_counts(counts))
    return [np.concatenate(parts[i]) if i in parts else None for i in range(len(estimators))]


def exact_parts(column: np.ndarray, n_clusters: int) -> list[np.ndarray]:
    """``column`` as a sum of parts whose products with resample counts are exact.

    A product ``counts @ column`` rounds in an order that depends on the BLAS kernel and
    on the columns it is given with. Whole numbers small enough (``n_clusters x max`` below
    2**53) are added exactly in any order; any other column is split into parts, each a
    multiple of its own power of two with at most 26 significant bits (largest first), so
    that every part's product is exact too. The totals, added part by part in that fixed
    order, are then the same bits whatever the kernel, the block or the other columns.

    >>> [p.tolist() for p in exact_parts(np.array([1.0, 2.0]), 10)]
    [[1.0, 2.0]]
    >>> parts = exact_parts(np.array([1 / 3, 2 / 3]), 10)
    >>> len(parts), bool((sum(parts) == np.array([1 / 3, 2 / 3])).all())
    (3, True)
    """
    column = np.asarray(column, dtype=np.float64)
    top = float(np.max(np.abs(column))) if len(column) else 0.0
    if top == 0.0 or (top * max(n_clusters, 1) < 2.0**53
                      and bool(np.all(column == np.round(column)))):
        return [column]
    grid = 2.0 ** np.ceil(np.log2(top))
    parts, rest = [], column
    while np.any(rest != 0):
        grid *= 2.0**-26
        part = np.round(rest / grid) * grid
        parts.append(part)
        rest = rest - part  # exact: part is rest rounded to a coarser grid
    return parts


def _blocks(streams, n_clusters: int, n_resamples: int) -> Iterator[np.ndarray]:
    """The counts of :func:`~._resample.count_chunks`, drawn in cache-sized pieces (about
    three times faster than drawing a large block at once) and handed out in blocks of
    about :data:`~._resample.CHUNK_ELEMENTS` for one product each (the same draws)."""
    rows = max(2, CHUNK_ELEMENTS // max(n_clusters, 1))
    block = np.empty((min(rows, n_resamples), n_clusters))
    filled = 0
    for piece in count_chunks(streams, n_clusters, n_resamples,
                              chunk_elements=max(CACHE_ELEMENTS, 2 * n_clusters)):
        start = 0
        while start < len(piece):
            take = min(len(piece) - start, len(block) - filled)
            block[filled:filled + take] = piece[start:start + take]
            filled += take
            start += take
            if filled == len(block):
                yield block
                filled = 0
    if filled:
        yield block[:filled]


def shared_distributions(estimators, streams, n_clusters, args) -> list[np.ndarray | None]:
    """Bootstrap distributions of estimators of several cells over the same clusters.

    ``estimators`` are those of every cell of one cluster set; ``streams`` draw that set.
    The per-cluster columns of all of them (split by :func:`exact_parts`, duplicates
    kept once) are stacked into one matrix, so each block of counts is multiplied once: a
    product with many columns costs about as much as one with two (it is bound by reading
    the counts), where one product per estimator read the block once for each. The
    products are exact, so an estimator's values depend on the draws and its own columns
    only, not on the other metrics or cells, nor on the block size.
    """
    needed = _needed(estimators, args.method)
    out: list[np.ndarray | None] = [None] * len(estimators)
    if not needed:
        return out
    chosen = [estimators[i] for i in needed]
    stacked: list[np.ndarray] = []
    index: dict[bytes, int] = {}
    plans: list[list[list[int]] | None] = []
    for est in chosen:
        columns = getattr(est, "columns", None)
        if columns is None and getattr(est, "totals_only", False):
            columns = est.totals_columns  # Kaplan–Meier: events and rows at risk
        if columns is None:  # a median gathered row by row: it needs the counts
            plans.append(None)
            continue
        plan = []
        for j in range(columns.shape[1]):
            where = []
            for part in exact_parts(columns[:, j], n_clusters):
                key = part.tobytes()
                if key not in index:
                    index[key] = len(stacked)
                    stacked.append(part)
                where.append(index[key])
            plan.append(where)
        plans.append(plan)
    matrix = np.column_stack(stacked) if stacked else None
    parts: list[list[np.ndarray]] = [[] for _ in chosen]
    for counts in _blocks(streams, n_clusters, args.n_resamples):
        products = counts @ matrix if matrix is not None else None
        for part, est, plan in zip(parts, chosen, plans, strict=True):
            if plan is None:
                part.append(est.on_counts(counts))
                continue
            totals = np.empty((len(counts), len(plan)))
            for j, where in enumerate(plan):
                total = products[:, where[0]].copy()
                for w in where[1:]:
                    total += products[:, w]
                totals[:, j] = total
            part.append(est.from_totals(totals, counts))
    for i, part in zip(needed, parts, strict=True):
        out[i] = np.concatenate(part)
    return out
