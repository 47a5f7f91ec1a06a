"""``compare``: paired differences between models, with adjusted p-values and tie groups."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy
from scipy import stats

from . import _estimators
from ._adjust import adjust_pvalues, tie_groups
from ._cells import cell_label, in_rank_order, iter_cells, metric_ranks, sorted_codes
from ._estimators import (
    MedianEstimator,
    RatioEstimator,
    distributions_from_totals,
    estimator_for,
    jackknife_affordable,
    totals_suffice,
)
from ._intervals import TIE_RTOL, confidence_interval, robust_se
from ._options import resolve_aliases
from ._resample import assignment_chunks, cell_rng, count_chunks, digest, swap_chunks
from ._validate import COMPARE_COLUMNS, CompareArgs, _compare_iv, metric_values
from ._warnings import BCaFallbackWarning, DegenerateIntervalWarning, UnpairedComparisonWarning
from .metrics import Metric, MetricLike
from .summarize import SMALL_CLUSTERS, SMALL_EVENTS

__all__ = ["compare", "compare_metrics"]

Estimator = RatioEstimator | MedianEstimator
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
        models = [_cell_models(replace(cell, positions=cell.positions[in_rank_order(
                                   cell.positions, rank)]),
                               model_codes, model_values, scen_codes, scen_values, vals, args)
                  for vals, args, rank in zip(values, every, ranks, strict=True)]
        if len(models[0]) < 2:
            continue
        if first.baseline is not None and first.baseline not in models[0]:
            for note in notes:
                note["baseline"].append(label)
            continue
        _draw_resamples(models, cell, first)
        keys = dict(zip(first.by, cell.values, strict=True))
        for k, args in enumerate(every):
            rows[k].extend({**keys, **r} for r in _compare_cell(models[k], cell, args, label,
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


@dataclass
class _Model:
    """One value of ``between`` within a cell: its rows, scenarios and estimator."""

    name: Hashable
    scenarios: np.ndarray  # global scenario codes, sorted
    scenario_values: tuple  # the scenario ids themselves (for seeds)
    set_id: str
    rows_values: dict[str, np.ndarray]
    local_codes: np.ndarray
    estimator: Estimator
    theta_b: np.ndarray | None = None


def _cell_models(cell, model_codes, model_values, scen_codes, scen_values, values,
                 args: CompareArgs) -> dict[Hashable, _Model]:
    pos_all = cell.positions
    out: dict[Hashable, _Model] = {}
    cell_models = model_codes[pos_all]
    for code in np.unique(cell_models):
        pos = pos_all[cell_models == code]
        scen, local = np.unique(scen_codes[pos], return_inverse=True)
        ids = tuple(scen_values[scen])
        name = model_values[code]
        name = name.item() if isinstance(name, np.generic) else name
        rows_values = {col: v[pos] for col, v in values.items()}
        est = estimator_for(args.metric, rows_values, np.arange(len(pos)), local, len(scen))
        out[name] = _Model(name, scen, ids, digest(ids), rows_values, local, est)
    return out


def _draw_resamples(models: list[dict[Hashable, _Model]], cell, args: CompareArgs) -> None:
    """Every model's bootstrap distribution (``theta_b``), for each metric's models.

    One set of draws per distinct scenario set: models that share their scenarios share the
    draws (paired); different sets are drawn independently. The draws are seeded from the
    cell and the scenario set only, so the metrics (``models[k]``, same models and
    scenarios) share them too: each block of counts serves them all.
    """
    by_set: dict[str, list[Hashable]] = {}
    for name, model in models[0].items():
        by_set.setdefault(model.set_id, []).append(name)
    for set_id, names in by_set.items():
        n = len(models[0][names[0]].scenarios)
        rng = cell_rng(args.seed, cell.key + (("__scenarios__", set_id),))
        group = [per_metric[name] for per_metric in models for name in names]
        estimators = [model.estimator for model in group]
        if totals_suffice(estimators, args.n_resamples):
            # totals alone: every model's from one product per block of resamples
            found = distributions_from_totals(estimators, [(rng, np.arange(n))], n,
                                              args.n_resamples)
            for model, values in zip(group, found, strict=True):
                model.theta_b = values
            continue
        parts: list[list[np.ndarray]] = [[] for _ in group]
        for counts in count_chunks([(rng, np.arange(n))], n, args.n_resamples):
            for part, model in zip(parts, group, strict=True):
                part.append(model.estimator.on_counts(counts))
        for part, model in zip(parts, group, strict=True):
            model.theta_b = np.concatenate(part)


def _compare_cell(models: dict[Hashable, _Model], cell, args: CompareArgs, label: str,
                  notes: dict[str, list[str]]) -> list[dict]:
    """The comparisons of one metric in one cell (the resamples already drawn)."""
    names = list(models)  # sorted order of the between column
    if args.baseline is not None:
        pairs = [(name, args.baseline) for name in names if name != args.baseline]
    else:
        pairs = [(b, a) for a, b in itertools.combinations(names, 2)]

    p_cache: dict[tuple, float] = {}

    def p_value(x: Hashable, y: Hashable) -> float:
        key = tuple(sorted((x, y), key=names.index))
        if key not in p_cache:
            p_cache[key] = _p_value(models[key[1]], models[key[0]], cell, args)
        return p_cache[key]

    results = [_compare_pair(models[c], models[b], args, label, notes) for c, b in pairs]
    p_values = [p_value(c, b) for c, b in pairs]
    p_adjusted = adjust_pvalues(p_values, args.adjust)

    all_pairs = list(itertools.combinations(names, 2))
    all_adjusted = dict(zip(all_pairs, adjust_pvalues([p_value(a, b) for a, b in all_pairs],
                                                      args.adjust), strict=True))
    groups = _groups(models, names, all_adjusted, args)

    out = []
    for (c, b), res, p, p_adj in zip(pairs, results, p_values, p_adjusted, strict=True):
        out.append({
            "metric": args.metric.name,
            args.between: c,
            "baseline": b,
            **res,
            "p_value": p,
            "p_adjusted": p_adj,
            "tie_group": groups.get(c, pd.NA),
            "baseline_tie_group": groups.get(b, pd.NA),
            "confidence": args.confidence,
            "n_resamples": args.n_resamples,
            "seed": args.seed,
            "adjust": args.adjust,
            "test": args.test,
        })
    return out


def _groups(models, names, all_adjusted, args: CompareArgs) -> dict[Hashable, int]:
    sign = 1.0 if args.metric.higher_is_better else -1.0
    finite = [n for n in names if np.isfinite(models[n].estimator.estimate)]
    ranked = sorted(finite, key=lambda n: (-sign * models[n].estimator.estimate,
                                           names.index(n)))

    def p_adj(x, y):
        key = (x, y) if names.index(x) < names.index(y) else (y, x)
        p = all_adjusted[key]
        return p if np.isfinite(p) else 1.0

    return tie_groups(ranked, p_adj, 1 - args.confidence)


def _compare_pair(cand: _Model, base: _Model, args: CompareArgs, label: str,
                  notes: dict[str, list[str]]) -> dict:
    ec, eb = cand.estimator, base.estimator
    paired = cand.set_id == base.set_id
    shared = np.intersect1d(cand.scenarios, base.scenarios)
    n_pairs = len(shared)
    delta = ec.estimate - eb.estimate
    delta_b = cand.theta_b - base.theta_b
    pair_label = f"{cand.name!r} vs {base.name!r} in {label}"
    if not paired:
        notes["unpaired"].append(
            f"{pair_label} ({len(cand.scenarios)} and {len(base.scenarios)} scenarios, "
            f"{n_pairs} shared)"
        )

    n_open = int(np.count_nonzero(np.isposinf(cand.theta_b) | np.isposinf(base.theta_b)))
    if n_open:
        notes["not_reached"].append(f"{pair_label}: the median was not reached in {n_open} "
                                    f"of {len(delta_b)} resamples")
    if ec.n_clusters < 2 or eb.n_clusters < 2:
        low = high = np.nan
        used = args.method
        notes["degenerate"].append(pair_label)
    else:
        method = args.method
        if method == "bca" and not (jackknife_affordable(ec) and jackknife_affordable(eb)):
            method = "percentile"
            notes["median_jackknife"].append(pair_label)
        jackknifes = []
        if method == "bca":          # only BCa needs the jackknifes
            jack_c, jack_b = ec.jackknife(), eb.jackknife()
            jackknifes = [jack_c - jack_b] if paired else [jack_c, -jack_b]
        t_se, t_df = _t_se(ec, eb, paired, delta_b) if method == "t" else (None, 0.0)
        interval = confidence_interval(
            delta, delta_b, method=method, confidence=args.confidence,
            jackknifes=jackknifes, t_se=t_se, t_df=t_df,
        )
        low, high, used = interval.low, interval.high, interval.method
        if interval.note == "bca-undefined":
            notes["bca"].append(pair_label)

    # the scenarios the metric can use on both sides (a completed-only metric may use few)
    n_units = (len(np.intersect1d(ec.contributing(), eb.contributing())) if paired
               else min(ec.n_clusters, eb.n_clusters))
    return {
        "estimate": ec.estimate,
        "baseline_estimate": eb.estimate,
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "prob_improvement": _prob_improvement(cand, base, paired, args),
        "n_pairs": n_pairs,
        "paired": paired,
        "ci_method": used,
        "small_cell": bool(n_units < SMALL_CLUSTERS
                           or min(ec.n_events, eb.n_events) < SMALL_EVENTS),
    }


def _t_se(ec: Estimator, eb: Estimator, paired: bool, delta_b: np.ndarray):
    """Standard error and df of the difference for the t interval."""
    ic, ib = ec.influence(), eb.influence()
    if ic is None or ib is None:  # medians: bootstrap standard deviation
        n = len(ec.contributing()) if paired else min(ec.n_clusters, eb.n_clusters)
        return None, float(n - 1)
    if paired:
        used = np.union1d(ec.contributing(), eb.contributing())
        return robust_se(ic[used] - ib[used])
    se_c, df_c = robust_se(ic[ec.contributing()])
    se_b, df_b = robust_se(ib[eb.contributing()])
    var_c, var_b = se_c**2, se_b**2
    # Welch-Satterthwaite degrees of freedom for two independent estimates
    denom = (var_c**2 / df_c if df_c > 0 else np.inf) + (var_b**2 / df_b if df_b > 0 else np.inf)
    df = (var_c + var_b) ** 2 / denom if denom > 0 else min(df_c, df_b)
    return float(np.sqrt(var_c + var_b)), float(df)


def _snap_ties(values: np.ndarray) -> np.ndarray:
    """``values`` with each run of neighbours within
    :data:`~accordkit.stats._intervals.TIE_RTOL` of each other (relative, at least 1
    absolute unit) set to its first: a per-scenario mean of the same scores added in
    another order may differ in the last bit."""
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if len(ranked) < 2:
        return values
    gap = np.diff(ranked) > TIE_RTOL * np.maximum(1.0, np.abs(ranked[1:]))
    group = np.concatenate([[0], np.cumsum(gap)])
    out = np.empty_like(values)
    out[order] = ranked[np.flatnonzero(np.concatenate([[True], gap]))][group]
    return out


def _prob_improvement(cand: _Model, base: _Model, paired: bool, args: CompareArgs) -> float:
    vc, vb = cand.estimator.cluster_values(), base.estimator.cluster_values()
    sign = 1.0 if args.metric.higher_is_better else -1.0
    if paired:
        ok = np.isfinite(vc) & np.isfinite(vb)
        if not ok.any():
            return np.nan
        d = sign * (vc[ok] - vb[ok])
        tie = np.abs(d) <= TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(vc[ok]), np.abs(vb[ok])))
        return float(np.mean((d > 0) & ~tie) + 0.5 * np.mean(tie))
    vc, vb = sign * vc[np.isfinite(vc)], sign * vb[np.isfinite(vb)]
    if len(vc) == 0 or len(vb) == 0:
        return np.nan
    # Mann-Whitney: U / (n1 n2) = P(X > Y) + P(X = Y) / 2, from mid-ranks
    ranks = stats.rankdata(_snap_ties(np.concatenate([vc, vb])))
    u = ranks[: len(vc)].sum() - len(vc) * (len(vc) + 1) / 2
    return float(u / (len(vc) * len(vb)))


def _p_value(cand: _Model, base: _Model, cell, args: CompareArgs) -> float:
    """Two-sided p-value of ``cand - base`` by bootstrap or permutation."""
    ec, eb = cand.estimator, base.estimator
    delta = ec.estimate - eb.estimate
    if not np.isfinite(delta) or ec.n_clusters < 2 or eb.n_clusters < 2:
        return np.nan
    if args.test == "bootstrap":
        d = cand.theta_b - base.theta_b
        d = d[~np.isnan(d)]  # +-inf (a Kaplan–Meier median not reached) is a side
        if len(d) == 0:
            return np.nan
        # a difference of zero in exact arithmetic may come out a unit in the last place
        # either side of it, by the order its sums were added in: ties count both ways
        tol = TIE_RTOL * max(1.0, abs(delta))
        tail = min(np.count_nonzero(d <= tol), np.count_nonzero(d >= -tol)) + 1
        return float(min(1.0, 2 * tail / (len(d) + 1)))
    return _permutation_p(cand, base, delta, cell, args)


def _permutation_p(cand: _Model, base: _Model, delta: float, cell, args: CompareArgs) -> float:
    """Permutation p-value: labels swapped within scenarios (paired) or across them.

    Both models' rows go into one estimator over a doubled cluster space (the
    candidate's clusters, then the baseline's); a permutation is a 0/1 weighting of that
    space, so each permuted statistic is again a matrix product.
    """
    paired = cand.set_id == base.set_id
    nc, nb = len(cand.scenarios), len(base.scenarios)
    rows = {col: np.concatenate([cand.rows_values[col], base.rows_values[col]])
            for col in cand.rows_values}
    codes = np.concatenate([cand.local_codes, base.local_codes + nc])
    joint = estimator_for(args.metric, rows, np.arange(len(codes)), codes, nc + nb)
    rng = cell_rng(args.seed, cell.key + (("__permutation__", (cand.name, base.name)),))
    if paired:
        chunks = (np.hstack([1 - f, f]) for f in swap_chunks(rng, nc, args.n_resamples))
    else:
        chunks = assignment_chunks(rng, nc, nb, args.n_resamples)
    null = np.concatenate([joint.on_counts(w) - joint.on_counts(1 - w) for w in chunks])
    null = null[~np.isnan(null)]
    # relative tolerance so that permutations equal to the observed one up to rounding
    # count as "at least as extreme" (as scipy.stats.permutation_test does)
    tol = TIE_RTOL * max(1.0, abs(delta))
    return float((np.count_nonzero(np.abs(null) >= abs(delta) - tol) + 1) / (len(null) + 1))


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
