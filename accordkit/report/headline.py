"""The numbers a report leads with: each benchmark's headline metric per configuration.

Each benchmark has one metric it is known by: AcCoRD its task score, AgentChangeBench its
task success rate (TSR), tau2-bench and τ-bench the mean stored reward. A plain tau2-bench
run leads with its own mean reward: the goal-shift page (and its TSR) is for the runs with
goal shifts only. The
report's index shows them first, with their intervals, each linking to the table it comes
from; ``results.json`` stores the same rows, so a script reads what a person reads.

The values are read back from the CSV tables the notebooks wrote, never recomputed: the
index cannot disagree with the pages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tables import SUMMARY_COLUMNS

__all__ = ["Headline", "HEADLINES", "headline_numbers", "table_anchor"]



@dataclass(frozen=True)
class Headline:
    """Where one benchmark's headline number lives in a report.

    Attributes
    ----------
    benchmark : str
        What the reader calls the benchmark.
    notebook : str
        The notebook whose table holds it.
    table : str
        The table's name (the CSV is ``tables/<notebook>__<table>.csv``).
    metrics : tuple of str
        Accepted labels of the metric in that table, first match wins.
    what : str
        One line saying what the number is.
    """

    benchmark: str
    notebook: str
    table: str
    metrics: tuple[str, ...]
    what: str


HEADLINES: tuple[Headline, ...] = (
    Headline("AcCoRD", "accord_results", "table3", ("task score", "task_score"),
             "task score: mean over episodes of completion × outcome (paper Table 3)"),
    Headline("AgentChangeBench TSR", "goalshift_results",
             "main_by_domain_model", ("TSR", "tsr"),
             "task success rate (TSR): weighted action, NL-assertion and communicate channels "
             "(plain tau2-bench runs have no goal shifts: their headline is the mean reward "
             "below)"),
    Headline("tau2 format (tau2-bench, AgentChangeBench, τ-bench)", "tau2_results", "reward",
             ("mean reward",),
             "mean stored reward per domain and agent configuration (tau2's own headline)"),
)


def table_anchor(notebook: str, table: str) -> str:
    """The id a report page gives the wrapper of table ``table`` of ``notebook``."""
    return f"tbl-{notebook}__{table}"


def _finite(x: Any) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def headline_numbers(run_dir: str | Path, *, prefix: str = "") -> list[dict[str, Any]]:
    """Read every headline number a finished report run wrote.

    Parameters
    ----------
    run_dir : str or Path
        One run's folder (holding ``tables/``).
    prefix : str
        Prepended to page links (the run's folder name in a multi-run report).

    Returns
    -------
    list of dict
        One per (benchmark, configuration): ``benchmark``, ``metric``, ``what``, the
        grouping values under ``group`` (a dict), ``label``, ``estimate``, ``ci_low``,
        ``ci_high``, ``n_clusters``, ``small_cell``, ``confidence`` and ``href`` (page and
        anchor of the source table). Benchmarks whose table is absent are left out.
    """
    import pandas as pd

    run_dir = Path(run_dir)
    rows: list[dict[str, Any]] = []
    for spec in HEADLINES:
        csv = run_dir / "tables" / f"{spec.notebook}__{spec.table}.csv"
        if not csv.is_file():
            continue
        frame = pd.read_csv(csv, keep_default_na=True)
        if "metric" not in frame.columns or frame.empty:
            continue
        metric = next((m for m in spec.metrics if (frame["metric"] == m).any()), None)
        if metric is None:
            continue
        keys = [c for c in frame.columns if c not in SUMMARY_COLUMNS]
        for _, r in frame[frame["metric"] == metric].iterrows():
            group = {k: (None if pd.isna(r[k]) else str(r[k])) for k in keys}
            rows.append({
                "benchmark": spec.benchmark,
                "metric": metric,
                "what": spec.what,
                "group": group,
                "label": " · ".join(v for v in group.values() if v) or "all",
                "estimate": _finite(r.get("estimate")),
                "ci_low": _finite(r.get("ci_low")),
                "ci_high": _finite(r.get("ci_high")),
                "n_clusters": None if pd.isna(r.get("n_clusters")) else int(r["n_clusters"]),
                "small_cell": bool(r.get("small_cell")) if not pd.isna(r.get("small_cell"))
                else False,
                "confidence": _finite(r.get("confidence")),
                "href": f"{prefix}{spec.notebook}.html#{table_anchor(spec.notebook, spec.table)}",
            })
    return rows
