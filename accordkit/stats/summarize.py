"""``summarize``: clustered bootstrap confidence intervals for a table of metrics."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy

from . import _estimators
from ._bootstrap import cell_distributions, overlapping_groups, shared_distributions
from ._cells import (
    cell_label,
    cluster_codes,
    in_rank_order,
    iter_cells,
    local_clusters,
    metric_ranks,
    sorted_codes,
)
from ._estimators import estimator_for, jackknife_affordable
from ._intervals import confidence_interval, robust_se
from ._options import resolve_aliases
from ._resample import cell_rng, digest
from ._validate import SUMMARY_COLUMNS, _summarize_iv, metric_items, metric_values
from ._warnings import BCaFallbackWarning, DegenerateIntervalWarning, MixedBenchmarksWarning
from .metrics import MetricLike, as_metric

__all__ = ["summarize", "summarize_tables", "SMALL_CLUSTERS", "SMALL_EVENTS"]

#: A cell is flagged ``small_cell`` below this many clusters ...
SMALL_CLUSTERS = 10
#: ... or below this many events in the metric's denominator.
SMALL_EVENTS = 10
#: The kinds of note a table collects while it is computed, each a warning at the end.
_NOTE_KINDS = ("bca", "degenerate", "empty", "not_reached", "median_jackknife", "mixed")


def summarize(
    frame: pd.DataFrame,
    metrics: MetricLike | Sequence[MetricLike],
    by: str | Sequence[str] | None = None,
    *,
    cluster: str | None = "scenario_id",
    strata: str | None = None,
    method: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    share_draws: bool = False,
    **deprecated: Any,
) -> pd.DataFrame:
    """Estimate metrics per group with cluster-bootstrap confidence intervals.

    Rows of the same cluster (rollouts of one scenario) are not independent, so the
    bootstrap resamples whole clusters: every resample draws ``C`` clusters with
    replacement from the ``C`` clusters of the cell and recomputes each metric on the
    rows of the drawn clusters.

    Parameters
    ----------
    frame : DataFrame
        Tidy scores: one row per rollout (or per shift, per preference ...). An empty
        frame gives an empty table with the usual columns and dtypes.
    metrics : str, (str, str), Metric, or a list of these
        A column name is the NaN-aware mean of that column (sum of the non-NaN values
        over their count, recomputed on every resample); a ``(numerator, denominator)``
        tuple is the ratio of the column sums over rows where both are non-NaN; a
        :class:`Metric` names either form or asks for a median. A tuple is always one
        ratio metric: put several metrics in a list.
    by : str, list of str, or None
        Grouping columns; each combination of values is one cell. ``None`` or ``()``
        gives a single cell over all rows. Missing group values form their own cell.
    cluster : str or None, default "scenario_id"
        The resampling unit. ``None`` resamples rows (each row its own cluster), which
        is only right when rows are independent. (``pair_on`` and ``task`` are deprecated
        names of this option, ``ci_method`` of ``method``.)
    strata : str, optional
        Resample clusters within each stratum (e.g. ``"domain"``), keeping each
        stratum's number of clusters fixed. Every cluster must lie in one stratum.
    method : {"bca", "percentile", "basic", "t"}, default "bca"
        Interval type. BCa uses a leave-one-cluster-out jackknife for its acceleration
        and falls back to the percentile interval, with a ``BCaFallbackWarning``, when
        it is undefined (e.g. a constant metric). ``"t"`` is the cluster-robust t
        interval: estimate +- t(df) x the linearised cluster-robust standard error,
        ``df = clusters - strata``; medians have no closed form, so for them the
        standard error is the standard deviation of the bootstrap distribution.
    confidence : float, default 0.95
        Two-sided confidence level, strictly between 0 and 1.
    n_resamples : int, default 10_000
        Bootstrap resamples per cell (unused for ``method="t"`` unless there is a median).
    seed : int, default 0
        Each cell draws from a generator seeded by ``(seed, cell values)``, never the
        global RNG; the draws are shared by every metric of the cell, so a cell's
        interval does not change when groups or metrics are added to the table.
    share_draws : bool, default False
        Resample clusters once for all the cells that share clusters instead of once per
        cell: cells whose clusters overlap (directly or through other cells) draw together
        from their clusters (within strata), seeded from ``seed`` and those clusters' ids,
        and each cell's metrics are computed on the drawn clusters' rows of the cell (the
        replicate-weights bootstrap of domain estimates); cells over clusters no other cell
        touches draw apart. A table whose cells share their scenarios (model x method, x
        dynamic ...) then draws once instead of once per cell. Estimates are the same;
        intervals differ from per-cell draws by Monte Carlo error (a cell over part of the
        drawn clusters has a number of them that varies between resamples, as a domain's
        does in a survey replicate). A metric's interval still does not depend on the
        other metrics. Meant for large tables of cells with many clusters each.
        :func:`summarize_tables` shares one resampling among several tables the same way.

    Returns
    -------
    DataFrame
        One row per cell and metric: the ``by`` columns, ``metric``, ``stat`` (mean,
        ratio or median), ``estimate``, ``ci_low``, ``ci_high``, ``n_clusters``
        (clusters that contribute to the metric), ``n_rows`` (rows of the cell),
        ``n_events`` (the denominator: non-NaN rows of a mean or median, the
        denominator sum of a ratio), ``n_censored`` (NaN rows of a median, censored
        rows of a Kaplan–Meier median; NA for other metrics), ``ci_method`` (the interval actually used), ``small_cell`` (fewer than
        10 clusters or 10 events), and the settings ``confidence``, ``n_resamples`` and
        ``seed``. ``DataFrame.attrs["provenance"]`` records every setting. A metric
        with fewer than two contributing clusters gets a NaN interval and a
        ``DegenerateIntervalWarning``; resamples in which a metric has no rows at all
        are left out of its interval, with the same warning. A Kaplan–Meier median not
        reached in a resample counts as ``+inf``, so ``ci_high`` may be ``inf`` (open
        above; :func:`~accordkit.tables.format_table` shows "not reached"), with a
        warning that says in how many resamples.

    See Also
    --------
    compare : paired differences between models.
    format_table : paper-style rendering of the result.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from accordkit.stats import summarize
    >>> rng = np.random.default_rng(1)
    >>> frame = pd.DataFrame({
    ...     "scenario_id": np.repeat(np.arange(40), 3),
    ...     "success": rng.random(120) < np.repeat(rng.uniform(0.3, 0.9, 40), 3),
    ... })
    >>> table = summarize(frame, "success", n_resamples=2_000)
    >>> table[["metric", "n_clusters", "n_rows", "ci_method", "small_cell"]]
        metric  n_clusters  n_rows ci_method  small_cell
    0  success          40     120       bca       False
    >>> row = table.iloc[0]
    >>> bool(row.ci_low < row.estimate < row.ci_high)
    True
    """
    opts = resolve_aliases("summarize", deprecated, {"cluster": cluster, "method": method},
                           {"cluster": "scenario_id", "method": "bca"})
    found, notes = _summarize_all({"": (frame, metrics, by)}, cluster=opts["cluster"],
                                  strata=strata, method=opts["method"], confidence=confidence,
                                  n_resamples=n_resamples, seed=seed, share_draws=share_draws)
    _warn(notes)
    return found[""]


_Tables = Mapping[str, tuple[pd.DataFrame, MetricLike | Sequence[MetricLike],
                            str | Sequence[str] | None]]


def summarize_tables(
    tables: _Tables,
    *,
    cluster: str | None = "scenario_id",
    strata: str | None = None,
    method: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    share_draws: bool = False,
) -> dict[str, pd.DataFrame]:
    """Several :func:`summarize` tables with the same options, each resampling done once.

    The one way to make tables share resamples (docs/statistics.md, "Shared draws"):

    - tables of one frame (the same object) grouped by the same ``by`` are computed as one
      table of all their metrics, split back: their cells draw once for all of them
      (metric names must differ between such tables, or they are computed apart);
    - with ``share_draws=True`` the cells of *all* the tables that share clusters draw
      together, once: a report whose tables are cuts of the same scenarios (pooled, per
      domain, per dynamic ...) draws once instead of once per table. A table whose cells
      already covered the union of the clusters draws exactly what it would alone (the
      seed comes from the drawn clusters' ids), so its numbers are the same to the last
      bit; a table over part of the clusters (per domain, say) gets intervals within Monte
      Carlo error of its own draws.

    Each table is otherwise what ``summarize(frame, metrics, by, ...)`` gives with the same
    options: :func:`summarize` is this function for one table.

    Parameters
    ----------
    tables : mapping of str to (frame, metrics, by)
        The tables, each as :func:`summarize`'s first three arguments. The frames may differ
        (episodes, preferences ...); their ``cluster`` columns name the same clusters.
    cluster, strata, method, confidence, n_resamples, seed, share_draws
        As in :func:`summarize`, the same for every table.

    Returns
    -------
    dict of str to DataFrame
        Each table by its key, in the order of ``tables``, as :func:`summarize` gives it
        (``attrs["provenance"]["draws"]`` names the tables that shared the draws).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(3)
    >>> frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(30), 2),
    ...                       "domain": np.repeat(["a", "b"], 30),
    ...                       "success": rng.random(60) < 0.6})
    >>> out = summarize_tables({"pooled": (frame, "success", None),
    ...                         "by_domain": (frame, "success", "domain")},
    ...                        n_resamples=500, share_draws=True)
    >>> alone = summarize(frame, "success", n_resamples=500, share_draws=True)
    >>> bool(out["pooled"][["ci_low", "ci_high"]].equals(alone[["ci_low", "ci_high"]]))
    True
    >>> out["by_domain"]["domain"].tolist()
    ['a', 'b']
    """
    found, notes = _summarize_all(tables, cluster=cluster, strata=strata, method=method,
                                  confidence=confidence, n_resamples=n_resamples, seed=seed,
                                  share_draws=share_draws)
    _warn(notes)
    return found


def _summarize_all(tables: _Tables, *, share_draws: bool,
                   **options: Any) -> tuple[dict[str, pd.DataFrame], dict[str, list[str]]]:
    """The tables of :func:`summarize_tables` and the notes of their warnings."""
    if not isinstance(share_draws, bool):
        raise TypeError(f"share_draws must be True or False, got {share_draws!r}")
    out = {name: _empty_summary(metrics, by) for name, (frame, metrics, by) in tables.items()
           if isinstance(frame, pd.DataFrame) and frame.empty}
    built: list[tuple[list[str], _Table]] = []
    for names in _passes({k: v for k, v in tables.items() if k not in out}):
        frame, metrics, by = tables[names[0]]
        if len(names) > 1:
            metrics = [m for name in names for m in metric_items(tables[name][1])]
        table = _Table(frame, metrics, by, **options)
        table.build(share_draws=share_draws)
        if share_draws:
            table.release_rows()
        built.append((names, table))
    if share_draws:
        _draw_shared([table for _, table in built])
    shared_by = [name for names, _ in built for name in names]
    draws = ("per cell" if not share_draws else "shared by all cells" if len(shared_by) == 1
             else "shared by the tables " + ", ".join(repr(k) for k in shared_by))
    notes: dict[str, list[str]] = {kind: [] for kind in _NOTE_KINDS}
    for names, table in built:
        for kind, items in table.notes.items():
            notes[kind].extend(items)
        summary = table.result(draws=draws)
        if len(names) == 1:
            out[names[0]] = summary
            continue
        for name in names:   # the rows of each table's metrics, split back
            own = [as_metric(m).name for m in metric_items(tables[name][1])]
            part = summary[summary["metric"].isin(own).to_numpy()].reset_index(drop=True)
            part.attrs["provenance"] = {**summary.attrs["provenance"], "metrics": own}
            out[name] = part
    return {name: out[name] for name in tables}, notes


def _passes(tables: _Tables) -> list[list[str]]:
    """The tables computed as one table of all their metrics (so each cell draws once for
    all of them): tables of the same frame object and ``by`` whose metric names differ.
    Any other table, or one whose arguments ``summarize`` refuses, is computed on its own."""
    passes: list[tuple[tuple | None, list[str], set[str]]] = []
    for name, (frame, metrics, by) in tables.items():
        try:
            key: tuple | None = (id(frame), (by,) if isinstance(by, str) else tuple(by or ()))
            taken = {as_metric(m).name for m in metric_items(metrics)}
        except (TypeError, ValueError):
            key, taken = None, set()
        joined = next((p for p in passes if key is not None and p[0] == key
                       and not p[2] & taken), None)
        if joined is None:
            passes.append((key, [name], taken))
        else:
            joined[1].append(name)
            joined[2].update(taken)
    return [names for _, names, _ in passes]


def _streams(seed: int, key: tuple, cluster_stratum: np.ndarray,
             strata_values: Sequence[Any] | None) -> list:
    """The generators of a resampling and the clusters each draws from (one per stratum)."""
    if strata_values is None:
        return [(cell_rng(seed, key), np.arange(len(cluster_stratum)))]
    return [(cell_rng(seed, key + (("__stratum__", strata_values[h]),)),
             np.flatnonzero(cluster_stratum == h)) for h in np.unique(cluster_stratum)]


class _Table:
    """One table of :func:`summarize`: its cells, their estimators and, once drawn, rows."""

    def __init__(self, frame: pd.DataFrame, metrics: Any, by: Any, *, cluster: str | None,
                 strata: str | None, method: str, confidence: float, n_resamples: int,
                 seed: int) -> None:
        args = _summarize_iv(frame, metrics, by, cluster, strata, method, confidence,
                             n_resamples, seed)
        self.args = args
        self.frame = frame = args.frame
        self.values = {col: metric_values(frame, col) for m in args.metrics
                       for col in m.columns}
        if args.cluster is None:
            self.codes_of_rows = cluster_codes(frame, None)
            self.cluster_ids = self.codes_of_rows
        else:
            self.codes_of_rows, cluster_ids = sorted_codes(frame[args.cluster])
            self.cluster_ids = np.asarray(cluster_ids, dtype=object)
        self.strata_codes = self.strata_values = None
        self._cluster_strata: np.ndarray | None = None
        if args.strata is not None:
            self.strata_codes, self.strata_values = sorted_codes(frame[args.strata])
        self.notes: dict[str, list[str]] = {kind: [] for kind in _NOTE_KINDS}
        self.rows: list[list[dict]] = []
        #: (index in rows, cell) of the cells left for a shared resampling
        self.shared: list[tuple[int, _Cell]] = []

    def cluster_strata(self) -> np.ndarray:
        """The stratum code of every cluster of the table (zeros without strata)."""
        if self._cluster_strata is None:
            out = np.zeros(len(self.cluster_ids), dtype=np.intp)
            if self.strata_codes is not None:
                out[self.codes_of_rows] = self.strata_codes
            self._cluster_strata = out
        return self._cluster_strata

    def release_rows(self) -> None:
        """Forget the row-level arrays once every cell has its estimators: a table waiting
        for a shared resampling keeps only what finishing it needs (six million preference
        rows held by several tables at once would otherwise cost hundreds of MB)."""
        self.cluster_strata()   # remembered
        self.frame = self.values = self.codes_of_rows = self.strata_codes = None

    def finish(self, c: _Cell) -> list[dict]:
        args = self.args
        label = cell_label(args.by, c.values)
        keys = dict(zip(args.by, c.values, strict=True))
        return [{**keys, **_summary_row(metric, est, theta_b, c.cluster_stratum, args, label,
                                        self.notes), "n_rows": c.n_rows}
                for metric, est, theta_b in zip(args.metrics, c.estimators, c.thetas,
                                                 strict=True)]

    def build(self, *, share_draws: bool) -> None:
        """Every cell's estimators; drawn here, one cell at a time, unless shared."""
        args, values = self.args, self.values
        benchmarks = _benchmark_codes(self.frame, args.by)
        # each metric adds a cell's rows in its own value order: bit-stable sums
        ranks = metric_ranks(values, [m.columns for m in args.metrics])
        for cell in iter_cells(self.frame, args.by):
            pos = cell.positions
            if benchmarks is not None:
                _note_mixed(args.metrics, values, benchmarks[pos], pos,
                            cell_label(args.by, cell.values), self.notes)
            codes, members = local_clusters(self.codes_of_rows[pos])
            n_clusters = len(members)
            cluster_stratum = np.zeros(n_clusters, dtype=np.intp)
            if self.strata_codes is not None:
                cluster_stratum[codes] = self.strata_codes[pos]
            estimators = []
            for metric, rank in zip(args.metrics, ranks, strict=True):
                order = in_rank_order(pos, rank)
                estimators.append(estimator_for(metric, values, pos[order], codes[order],
                                                n_clusters))
            c = _Cell(cell.values, len(pos), members, cluster_stratum, estimators)
            if share_draws:  # finished by _draw_shared, from one resampling of the clusters
                self.shared.append((len(self.rows), c))
                self.rows.append([])
            else:
                streams = _streams(args.seed, cell.key, cluster_stratum, self.strata_values)
                c.thetas = cell_distributions(estimators, streams, n_clusters, args)
                self.rows.append(self.finish(c))

    def result(self, *, draws: str) -> pd.DataFrame:
        args = self.args
        rows = [row for cell_rows in self.rows for row in cell_rows]
        out = pd.DataFrame(rows, columns=[*args.by, *SUMMARY_COLUMNS])
        out["n_censored"] = out["n_censored"].astype("Int64")
        out.attrs["provenance"] = {
            "function": "summarize",
            "method": args.method,
            "confidence": args.confidence,
            "n_resamples": args.n_resamples,
            "seed": args.seed,
            "draws": draws,
            "cluster": args.cluster,
            "strata": args.strata,
            "by": list(args.by),
            "metrics": [m.name for m in args.metrics],
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        }
        return out


def _draw_shared(tables: Sequence[_Table]) -> None:
    """Draw once for the shared cells of ``tables`` whose clusters overlap, and finish them.

    Cells whose clusters overlap (directly or through other cells, in any of the tables)
    draw together from their clusters (within strata), seeded from those clusters' ids;
    each cell's statistic is computed on the drawn clusters' rows of the cell.
    """
    cells = [(t, at, c) for t in tables for at, c in t.shared]
    if not cells:
        return
    if len(tables) == 1:
        ids = tables[0].cluster_ids
        where = [np.arange(len(ids))]
    else:  # the clusters of all the tables, by id, in sorted order
        union = pd.Index(np.concatenate([t.cluster_ids for t in tables])).unique()
        union = union.sort_values()
        ids = np.asarray(union, dtype=object)
        where = [union.get_indexer(pd.Index(t.cluster_ids)) for t in tables]
    position = {id(t): w for t, w in zip(tables, where, strict=True)}
    strata_values = None
    stratum = np.zeros(len(ids), dtype=np.intp)
    if tables[0].args.strata is not None:
        names = sorted({v for t in tables for v in t.strata_values})
        code = {v: i for i, v in enumerate(names)}
        strata_values = names
        for t in tables:
            local = np.array([code[v] for v in t.strata_values], dtype=np.intp)
            stratum[position[id(t)]] = local[t.cluster_strata()]
    members = [position[id(t)][c.members] for t, _, c in cells]
    args = tables[0].args
    for group in overlapping_groups(members):
        # one resampling of the clusters of cells that overlap, seeded from their ids;
        # each cell's statistic on the drawn clusters' rows of the cell
        clusters = np.unique(np.concatenate([members[k] for k in group]))
        key = (("__clusters__", digest(ids[clusters])),)
        found = shared_distributions(
            [(np.searchsorted(clusters, members[k]), cells[k][2].estimators) for k in group],
            _streams(args.seed, key, stratum[clusters], strata_values), len(clusters), args)
        for k, thetas in zip(group, found, strict=True):
            table, at, c = cells[k]
            c.thetas = thetas
            table.rows[at] = table.finish(c)


_SUMMARY_DTYPES = {
    "metric": object, "stat": object, "estimate": float, "ci_low": float, "ci_high": float,
    "n_clusters": np.int64, "n_rows": np.int64, "n_events": float, "n_censored": "Int64",
    "ci_method": object, "small_cell": bool, "confidence": float, "n_resamples": np.int64,
    "seed": np.int64,
}


def _empty_summary(metrics: object, by: object) -> pd.DataFrame:
    """The table of an empty frame: no rows, the usual columns and dtypes."""
    if isinstance(metrics, list) and not metrics:
        raise ValueError("`metrics` is empty: give at least one metric")
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    columns = [*keys, *SUMMARY_COLUMNS]
    return pd.DataFrame({c: pd.Series(dtype=_SUMMARY_DTYPES.get(c, object)) for c in columns})


@dataclass
class _Cell:
    """A table cell, its clusters (global codes) and its metrics' estimators."""

    values: tuple
    n_rows: int
    members: np.ndarray
    cluster_stratum: np.ndarray
    estimators: list
    thetas: list | None = None


def _t_se(est, cluster_stratum: np.ndarray) -> tuple[float | None, float]:
    """Cluster-robust standard error over the contributing clusters, and its df.

    Medians have no closed form: ``None`` makes the interval use the bootstrap standard
    deviation instead.
    """
    contributing = est.contributing()
    influence = est.influence()
    strata = cluster_stratum[contributing]
    if influence is None:
        return None, float(len(contributing) - len(np.unique(strata)))
    return robust_se(influence[contributing], strata)


def _summary_row(metric, est, theta_b, cluster_stratum, args, label, notes) -> dict:
    estimate = est.estimate
    n_clusters = est.n_clusters
    n_events = float(est.n_events)
    if n_clusters < 2:
        low = high = np.nan
        used = args.method
        notes["degenerate"].append(f"{metric.name!r} in {label} ({n_clusters} cluster(s))")
    else:
        t_se, t_df = _t_se(est, cluster_stratum) if args.method == "t" else (None, 0.0)
        if theta_b is not None:
            n_empty = int(np.count_nonzero(np.isnan(theta_b)))
            if n_empty:
                notes["empty"].append(
                    f"{metric.name!r} in {label} ({n_empty} of {len(theta_b)} resamples)"
                )
            n_open = int(np.count_nonzero(np.isposinf(theta_b)))
            if n_open:
                notes["not_reached"].append(
                    f"{metric.name!r} in {label}: the median was not reached in {n_open} "
                    f"of {len(theta_b)} resamples"
                )
        method = args.method
        if method == "bca" and not jackknife_affordable(est):
            method = "percentile"
            notes["median_jackknife"].append(f"{metric.name!r} in {label} "
                                             f"({est.n_clusters_total} clusters)")
        interval = confidence_interval(
            estimate, theta_b if theta_b is not None else np.empty(0),
            method=method, confidence=args.confidence,
            jackknifes=[est.jackknife()] if method == "bca" else [],
            t_se=t_se, t_df=t_df,
        )
        low, high, used = interval.low, interval.high, interval.method
        if interval.note == "bca-undefined":
            notes["bca"].append(f"{metric.name!r} in {label}")
    return {
        "metric": metric.name,
        "stat": metric.kind,
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "n_clusters": n_clusters,
        "n_events": n_events,
        "n_censored": est.n_censored if metric.kind in ("median", "km_median") else pd.NA,
        "ci_method": used,
        "small_cell": bool(n_clusters < SMALL_CLUSTERS or n_events < SMALL_EVENTS),
        "confidence": args.confidence,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
    }


def _listing(items: list[str], limit: int = 8) -> str:
    shown = "; ".join(items[:limit])
    return shown + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def _benchmark_codes(frame: pd.DataFrame, by: Sequence[str]) -> np.ndarray | None:
    """Codes of the rows' ``benchmark`` when cells may pool several (else None)."""
    if "benchmark" not in frame.columns or "benchmark" in by:
        return None
    codes, uniques = pd.factorize(frame["benchmark"])
    return codes if len(uniques) > 1 else None


def _note_mixed(metrics: Sequence[Any], values: dict[str, np.ndarray], benchmarks: np.ndarray,
                pos: np.ndarray, label: str, notes: dict[str, list[str]]) -> None:
    """Note the metrics whose rows in this cell come from more than one benchmark."""
    mixed = []
    for metric in metrics:
        valid = np.ones(len(pos), dtype=bool)
        for col in metric.columns:
            valid &= ~np.isnan(values[col][pos])
        if len(np.unique(benchmarks[valid])) > 1:
            mixed.append(metric.name)
    if mixed:
        notes["mixed"].append(f"{label} ({', '.join(mixed)})")


def _warn(notes: dict[str, list[str]]) -> None:
    if notes.get("mixed"):
        warnings.warn(
            "cells pool one metric's values from several benchmarks (their tasks and "
            "scenario ids are not the same ones); add 'benchmark' to `by`: "
            f"{_listing(notes['mixed'])}",
            MixedBenchmarksWarning,
            stacklevel=3,
        )
    if notes.get("median_jackknife"):
        warnings.warn(
            f"BCa for a median needs one jackknife median per cluster; above "
            f"{_estimators.DENSE_JACKKNIFE_MAX_CLUSTERS:,} clusters the percentile interval is used "
            f"instead (the `ci_method` column says so): {_listing(notes['median_jackknife'])}",
            BCaFallbackWarning,
            stacklevel=3,
        )
    if notes["bca"]:
        warnings.warn(
            "BCa interval undefined (constant metric or degenerate jackknife) for "
            f"{_listing(notes['bca'])}; used the percentile interval instead "
            "(the `ci_method` column says so)",
            BCaFallbackWarning,
            stacklevel=3,
        )
    if notes["degenerate"]:
        warnings.warn(
            "fewer than two clusters, so no interval (ci_low/ci_high are NaN) for "
            f"{_listing(notes['degenerate'])}",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
    if notes["not_reached"]:
        warnings.warn(
            "Kaplan–Meier median not reached in some resamples (more than half the shifts "
            "unrecovered): they count as +inf, so an interval can be open above (ci_high "
            f"inf, shown as 'not reached'): {_listing(notes['not_reached'])}",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
    if notes["empty"]:
        warnings.warn(
            "some resamples drew no rows for the metric and were left out of its "
            f"interval: {_listing(notes['empty'])}",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
