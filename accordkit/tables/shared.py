"""What the builders of every benchmark share: :func:`accordkit.summarize`'s options
(``cluster``, ``method``, ``confidence``, ``n_resamples``, ``seed``, ``strata``) from
notebook parameters, row selection, TUE's points. (Several tables from one draw:
:func:`accordkit.stats.summarize_tables`.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..metrics.tue import tue_points

__all__ = ["bootstrap_options", "select", "with_tue_points"]


def bootstrap_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`accordkit.summarize` options from notebook parameters.

    ``method`` is read from ``method`` or, as the notebooks name it, ``ci_method``.

    Examples
    --------
    >>> bootstrap_options({"ci_method": "percentile", "n_resamples": 500})["method"]
    'percentile'
    """
    return {
        "cluster": params.get("cluster", "scenario_id"),
        "method": params.get("method", params.get("ci_method", "bca")),
        "confidence": params.get("confidence", 0.95),
        "n_resamples": int(params.get("n_resamples", 10_000)),
        "seed": int(params.get("seed", 0)),
    }


def select(frame: pd.DataFrame, *, models: Sequence[str] | None = None,
           domains: Sequence[str] | None = None,
           benchmarks: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of a score frame restricted to some agent models, domains or benchmarks.

    Examples
    --------
    >>> f = pd.DataFrame({"agent_model": ["a", "b"], "domain": ["x", "x"],
    ...                   "benchmark": ["accord", "accord"]})
    >>> select(f, models=["b"])["agent_model"].tolist()
    ['b']
    """
    keep = pd.Series(True, index=frame.index)
    for column, values in (("agent_model", models), ("domain", domains),
                           ("benchmark", benchmarks)):
        if values:   # one name given as text is that name, not its letters
            keep &= frame[column].isin([values] if isinstance(values, str) else list(values))
    return frame[keep].reset_index(drop=True)


def with_tue_points(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episode frame with ``tue_points`` (weighted correct and valid calls), so that
    TUE of a group is a ratio of sums over its calls."""
    correct = episodes["n_correct_calls"].astype("Float64")
    valid = episodes["n_valid_param_calls"].astype("Float64")
    return episodes.assign(tue_points=tue_points(correct, valid).astype(float))
