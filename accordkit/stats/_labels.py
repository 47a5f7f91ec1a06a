"""Judge verdicts joined to human labels: the input of the judge-correction functions.

:func:`join_labels` reads the labels (a frame, or a CSV file), checks them and returns the
verdict frame with one more column, the label (missing where an item has none), so
:func:`~accordkit.stats.judge_calibration`, :func:`~accordkit.stats.corrected_rate` and
:func:`~accordkit.stats.ppi_mean` share one reading of the input and one set of errors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validate import _check_by, _check_column, _check_confidence

__all__ = ["LabelledItems", "join_labels", "group_frames", "resample_counts", "LABEL_COLUMN", "DEFAULT_ID_COLUMNS"]

#: the name of the joined label column (kept apart from any column of the verdict frame)
LABEL_COLUMN = "_human_label"
#: id columns looked for when ``on`` is not given, in this order
DEFAULT_ID_COLUMNS = ("episode_id", "item_id")

_TRUE = {"true", "t", "yes", "y", "1", "1.0", "pass", "passed"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", "fail", "failed"}


@dataclass(frozen=True)
class LabelledItems:
    """Verdicts with their labels: ``frame`` has the verdict, ``LABEL_COLUMN`` (NaN where an
    item is unlabelled), the ``by`` columns and, if given, the cluster column."""

    frame: pd.DataFrame
    verdict: str
    by: tuple[str, ...]
    cluster: str | None
    confidence: float
    source: str


def _as_values(column: pd.Series, *, what: str, source: str, ids: pd.Index,
               binary: bool) -> np.ndarray:
    """A column as floats (0/1 when ``binary``); a value that is neither is an error naming
    the file, the row's id and the field."""
    if binary and column.dtype == bool:
        return column.to_numpy(dtype=float)
    out = np.empty(len(column))
    for i, value in enumerate(column.tolist()):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            out[i] = np.nan
            continue
        if isinstance(value, bool | np.bool_):
            out[i] = float(value)
        elif isinstance(value, str):
            text = value.strip().lower()
            if binary and text in _TRUE:
                out[i] = 1.0
            elif binary and text in _FALSE:
                out[i] = 0.0
            else:
                try:
                    out[i] = float(text)
                except ValueError:
                    out[i] = np.inf  # caught below
        else:
            try:
                out[i] = float(value)
            except (TypeError, ValueError):
                out[i] = np.inf
        bad = not np.isfinite(out[i]) or (binary and out[i] not in (0.0, 1.0))
        if bad:
            raise ValueError(
                f"{source}: {what} of {_name(ids[i])!r} is {value!r}; expected "
                + ("a boolean (true/false, 1/0)" if binary else "a number")
            )
    return out


def _read_labels(labels: object) -> tuple[pd.DataFrame, str]:
    if isinstance(labels, pd.DataFrame):
        return labels, "labels"
    if isinstance(labels, str | os.PathLike):
        path = os.fspath(labels)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"labels file {path!r} does not exist")
        try:
            frame = pd.read_csv(path)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"labels file {path!r} is not a readable CSV: {err}") from err
        return frame, f"labels file {path!r}"
    raise TypeError(f"`labels` must be a DataFrame or the path of a CSV file, got "
                    f"{type(labels).__name__}")


def _keys(verdicts: pd.DataFrame, labels: pd.DataFrame,
          on: tuple[str, ...]) -> tuple[pd.Index, pd.Index]:
    """The item ids of both frames as indexes: numbers where both columns are numeric,
    text otherwise (a CSV reads ``7`` as a number where the verdicts may hold ``"7"``)."""
    def column(frame: pd.DataFrame, other: pd.DataFrame, col: str) -> pd.Series:
        numeric = (pd.api.types.is_numeric_dtype(frame[col])
                   and pd.api.types.is_numeric_dtype(other[col]))
        return frame[col] if numeric else frame[col].astype(str).astype(object)

    if len(on) == 1:
        return (pd.Index(column(verdicts, labels, on[0])),
                pd.Index(column(labels, verdicts, on[0])))
    return tuple(pd.MultiIndex.from_arrays([column(a, b, c) for c in on])
                 for a, b in ((verdicts, labels), (labels, verdicts)))


def _name(key: object) -> object:
    return "/".join(map(str, key)) if isinstance(key, tuple) else key


def _show(index: pd.Index, mask: np.ndarray) -> list:
    return [_name(k) for k in index[mask].unique()[:5].tolist()]


def join_labels(
    verdicts: pd.DataFrame,
    labels: object,
    *,
    on: str | Sequence[str] | None,
    verdict: str,
    label: str,
    by: str | Sequence[str] | None,
    cluster: str | None,
    confidence: float,
    binary: bool,
) -> LabelledItems:
    """Check the verdicts and labels, and join the labels onto the verdicts by ``on``.

    Every labelled item must have a verdict, and an item is labelled at most once; a
    verdict or label that is not a boolean (or, with ``binary=False``, a number) is an
    error naming the source, the item and the field.
    """
    if not isinstance(verdicts, pd.DataFrame):
        raise TypeError(f"`verdicts` must be a pandas DataFrame, got {type(verdicts).__name__}")
    if len(verdicts) == 0:
        raise ValueError("`verdicts` has no rows")
    frame_l, source = _read_labels(labels)
    if on is None:
        on = tuple(c for c in DEFAULT_ID_COLUMNS if c in frame_l.columns and c in verdicts.columns)
        if not on:
            raise ValueError(f"{source} and `verdicts` share none of the id columns "
                             f"{list(DEFAULT_ID_COLUMNS)}; name the join columns with `on=`")
    elif isinstance(on, str):
        on = (on,)
    on = tuple(on)
    for col in on:
        _check_column(verdicts, col, "on")
        if col not in frame_l.columns:
            raise ValueError(f"{source} has no id column {col!r}; its columns are "
                             f"{[str(c) for c in frame_l.columns]}")
    _check_column(verdicts, verdict, "verdict")
    if label not in frame_l.columns:
        raise ValueError(f"{source} has no label column {label!r}; its columns are "
                         f"{[str(c) for c in frame_l.columns]}")
    by_cols = _check_by(verdicts, by, (LABEL_COLUMN,))
    if cluster is not None:
        _check_column(verdicts, cluster, "cluster")
        if verdicts[cluster].isna().any():
            raise ValueError(f"`cluster` column {cluster!r} has missing values; every "
                             "verdict needs its scenario")
    conf = _check_confidence(confidence)

    v_ids, l_ids = _keys(verdicts, frame_l, on)
    if v_ids.has_duplicates:
        raise ValueError(f"`verdicts` has more than one row for the item(s) "
                         f"{_show(v_ids, v_ids.duplicated())} (by {list(on)})")
    if l_ids.has_duplicates:
        raise ValueError(f"{source} labels the item(s) {_show(l_ids, l_ids.duplicated())} "
                         f"more than once (by {list(on)})")
    where = v_ids.get_indexer(l_ids)
    unknown = where < 0
    if unknown.any():
        raise ValueError(
            f"{source}: {int(unknown.sum())} labelled item(s) have no verdict, e.g. "
            f"{_show(l_ids, unknown)}; label only judged items (or filter the labels first)")

    values = _as_values(frame_l[label], what=f"the label {label!r}", source=source,
                        ids=l_ids, binary=binary)
    if np.isnan(values).any():
        first = _show(l_ids, np.isnan(values))[0]
        raise ValueError(f"{source}: the label {label!r} of {first!r} is missing")
    verdict_values = _as_values(verdicts[verdict], what=f"the verdict {verdict!r}",
                                source="`verdicts`", ids=v_ids, binary=binary)
    if np.isnan(verdict_values).any():
        first = _show(v_ids, np.isnan(verdict_values))[0]
        raise ValueError(f"`verdicts`: the verdict {verdict!r} of {first!r} is missing; drop "
                         "unjudged items first")

    keep = [*dict.fromkeys([*by_cols, *([cluster] if cluster else [])])]
    out = verdicts[keep].copy()
    out[verdict] = verdict_values
    joined = np.full(len(out), np.nan)
    joined[where] = values
    out[LABEL_COLUMN] = joined
    return LabelledItems(out.reset_index(drop=True), verdict, by_cols, cluster, conf, source)


def group_frames(items: LabelledItems):
    """``(key, frame)`` per group of the ``by`` columns, in sorted order (one group if none)."""
    if not items.by:
        yield (), items.frame
        return
    for key, sub in items.frame.groupby(list(items.by), sort=True, dropna=False, observed=True):
        yield (key if isinstance(key, tuple) else (key,)), sub


def resample_counts(rng: np.random.Generator, n_clusters: int, size: int) -> np.ndarray:
    """``(size, n_clusters)``: how often each cluster is drawn in each of ``size`` bootstrap
    resamples of ``n_clusters`` clusters with replacement."""
    draws = rng.integers(0, n_clusters, size=(size, n_clusters))
    draws += np.arange(size)[:, None] * n_clusters
    return np.bincount(draws.ravel(), minlength=size * n_clusters).reshape(size, n_clusters)
