"""Splitting a frame into table cells, and a cell's rows into clusters.

Shared by :func:`summarize` and :func:`compare`: both walk the cells of the ``by``
columns in sorted order and number the clusters of a cell in sorted order of their id,
so results do not depend on the order of the frame's rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._resample import stable_key

__all__ = ["Cell", "iter_cells", "sorted_codes", "cluster_codes", "local_clusters", "cell_label",
           "value_rank", "metric_ranks", "in_rank_order"]


@dataclass(frozen=True)
class Cell:
    """The rows (positions in the frame) of one combination of the ``by`` values."""

    values: tuple
    key: tuple
    positions: np.ndarray


def sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of a column, numbered in sorted order of its values.

    A categorical column is numbered by its values too, not by the order of its categories
    (``pd.factorize`` follows that order): the same ids as categories or as strings give
    the same clusters, the same resamples and the same tables.

    >>> ids = pd.Series(pd.Categorical(["b", "a", "b"], categories=["b", "a"]))
    >>> sorted_codes(ids)[0].tolist(), list(sorted_codes(ids)[1])
    ([1, 0, 1], ['a', 'b'])
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.cat.reorder_categories(column.cat.categories.sort_values())
    codes, uniques = pd.factorize(column, sort=True)
    return codes.astype(np.intp), pd.Index(uniques)


def cluster_codes(frame: pd.DataFrame, cluster: str | None) -> np.ndarray:
    """Integer cluster code of every row (sorted order); each row its own with ``None``."""
    if cluster is None:
        return np.arange(len(frame), dtype=np.intp)
    return sorted_codes(frame[cluster])[0]


def value_rank(columns: Sequence[np.ndarray]) -> np.ndarray:
    """A rank of the rows by their values in ``columns``, the same for the same rows in any
    order (rows with equal values tie, which cannot change a sum).

    A metric's estimator gets a cell's rows in this order (:func:`metric_ranks`,
    :func:`in_rank_order`), so a cluster's values are added in the same order however the
    frame was sorted: floating-point addition is not
    associative (``0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1``), and a shuffled frame would move
    an interval by one unit in the last place. One hash per row, one sort: cheap next to a
    sort of the rows by every column.
    """
    n = len(columns[0]) if columns else 0
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in columns:
            h = h * np.uint64(1_000_003) + pd.util.hash_array(np.asarray(col, dtype=np.float64))
    rank = np.empty(n, dtype=np.intp)
    rank[np.argsort(h, kind="stable")] = np.arange(n)
    return rank


def metric_ranks(values: Mapping[str, np.ndarray],
                 columns: Sequence[Sequence[str]]) -> list[np.ndarray | None]:
    """A :func:`value_rank` for each metric, by its own columns (``values[name]``).

    Each metric's rows are added in its own value order: a rank over several metrics'
    values would order a metric's rows by the others' too, and its sums (so its interval,
    in the last digit) would depend on which metrics were computed with it.

    A metric whose columns hold whole numbers only (successes, counts) gets ``None``: its
    sums are exact in any order, so its rows need no ranking (a frame of millions of
    preferences skips a hash and sorts).
    """
    memo: dict[tuple[str, ...], np.ndarray | None] = {}
    out = []
    for cols in columns:
        key = tuple(cols)
        if key not in memo:
            arrays = [values[c] for c in key]
            memo[key] = None if all(_exact_in_any_order(a) for a in arrays) else value_rank(
                arrays)
        out.append(memo[key])
    return out


def _exact_in_any_order(column: np.ndarray) -> bool:
    """Whole numbers (NaN aside) small enough that any sum of them is exact."""
    finite = column[~np.isnan(column)]
    return bool(np.all(finite == np.round(finite))
                and (len(finite) == 0 or np.abs(finite).sum() < 2.0**52))


def in_rank_order(positions: np.ndarray, rank: np.ndarray | None) -> np.ndarray:
    """The permutation that lists ``positions`` (rows of a cell) in ``rank`` order (as
    they are when ``rank`` is None: the metric's sums do not depend on the order)."""
    if rank is None:
        return np.arange(len(positions))
    return np.argsort(rank[positions], kind="stable")


def iter_cells(frame: pd.DataFrame, by: tuple[str, ...]) -> Iterator[Cell]:
    """Yield the cells of ``frame`` grouped by ``by`` (one cell when ``by`` is empty).

    Missing group values form their own cell instead of being dropped. A cell lists its
    rows in frame order (:func:`in_rank_order` puts them in a metric's value order).
    """
    if not by:
        yield Cell((), (), np.arange(len(frame)))
        return
    grouped = frame.groupby(list(by), sort=True, dropna=False, observed=True)
    ids = grouped.ngroup().to_numpy()
    keys = grouped.size().index
    order = np.argsort(ids, kind="stable")
    bounds = np.cumsum(np.bincount(ids, minlength=len(keys)))[:-1]
    for values, positions in zip(keys, np.split(order, bounds), strict=True):
        values = values if isinstance(values, tuple) else (values,)
        yield Cell(values, stable_key(by, values), positions)


def local_clusters(global_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber a cell's cluster codes 0..C-1 (keeping sorted order).

    Returns the local code of each row and the global code of each local cluster.
    """
    members, local = np.unique(global_codes, return_inverse=True)
    return local.astype(np.intp), members


def cell_label(by: tuple[str, ...], values: tuple) -> str:
    """A readable name for a cell in warnings."""
    if not by:
        return "(all rows)"
    return ", ".join(f"{b}={v!r}" for b, v in zip(by, values, strict=True))
