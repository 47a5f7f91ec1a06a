"""``compare``: paired differences between models, with adjusted p-values and tie groups.

The public functions, their options and their result frame; one cell's comparisons are
:mod:`._compare_cell`'s, the tests between two models :mod:`._paired`'s.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import scipy

from . import _estimators
from ._cells import cell_label, in_rank_order, iter_cells, metric_ranks, sorted_codes
from ._compare_cell import cell_models, compare_cell, draw_resamples
from ._options import resolve_aliases
from ._validate import COMPARE_COLUMNS, CompareArgs, _compare_iv, metric_values
from ._warnings import BCaFallbackWarning, DegenerateIntervalWarning, UnpairedComparisonWarning
from .metrics import Metric, MetricLike

__all__ = ["compare", "compare_metrics"]

_COMPARE_DTYPES = {
    "metric": object, "baseline": object, "estimate": float, "baseline_estimate": float,
    "delta": float, "ci_low": float, "ci_high": float, "p_value": float, "p_adjusted": float,
    "prob_improvement": float, "tie_group": "Int64", "baseline_tie_group": "Int64",
    "n_pairs": np.int64, "paired": bool, "ci_method": object, "small_cell": bool,
    "confidence": float, "n_resamples": np.int64, "seed": np.int64, "adjust": object,
    "test": object,
}


def _empty_result(by: object, between: object) -> pd.DataFrame:
    """The result of an empty frame: no rows, the usual columns and dtypes."""
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    columns = [*keys, "metric", str(between), *COMPARE_COLUMNS[1:]]
    dtypes = {c: _COMPARE_DTYPES.get(c, object) for c in columns}
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})[columns]


def compare(
    frame: pd.DataFrame,
    metric: MetricLike,
    *,
    between: str = "agent_model",
    baseline: Hashable | None = None,
    cluster: str = "scenario_id",
    by: str | Sequence[str] | None = None,
    method: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    adjust: str = "holm",
    test: str = "bootstrap",
    **deprecated: Any,
) -> pd.DataFrame:
    """Differences of one metric between groups (models), paired on shared scenarios.

    Two models run on the same scenarios are compared *paired*: each bootstrap resample
    draws scenarios, and both models' metrics are computed on the same drawn scenarios
    (all rollouts of a drawn scenario come along), so scenario difficulty cancels out of
    the difference. Models whose scenario sets differ are compared unpaired, with an
    :class:`UnpairedComparisonWarning`: each model's scenarios are then resampled
    independently.

    Parameters
    ----------
    frame : DataFrame
        Tidy scores with a ``between`` column and a ``cluster`` column. An empty frame
        gives an empty result with the usual columns.
    metric : str, (str, str) or Metric
        One metric, in any form :func:`summarize` accepts. Set
        ``Metric(..., higher_is_better=False)`` for costs: it decides what "better" means
        for ``prob_improvement`` and the tie groups (deltas are always
        candidate minus baseline).
    between : str, default "agent_model"
        The column whose values are compared.
    baseline : optional
        Compare every other value against this one. ``None`` compares all pairs; the
        value sorted first of each pair is then the baseline.
    cluster : str, default "scenario_id"
        The pairing and resampling unit (``pair_on`` before; that name is deprecated).
    by : str, list of str, or None
        Compare separately within each cell of these columns (e.g. ``"domain"``); each
        cell is its own family for the p-value adjustment.
    method : {"bca", "percentile", "basic", "t"}, default "bca"
        Interval of the difference; as in :func:`summarize` (BCa uses a
        leave-one-scenario-out jackknife and falls back to percentile when undefined).
    confidence : float, default 0.95
        Confidence level of the intervals; ``1 - confidence`` is also the significance
        level of the tie groups.
    n_resamples : int, default 10_000
        Bootstrap resamples (and permutations for ``test="permutation"``).
    seed : int, default 0
        Seeds per-cell generators; never the global RNG.
    adjust : {"holm", "bh", "none"}, default "holm"
        Adjustment of the p-values across the comparisons of a cell: Holm (family-wise
        error), Benjamini-Hochberg (false discovery rate) or none.
    test : {"bootstrap", "permutation"}, default "bootstrap"
        ``"bootstrap"``: two-sided p-value from the bootstrap distribution of the
        difference, ``min(1, 2 * min(1 + #{d* <= 0}, 1 + #{d* >= 0}) / (B + 1))`` (the
        smallest level whose percentile interval excludes 0). ``"permutation"``: swap
        the two models' labels within each shared scenario at random (the sign flip of
        per-scenario differences; for unpaired data, whole scenarios are re-assigned
        between the models) and count ``|d*| >= |d|``, with the add-one correction.

    Returns
    -------
    DataFrame
        One row per comparison: the ``by`` columns, ``metric``, the ``between`` column
        (the candidate), ``baseline``, ``estimate`` and ``baseline_estimate``, ``delta``
        (candidate minus baseline), ``ci_low``, ``ci_high``, ``p_value``,
        ``p_adjusted``, ``prob_improvement``, ``tie_group`` and ``baseline_tie_group``,
        ``n_pairs`` (scenarios the two share), ``paired``, ``ci_method`` (interval used),
        ``small_cell`` (fewer than 10 scenarios or 10 events), and the settings. The
        settings are also in ``DataFrame.attrs["provenance"]``.

    Notes
    -----
    ``prob_improvement`` is the probability that, on a random shared scenario, the
    candidate's per-scenario metric is better than the baseline's (ties count half).
    When the comparison is unpaired it is the probability that a random scenario of the
    candidate beats a random scenario of the baseline (the Mann-Whitney probability).

    Tie groups rank every value of ``between`` in a cell by its estimate, best first.
    The best one leads group 1, which also takes every model whose difference from the
    leader is not significant: adjusted p-value not below ``1 - confidence``. The best
    model left leads group 2, and so on. The p-values behind the groups are those of
    *all* pairs of models, adjusted together by ``adjust``, whatever ``baseline`` is, so
    the grouping does not depend on the choice of baseline (with a baseline, the
    reported ``p_adjusted`` belongs to the smaller baseline family and can be smaller).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from accordkit.stats import compare
    >>> rng = np.random.default_rng(0)
    >>> difficulty = rng.uniform(0.2, 0.8, 50)
    >>> frame = pd.DataFrame({
    ...     "agent_model": np.repeat(["a", "b"], 150),
    ...     "scenario_id": np.tile(np.repeat(np.arange(50), 3), 2),
    ...     "success": rng.random(300) < np.tile(np.repeat(difficulty, 3), 2)
    ...                + np.repeat([0.0, 0.15], 150),
    ... })
    >>> out = compare(frame, "success", baseline="a", n_resamples=2_000)
    >>> out[["agent_model", "baseline", "n_pairs", "paired", "tie_group"]]
      agent_model baseline  n_pairs  paired  tie_group
    0           b        a       50    True          1
    >>> bool(out.delta.iloc[0] > 0 and out.ci_low.iloc[0] > 0)
    True
    """
    opts = resolve_aliases("compare", deprecated, {"cluster": cluster, "method": method},
                           {"cluster": "scenario_id", "method": "bca"})
    if isinstance(frame, pd.DataFrame) and frame.empty:
        return _empty_result(by, between)
    (out,) = _compare_all(frame, [metric], between=between, baseline=baseline,
                          cluster=opts["cluster"], by=by, method=opts["method"],
                          confidence=confidence, n_resamples=n_resamples, seed=seed,
                          adjust=adjust, test=test)
    return out


def compare_metrics(
    frame: pd.DataFrame,
    metrics: Sequence[MetricLike],
    *,
    between: str = "agent_model",
    baseline: Hashable | None = None,
    cluster: str = "scenario_id",
    by: str | Sequence[str] | None = None,
    method: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    adjust: str = "holm",
    test: str = "bootstrap",
) -> pd.DataFrame:
    """:func:`compare` of several metrics, drawing each cell's resamples once for all.

    A cell's bootstrap resamples are seeded from its key and its scenario set, never from
    the metric, so every metric of a cell draws the same ones: here they are drawn once and
    every metric's statistics are computed on them. The result equals the :func:`compare`
    results of the metrics one at a time, in their order, concatenated (same rows, same
    warnings per metric), at the cost of about one comparison.

    Parameters
    ----------
    frame : DataFrame
        As in :func:`compare`.
    metrics : sequence of str, (str, str) or Metric
        The metrics, each in a form :func:`compare` accepts.
    between, baseline, cluster, by, method, confidence, n_resamples, seed, adjust, test
        As in :func:`compare`.

    Returns
    -------
    DataFrame
        The rows of :func:`compare` for each metric in turn.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from accordkit.stats import compare, compare_metrics
    >>> rng = np.random.default_rng(0)
    >>> frame = pd.DataFrame({"agent_model": np.repeat(["a", "b"], 60),
    ...                       "scenario_id": np.tile(np.arange(30).repeat(2), 2),
    ...                       "success": rng.random(120) < 0.6, "cost": rng.random(120)})
    >>> both = compare_metrics(frame, ["success", "cost"], baseline="a", n_resamples=500)
    >>> one = pd.concat([compare(frame, m, baseline="a", n_resamples=500)
    ...                  for m in ("success", "cost")], ignore_index=True)
    >>> bool(both.equals(one))
    True
    """
    if isinstance(metrics, str | Metric) or (isinstance(metrics, tuple) and len(metrics) == 2
                                             and all(isinstance(m, str) for m in metrics)):
        raise TypeError("`metrics` is a sequence of metrics; for one metric call `compare`")
    metrics = list(metrics)
    if not metrics:
        raise ValueError("`metrics` is empty: give at least one metric")
    if isinstance(frame, pd.DataFrame) and frame.empty:
        return pd.concat([_empty_result(by, between) for _ in metrics], ignore_index=True)
    parts = _compare_all(frame, metrics, between=between, baseline=baseline,
                         cluster=cluster, by=by, method=method, confidence=confidence,
                         n_resamples=n_resamples, seed=seed, adjust=adjust, test=test)
    out = pd.concat(parts, ignore_index=True)
    out.attrs["provenance"] = {**parts[0].attrs["provenance"], "function": "compare_metrics",
                               "metric": [p.attrs["provenance"]["metric"] for p in parts]}
    return out


def _compare_all(frame: pd.DataFrame, metrics: list[Any], *, between: Any, baseline: Any,
                 cluster: Any, by: Any, method: Any, confidence: Any, n_resamples: Any,
                 seed: Any, adjust: Any, test: Any) -> list[pd.DataFrame]:
    """The :func:`compare` frame of each metric, from one draw of each cell's resamples."""
    every = [_compare_iv(frame, m, between, baseline, cluster, by, method, confidence,
                         n_resamples, seed, adjust, test) for m in metrics]
    first = every[0]
    frame = first.frame
    values = [{col: metric_values(frame, col) for col in args.metric.columns}
              for args in every]
    model_codes, model_values = sorted_codes(frame[first.between])
    scen_codes, scen_values = sorted_codes(frame[first.pair_on])

    notes = [{"bca": [], "degenerate": [], "unpaired": [], "baseline": [],
              "median_jackknife": [], "not_reached": []} for _ in every]
    rows: list[list[dict]] = [[] for _ in every]
    # each metric adds a cell's rows in its own value order: bit-stable sums
    ranks = metric_ranks({c: v for vals in values for c, v in vals.items()},
                         [list(vals) for vals in values])
    for cell in iter_cells(frame, first.by):
        label = cell_label(first.by, cell.values)
        models = [cell_models(replace(cell, positions=cell.positions[in_rank_order(
                                   cell.positions, rank)]),
                               model_codes, model_values, scen_codes, scen_values, vals, args)
                  for vals, args, rank in zip(values, every, ranks, strict=True)]
        if len(models[0]) < 2:
            continue
        if first.baseline is not None and first.baseline not in models[0]:
            for note in notes:
                note["baseline"].append(label)
            continue
        draw_resamples(models, cell, first)
        keys = dict(zip(first.by, cell.values, strict=True))
        for k, args in enumerate(every):
            rows[k].extend({**keys, **r} for r in compare_cell(models[k], cell, args, label,
                                                                  notes[k]))
    out = []
    for args, note, metric_rows in zip(every, notes, rows, strict=True):
        _warn(note, args)
        out.append(_result_frame(metric_rows, args))
    return out


def _result_frame(rows: list[dict], args: CompareArgs) -> pd.DataFrame:
    columns = [*args.by, "metric", args.between, *COMPARE_COLUMNS[1:]]
    out = pd.DataFrame(rows, columns=columns)
    for col in ("tie_group", "baseline_tie_group"):
        out[col] = out[col].astype("Int64")
    out.attrs["provenance"] = {
        "function": "compare",
        "metric": args.metric.name,
        "between": args.between,
        "baseline": args.baseline,
        "pair_on": args.pair_on,
        "cluster": args.pair_on,
        "by": list(args.by),
        "method": args.method,
        "confidence": args.confidence,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "adjust": args.adjust,
        "test": args.test,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }
    return out


def _listing(items: list[str], limit: int = 8) -> str:
    shown = "; ".join(items[:limit])
    return shown + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def _warn(notes: dict[str, list[str]], args: CompareArgs) -> None:
    # compare / compare_metrics -> _compare_all -> here: point at their caller
    stacklevel = 4
    if notes["unpaired"]:
        warnings.warn(
            f"scenario sets differ, so these were compared unpaired (each side's "
            f"{args.pair_on!r} values resampled independently): {_listing(notes['unpaired'])}",
            UnpairedComparisonWarning,
            stacklevel=stacklevel,
        )
    if notes["median_jackknife"]:
        warnings.warn(
            f"BCa for a median needs one jackknife median per cluster; above "
            f"{_estimators.DENSE_JACKKNIFE_MAX_CLUSTERS:,} clusters the percentile interval "
            f"is used instead (the `ci_method` column says so): "
            f"{_listing(notes['median_jackknife'])}",
            BCaFallbackWarning,
            stacklevel=stacklevel,
        )
    if notes["bca"]:
        warnings.warn(
            f"BCa interval undefined for {_listing(notes['bca'])}; used the percentile "
            "interval instead (the `ci_method` column says so)",
            BCaFallbackWarning,
            stacklevel=stacklevel,
        )
    if notes["not_reached"]:
        warnings.warn(
            "Kaplan–Meier median not reached in some resamples: they count as +inf, so a "
            f"difference's interval can be open: {_listing(notes['not_reached'])}",
            DegenerateIntervalWarning,
            stacklevel=stacklevel,
        )
    if notes["degenerate"]:
        warnings.warn(
            "fewer than two contributing scenarios on one side, so no interval or p-value "
            f"for {_listing(notes['degenerate'])}",
            DegenerateIntervalWarning,
            stacklevel=stacklevel,
        )
    if notes["baseline"]:
        warnings.warn(
            f"baseline {args.baseline!r} has no rows in {_listing(notes['baseline'])}; "
            "those cells have no comparisons",
            DegenerateIntervalWarning,
            stacklevel=stacklevel,
        )
