"""Input validation for :func:`summarize` and :func:`compare`.

One ``_*_iv`` function per public function checks and normalises every argument, with
a message that names the argument, the offending value and what was expected, so the
numerical code can assume clean input (the scipy ``_bootstrap_iv`` pattern).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .metrics import Metric, MetricLike, as_metric

__all__ = ["METHODS", "ADJUSTS", "TESTS", "SUMMARY_COLUMNS", "COMPARE_COLUMNS", "SummarizeArgs", "CompareArgs",
           "_summarize_iv", "_compare_iv", "metric_items", "metric_values"]

METHODS = ("bca", "percentile", "basic", "t")
#: columns of a summarize result after the ``by`` columns
SUMMARY_COLUMNS = (
    "metric", "stat", "estimate", "ci_low", "ci_high", "n_clusters", "n_rows", "n_events",
    "n_censored", "ci_method", "small_cell", "confidence", "n_resamples", "seed",
)
#: columns of a compare result after the ``by`` columns and the ``between`` column
COMPARE_COLUMNS = (
    "metric", "baseline", "estimate", "baseline_estimate", "delta", "ci_low", "ci_high",
    "p_value", "p_adjusted", "prob_improvement", "tie_group", "baseline_tie_group", "n_pairs",
    "paired", "ci_method", "small_cell", "confidence", "n_resamples", "seed", "adjust", "test",
)
ADJUSTS = ("holm", "bh", "none")
TESTS = ("bootstrap", "permutation")


@dataclass(frozen=True)
class SummarizeArgs:
    frame: pd.DataFrame
    metrics: tuple[Metric, ...]
    by: tuple[str, ...]
    cluster: str | None
    strata: str | None
    method: str
    confidence: float
    n_resamples: int
    seed: int


@dataclass(frozen=True)
class CompareArgs:
    frame: pd.DataFrame
    metric: Metric
    between: str
    baseline: Any
    pair_on: str
    by: tuple[str, ...]
    method: str
    confidence: float
    n_resamples: int
    seed: int
    adjust: str
    test: str


def _columns_hint(frame: pd.DataFrame) -> str:
    cols = [str(c) for c in frame.columns]
    shown = ", ".join(repr(c) for c in cols[:12])
    return shown + (f", ... ({len(cols)} columns)" if len(cols) > 12 else "")


def _check_frame(frame: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    if len(frame) == 0:
        raise ValueError("`frame` has no rows")
    return frame


def _check_column(frame: pd.DataFrame, column: object, arg: str) -> str:
    if not isinstance(column, str):
        raise TypeError(f"`{arg}` must be a column name (str), got {column!r}")
    if column not in frame.columns:
        raise ValueError(
            f"`{arg}` column {column!r} is not in the frame; columns are {_columns_hint(frame)}"
        )
    return column


def _check_complete(frame: pd.DataFrame, column: str, arg: str) -> None:
    n_missing = int(frame[column].isna().sum())
    if n_missing:
        raise ValueError(
            f"`{arg}` column {column!r} has {n_missing} missing value(s); every row needs one"
        )


def _check_reserved(name: str, arg: str, reserved: tuple[str, ...]) -> None:
    if name in reserved:
        raise ValueError(
            f"`{arg}` column {name!r} has the name of a result column; rename it first, "
            f"e.g. frame.rename(columns={{{name!r}: {name + '_'!r}}})"
        )


def _check_by(frame: pd.DataFrame, by: object, reserved: tuple[str, ...]) -> tuple[str, ...]:
    if by is None:
        return ()
    if isinstance(by, str):
        by = (by,)
    if not isinstance(by, list | tuple):
        raise TypeError(f"`by` must be a column name, a list of names or None, got {by!r}")
    names = tuple(_check_column(frame, b, "by") for b in by)
    for name in names:
        _check_reserved(name, "by", reserved)
    if len(set(names)) != len(names):
        raise ValueError(f"`by` names a column twice: {list(names)!r}")
    return names


def _check_metric_columns(frame: pd.DataFrame, metric: Metric) -> None:
    for col in metric.columns:
        if col not in frame.columns:
            raise ValueError(
                f"metric {metric.name!r} reads column {col!r}, which is not in the frame; "
                f"columns are {_columns_hint(frame)}"
            )
        dtype = frame[col].dtype
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
            raise TypeError(
                f"column {col!r} of metric {metric.name!r} must be numeric or boolean, "
                f"got dtype {dtype}"
            )
        values = metric_values(frame, col)
        n_inf = int(np.isinf(values).sum())
        if n_inf:
            raise ValueError(
                f"column {col!r} of metric {metric.name!r} has {n_inf} infinite value(s); "
                "use NaN for a value that does not apply"
            )


def metric_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A metric column as float64, with missing values (None, NA) as NaN."""
    return frame[column].to_numpy(dtype=np.float64, na_value=np.nan)


def metric_items(metrics: object) -> list[MetricLike]:
    """``metrics`` as :func:`~accordkit.summarize` reads its argument: a list of metrics (a
    tuple is one ratio metric; several metrics go in a list)."""
    if isinstance(metrics, str | tuple | Metric):
        return [metrics]
    if isinstance(metrics, list):
        return metrics
    raise TypeError(
        "`metrics` must be a column name, a (numerator, denominator) tuple, a Metric, "
        f"or a list of these, got {type(metrics).__name__}"
    )


def _check_metrics(frame: pd.DataFrame, metrics: object) -> tuple[Metric, ...]:
    items = metric_items(metrics)
    if not items:
        raise ValueError("`metrics` is empty: give at least one metric")
    out = tuple(as_metric(m) for m in items)
    seen: set[str] = set()
    for metric in out:
        if metric.name in seen:
            raise ValueError(f"metric name {metric.name!r} is used twice in `metrics`")
        seen.add(metric.name)
        _check_metric_columns(frame, metric)
    return out


def _check_method(method: object) -> str:
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    return method.lower()


def _check_confidence(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"`confidence` must be a number, got {confidence!r}")
    if not 0 < confidence < 1:
        raise ValueError(
            f"`confidence` must be strictly between 0 and 1 (e.g. 0.95), got {confidence!r}"
        )
    return float(confidence)


def _check_n_resamples(n_resamples: object) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral):
        raise TypeError(f"`n_resamples` must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"`n_resamples` must be at least 1, got {n_resamples!r}")
    return int(n_resamples)


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"`seed` must be an integer (each cell derives its own generator from it), "
            f"got {seed!r}"
        )
    return int(seed)


def _check_choice(value: object, choices: tuple[str, ...], arg: str) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"`{arg}` must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value.lower()


def _check_nested(frame: pd.DataFrame, cluster: str, strata: str) -> None:
    per_cluster = frame.groupby(cluster, sort=True, observed=True)[strata].nunique()
    spread = per_cluster[per_cluster > 1]
    if len(spread):
        raise ValueError(
            f"cluster {spread.index[0]!r} of column {cluster!r} lies in "
            f"{int(spread.iloc[0])} strata of {strata!r}; each cluster must belong to one "
            "stratum"
        )


def _summarize_iv(
    frame: object,
    metrics: object,
    by: object,
    cluster: object,
    strata: object,
    method: object,
    confidence: object,
    n_resamples: object,
    seed: object,
) -> SummarizeArgs:
    frame = _check_frame(frame)
    metrics_ = _check_metrics(frame, metrics)
    by_ = _check_by(frame, by, SUMMARY_COLUMNS)
    if cluster is not None:
        cluster = _check_column(frame, cluster, "cluster")
        _check_complete(frame, cluster, "cluster")
    if strata is not None:
        strata = _check_column(frame, strata, "strata")
        _check_complete(frame, strata, "strata")
        if cluster is not None:
            _check_nested(frame, cluster, strata)
    return SummarizeArgs(
        frame=frame,
        metrics=metrics_,
        by=by_,
        cluster=cluster,
        strata=strata,
        method=_check_method(method),
        confidence=_check_confidence(confidence),
        n_resamples=_check_n_resamples(n_resamples),
        seed=_check_seed(seed),
    )


def _compare_iv(
    frame: object,
    metric: object,
    between: object,
    baseline: object,
    pair_on: object,
    by: object,
    method: object,
    confidence: object,
    n_resamples: object,
    seed: object,
    adjust: object,
    test: object,
) -> CompareArgs:
    frame = _check_frame(frame)
    if isinstance(metric, list):
        raise TypeError("`compare` takes one metric, not a list; call it once per metric")
    (metric_,) = _check_metrics(frame, metric)
    between = _check_column(frame, between, "between")
    _check_complete(frame, between, "between")
    _check_reserved(between, "between", COMPARE_COLUMNS)
    pair_on = _check_column(frame, pair_on, "cluster")
    _check_complete(frame, pair_on, "cluster")
    by_ = _check_by(frame, by, COMPARE_COLUMNS)
    if between in by_:
        raise ValueError(f"`by` must not contain the `between` column {between!r}")
    levels = pd.unique(frame[between])
    if len(levels) < 2:
        raise ValueError(
            f"`between` column {between!r} has {len(levels)} distinct value(s); "
            "a comparison needs at least two"
        )
    if baseline is not None and baseline not in set(levels.tolist()):
        shown = ", ".join(repr(v) for v in sorted(levels.tolist(), key=str)[:12])
        raise ValueError(f"`baseline` {baseline!r} is not a value of {between!r}; values are {shown}")
    return CompareArgs(
        frame=frame,
        metric=metric_,
        between=between,
        baseline=baseline,
        pair_on=pair_on,
        by=by_,
        method=_check_method(method),
        confidence=_check_confidence(confidence),
        n_resamples=_check_n_resamples(n_resamples),
        seed=_check_seed(seed),
        adjust=_check_choice(adjust, ADJUSTS, "adjust"),
        test=_check_choice(test, TESTS, "test"),
    )
