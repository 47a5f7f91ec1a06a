"""The comparisons of one table cell: every model's resamples, each pair's interval, the
p-values adjusted as one family, and the tie groups (see :func:`~.compare.compare`)."""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ._adjust import adjust_pvalues, tie_groups
from ._bootstrap import shared_distributions
from ._estimators import estimator_for, jackknife_affordable
from ._intervals import confidence_interval, robust_se
from ._paired import Estimator, Model, difference_p_value, prob_improvement
from ._resample import cell_rng, digest
from ._validate import CompareArgs
from .summarize import SMALL_CLUSTERS, SMALL_EVENTS

__all__ = ["cell_models", "draw_resamples", "compare_cell"]


def cell_models(cell, model_codes, model_values, scen_codes, scen_values, values,
                 args: CompareArgs) -> dict[Hashable, Model]:
    pos_all = cell.positions
    out: dict[Hashable, Model] = {}
    cell_models = model_codes[pos_all]
    for code in np.unique(cell_models):
        pos = pos_all[cell_models == code]
        scen, local = np.unique(scen_codes[pos], return_inverse=True)
        ids = tuple(scen_values[scen])
        name = model_values[code]
        name = name.item() if isinstance(name, np.generic) else name
        rows_values = {col: v[pos] for col, v in values.items()}
        est = estimator_for(args.metric, rows_values, np.arange(len(pos)), local, len(scen))
        out[name] = Model(name, scen, ids, digest(ids), rows_values, local, est)
    return out


def draw_resamples(models: list[dict[Hashable, Model]], cell, args: CompareArgs) -> None:
    """Every model's bootstrap distribution (``theta_b``), for each metric's models.

    One set of draws per distinct scenario set: models that share their scenarios share the
    draws (paired); different sets are drawn independently. The draws are seeded from the
    cell and the scenario set only, so the metrics (``models[k]``, same models and
    scenarios) share them too: each block of counts serves them all, in one exact product
    (:func:`~._bootstrap.shared_distributions`).
    """
    by_set: dict[str, list[Hashable]] = {}
    for name, model in models[0].items():
        by_set.setdefault(model.set_id, []).append(name)
    every = SimpleNamespace(method="percentile", n_resamples=args.n_resamples)
    for set_id, names in by_set.items():
        n = len(models[0][names[0]].scenarios)
        rng = cell_rng(args.seed, cell.key + (("__scenarios__", set_id),))
        group = [per_metric[name] for per_metric in models for name in names]
        # one exact product per block for every model and metric of the set (see
        # shared_distributions): a model's digits do not depend on the others
        (found,) = shared_distributions([(np.arange(n), [m.estimator for m in group])],
                                        [(rng, np.arange(n))], n, every)
        for model, values in zip(group, found, strict=True):
            model.theta_b = values


def compare_cell(models: dict[Hashable, Model], cell, args: CompareArgs, label: str,
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
            p_cache[key] = difference_p_value(models[key[1]], models[key[0]], cell, args)
        return p_cache[key]

    results = [compare_pair(models[c], models[b], args, label, notes) for c, b in pairs]
    p_values = [p_value(c, b) for c, b in pairs]
    p_adjusted = adjust_pvalues(p_values, args.adjust)

    all_pairs = list(itertools.combinations(names, 2))
    all_adjusted = dict(zip(all_pairs, adjust_pvalues([p_value(a, b) for a, b in all_pairs],
                                                      args.adjust), strict=True))
    groups = tie_groups_of(models, names, all_adjusted, args)

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


def tie_groups_of(models, names, all_adjusted, args: CompareArgs) -> dict[Hashable, int]:
    sign = 1.0 if args.metric.higher_is_better else -1.0
    finite = [n for n in names if np.isfinite(models[n].estimator.estimate)]
    ranked = sorted(finite, key=lambda n: (-sign * models[n].estimator.estimate,
                                           names.index(n)))

    def p_adj(x, y):
        key = (x, y) if names.index(x) < names.index(y) else (y, x)
        p = all_adjusted[key]
        return p if np.isfinite(p) else 1.0

    return tie_groups(ranked, p_adj, 1 - args.confidence)


def compare_pair(cand: Model, base: Model, args: CompareArgs, label: str,
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
        t_se, t_df = difference_se(ec, eb, paired, delta_b) if method == "t" else (None, 0.0)
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
        "prob_improvement": prob_improvement(cand, base, paired, args),
        "n_pairs": n_pairs,
        "paired": paired,
        "ci_method": used,
        "small_cell": bool(n_units < SMALL_CLUSTERS
                           or min(ec.n_events, eb.n_events) < SMALL_EVENTS),
    }


def difference_se(ec: Estimator, eb: Estimator, paired: bool, delta_b: np.ndarray):
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
