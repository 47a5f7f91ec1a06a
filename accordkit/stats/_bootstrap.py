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

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._estimators import distributions_from_totals, totals_suffice
from ._resample import CACHE_ELEMENTS, CHUNK_ELEMENTS, count_chunks

__all__ = ["cell_distributions", "shared_distributions", "exact_parts", "overlapping_groups"]


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
    """The counts of :func:`~._resample.count_chunks` (the same draws), in blocks of about
    :data:`~._resample.CHUNK_ELEMENTS` for one product each, drawn a couple of resamples at
    a time and counted straight into the block: drawn whole, a block's indices go out to
    memory and back (about three times slower)."""
    rows = max(2, CHUNK_ELEMENTS // max(n_clusters, 1))
    piece = max(1, CACHE_ELEMENTS // max(n_clusters, 1))
    identity = len(streams) == 1 and bool(np.array_equal(streams[0][1], np.arange(n_clusters)))
    for start in range(0, n_resamples, rows):
        block = np.empty((min(rows, n_resamples - start), n_clusters))
        for first in range(0, len(block), piece):
            b = min(piece, len(block) - first)
            drawn = []
            for rng, members in streams:
                idx = rng.integers(0, len(members), (b, len(members)))
                drawn.append(idx if identity else members[idx])
            flat = drawn[0] if len(drawn) == 1 else np.hstack(drawn)
            for r in range(b):
                block[first + r] = np.bincount(flat[r], minlength=n_clusters)
        yield block


def overlapping_groups(members: Sequence[np.ndarray]) -> list[list[int]]:
    """The cells (indices into ``members``, each a cell's cluster codes) that share clusters,
    directly or through other cells, in groups; each group in cell order, groups in the
    order of their first cell.

    >>> overlapping_groups([np.array([0, 1]), np.array([5]), np.array([1, 2]), np.array([2])])
    [[0, 2, 3], [1]]
    """
    parent = list(range(len(members)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    size = 1 + max((int(m.max()) for m in members if len(m)), default=-1)
    owner = np.full(size, -1, dtype=np.intp)
    for i, m in enumerate(members):
        for other in np.unique(owner[m]):
            if other >= 0:
                a, b = find(i), find(int(other))
                parent[max(a, b)] = min(a, b)
        owner[m] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(members)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


class _CellWeights:
    """The counts of a block restricted to one cell's clusters, taken only when asked (a
    median reads them for the few resamples whose median lies outside its window)."""

    def __init__(self, counts: np.ndarray, members: np.ndarray) -> None:
        self._counts, self._members = counts, members

    def __getitem__(self, rows: Any) -> np.ndarray:
        return self._counts[rows][:, self._members]


#: A column whose non-zero rows span at least this share of the clusters is multiplied
#: with all of them (one product with many columns costs about as much as with a few).
_FULL_SPAN = 0.75
#: Column ranges are widened to multiples of this share of the clusters.
_SPAN_GRID = 64


def _column_spans(stacked: Sequence[np.ndarray],
                  n_clusters: int) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """The stacked columns grouped by the range of clusters where they are not zero.

    A cell over part of the clusters (one domain, say, whose scenario ids sort together)
    has columns that are zero outside a range; multiplying only that range of the counts
    does the same sums without the zeros. The products are exact (:func:`exact_parts`), so
    they are the same bits as with every cluster. Returns ``(lo, hi) -> (column indices,
    the columns' rows lo:hi side by side)``.

    >>> spans = _column_spans([np.array([0.0, 1, 2, 0, 0, 0, 0, 0]),
    ...                        np.array([1.0, 1, 1, 1, 1, 1, 1, 0])], 8)   # a grid of 1
    >>> {k: v[0].tolist() for k, v in spans.items()}
    {(1, 3): [0], (0, 8): [1]}
    """
    groups: dict[tuple[int, int], list[int]] = {}
    # ranges widened to a grid of 1/64 of the clusters, so that columns over nearly the same
    # range (a domain's metrics, whose first and last non-zero clusters differ by a few)
    # make one product, not one each
    step = max(1, -(-n_clusters // _SPAN_GRID))
    for j, column in enumerate(stacked):
        nonzero = np.flatnonzero(column)
        if len(nonzero):
            lo = int(nonzero[0]) // step * step
            hi = min(n_clusters, -(-(int(nonzero[-1]) + 1) // step) * step)
        else:
            lo = hi = 0
        if hi - lo >= _FULL_SPAN * n_clusters:
            lo, hi = 0, n_clusters
        groups.setdefault((lo, hi), []).append(j)
    return {(lo, hi): (np.array(cols), np.column_stack([stacked[j][lo:hi] for j in cols]))
            for (lo, hi), cols in groups.items()}


def shared_distributions(cells, streams, n_clusters, args) -> list[list[np.ndarray | None]]:
    """Bootstrap distributions of every cell's estimators from one resampling of all the
    clusters.

    ``cells`` holds, per cell, its clusters (indices among the ``n_clusters`` that
    ``streams`` draw) and its estimators, built over those clusters alone. Each
    estimator's per-cluster columns are spread over all the clusters (zero elsewhere),
    split by :func:`exact_parts` and stacked with every other's (duplicates once), so that
    each block of counts is multiplied once: a product with many columns costs about as
    much as one with two, being bound by reading the counts. The products are exact, so an
    estimator's values depend on the draws and its own columns only, not on the other
    metrics or cells, nor on the block size.
    """
    out: list[list[np.ndarray | None]] = []
    work = []  # (cell index, estimator index, members, estimator, plan)
    stacked: list[np.ndarray] = []
    index: dict[bytes, int] = {}   # a column's sha256 -> its place (duplicates once)
    for k, (members, estimators) in enumerate(cells):
        out.append([None] * len(estimators))
        for i in _needed(estimators, args.method):
            est = estimators[i]
            columns = getattr(est, "columns", None)
            if columns is None and getattr(est, "totals_only", False):
                columns = est.totals_columns  # Kaplan–Meier: events and rows at risk
            plan = None
            if columns is not None:  # else a median gathered row by row: it needs counts
                plan = []
                for j in range(columns.shape[1]):
                    spread = np.zeros(n_clusters)
                    spread[members] = columns[:, j]
                    where = []
                    for part in exact_parts(spread, n_clusters):
                        key = hashlib.sha256(part.tobytes()).digest()
                        if key not in index:
                            index[key] = len(stacked)
                            stacked.append(part)
                        where.append(index[key])
                    plan.append(where)
            work.append((k, i, members, est, plan, []))
    if not work:
        return out
    spans = _column_spans(stacked, n_clusters)
    n_stacked = len(stacked)
    del stacked, index   # the spans hold the columns now (a million episodes: 146 MB)
    for counts in _blocks(streams, n_clusters, args.n_resamples):
        products = None
        if spans:
            products = np.empty((len(counts), n_stacked))
            for (lo, hi), (columns, matrix) in spans.items():
                products[:, columns] = counts[:, lo:hi] @ matrix
        for _, _, members, est, plan, part in work:
            if plan is None:
                part.append(est.on_counts(counts[:, members]))
                continue
            totals = np.empty((len(counts), len(plan)))
            for j, where in enumerate(plan):
                total = products[:, where[0]].copy()
                for w in where[1:]:
                    total += products[:, w]
                totals[:, j] = total
            part.append(est.from_totals(totals, _CellWeights(counts, members)))
    for k, i, _, _, _, part in work:
        out[k][i] = np.concatenate(part)
    return out
