"""Splitting a frame into table cells, and a cell's rows into clusters.

Shared by :func:`summarize` and :func:`compare`: both walk the cells of the ``by``
columns in sorted order and number the clusters of a cell in sorted order of their id,
so results do not depend on the order of the frame's rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._resample import stable_key

__all__ = ["Cell", "iter_cells", "sorted_codes", "cluster_codes", "local_clusters", "cell_label"]


@dataclass(frozen=True)
class Cell:
    """The rows (positions in the frame) of one combination of the ``by`` values."""

    values: tuple
    key: tuple
    positions: np.ndarray


def sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of a column, numbered in sorted order of its values."""
    codes, uniques = pd.factorize(column, sort=True)
    return codes.astype(np.intp), pd.Index(uniques)


def cluster_codes(frame: pd.DataFrame, cluster: str | None) -> np.ndarray:
    """Integer cluster code of every row (sorted order); each row its own with ``None``."""
    if cluster is None:
        return np.arange(len(frame), dtype=np.intp)
    return sorted_codes(frame[cluster])[0]


def iter_cells(frame: pd.DataFrame, by: tuple[str, ...]) -> Iterator[Cell]:
    """Yield the cells of ``frame`` grouped by ``by`` (one cell when ``by`` is empty).

    Missing group values form their own cell instead of being dropped.
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
