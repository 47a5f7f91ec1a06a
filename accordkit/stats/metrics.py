"""The metric specification shared by :func:`summarize` and :func:`compare`.

A metric is written in one of three forms:

- a column name, ``"task_success"``: the NaN-aware mean of that column;
- a ``(numerator, denominator)`` pair of column names: the ratio of their sums;
- a :class:`Metric`, which names the metric and may ask for a median.

:func:`as_metric` turns any of the three into a :class:`Metric`, so the rest of the
package only ever sees one form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["Metric", "MetricLike", "as_metric"]

_STATS = ("mean", "median", "km_median")


@dataclass(frozen=True)
class Metric:
    """A named statistic of one column, or of a pair of columns.

    Parameters
    ----------
    name : str
        The label of the metric in result frames (the ``metric`` column).
    column : str or tuple of (str, str)
        One column, or a ``(numerator, denominator)`` pair. With one column and
        ``stat="mean"`` the metric is the mean of the non-NaN values; with a pair it is
        ``sum(numerator) / sum(denominator)`` over the rows where both are non-NaN.
    stat : {"mean", "median", "km_median"}, default "mean"
        ``"median"`` takes the median of the non-NaN rows of one column; NaN rows are
        reported as censored (``n_censored``), not silently dropped. ``"km_median"``
        takes a ``(time, observed)`` pair of columns and gives the Kaplan–Meier median of
        right-censored times (:mod:`accordkit.stats.survival`).
    higher_is_better : bool, default True
        Direction used by :func:`compare` for ``prob_improvement`` and tie groups
        (``False`` for costs such as redundant tool calls or turns to recovery).

    Examples
    --------
    >>> from accordkit.stats import Metric
    >>> Metric("TCRR", ("n_redundant_calls", "n_tcrr_calls"), higher_is_better=False).kind
    'ratio'
    >>> Metric("turns to recover", "gsrt_turns", stat="median").kind
    'median'
    """

    name: str
    column: str | tuple[str, str]
    stat: Literal["mean", "median", "km_median"] = "mean"
    higher_is_better: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Metric name must be a non-empty string, got {self.name!r}")
        column = self.column
        if isinstance(column, list):
            column = tuple(column)
            object.__setattr__(self, "column", column)
        if isinstance(column, tuple):
            if len(column) != 2 or not all(isinstance(c, str) for c in column):
                raise TypeError(
                    f"Metric {self.name!r}: a ratio needs a (numerator, denominator) pair "
                    f"of column names, got {column!r}"
                )
        elif not isinstance(column, str):
            raise TypeError(
                f"Metric {self.name!r}: column must be a column name or a "
                f"(numerator, denominator) pair, got {column!r}"
            )
        if self.stat not in _STATS:
            raise ValueError(
                f"Metric {self.name!r}: stat must be 'mean' or 'median', got {self.stat!r} "
                "('km_median' takes a (time, observed) pair)"
            )
        if self.stat == "km_median" and not isinstance(column, tuple):
            raise ValueError(
                f"Metric {self.name!r}: a Kaplan-Meier median needs a (time, observed) pair "
                f"of columns, not {column!r}"
            )
        if self.stat == "median" and isinstance(column, tuple):
            raise ValueError(
                f"Metric {self.name!r}: a median needs one column, not the pair {column!r}"
            )
        if not isinstance(self.higher_is_better, bool):
            raise TypeError(
                f"Metric {self.name!r}: higher_is_better must be True or False, "
                f"got {self.higher_is_better!r}"
            )

    @property
    def kind(self) -> Literal["mean", "ratio", "median", "km_median"]:
        """``"mean"``, ``"ratio"``, ``"median"`` or ``"km_median"``: how it is computed."""
        if self.stat == "km_median":
            return "km_median"
        if isinstance(self.column, tuple):
            return "ratio"
        return self.stat

    @property
    def columns(self) -> tuple[str, ...]:
        """The frame columns the metric reads."""
        return self.column if isinstance(self.column, tuple) else (self.column,)


MetricLike: TypeAlias = str | tuple[str, str] | Metric


def as_metric(item: MetricLike) -> Metric:
    """Normalise a column name, a ``(num, den)`` pair or a :class:`Metric` to a Metric.

    Examples
    --------
    >>> as_metric(("n_recovered", "n_shifts")).name
    'n_recovered/n_shifts'
    """
    if isinstance(item, Metric):
        return item
    if isinstance(item, str):
        return Metric(item, item)
    if isinstance(item, tuple):
        if len(item) == 2 and all(isinstance(c, str) for c in item):
            return Metric(f"{item[0]}/{item[1]}", item)
        raise TypeError(
            f"a ratio metric is a (numerator, denominator) pair of column names, got {item!r}"
        )
    raise TypeError(
        "each metric must be a column name, a (numerator, denominator) pair or a "
        f"Metric, got {type(item).__name__} {item!r}"
    )
