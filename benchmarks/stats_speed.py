"""Speed of accordkit.stats.summarize against scipy.stats.bootstrap, cell by cell.

The table: 10 metrics (7 NaN-aware means, 3 ratios of sums) x 12 groups (models), each
group 300 scenarios x 8 rollouts (28,800 rows), 10,000 resamples, BCa.

scipy has no cluster resampling, so it is given what makes its bootstrap a cluster
bootstrap: per cell and metric, the per-scenario sums ``(numerator_c, denominator_c)``
as a *paired* two-sample input with the statistic ``sum(num) / sum(den)``. Each call gets
the generator accordkit derives for that cell, so both draw the very same resamples and
the intervals can be checked for equality; scipy simply redraws and re-evaluates them
for every metric, where accordkit draws once per cell and evaluates each metric with one
matrix product per block of draws.

Run:  python benchmarks/stats_speed.py [--repeats 3]
Writes benchmarks/results/stats_speed.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
from scipy import stats

from accordkit.stats import Metric, summarize
from accordkit.stats._resample import cell_rng, stable_key

RESULTS = Path(__file__).resolve().parent / "results" / "stats_speed.md"
N_GROUPS, N_SCENARIOS, N_ROLLOUTS, N_RESAMPLES = 12, 300, 8, 10_000


def make_frame(seed: int = 0) -> tuple[pd.DataFrame, list]:
    rng = np.random.default_rng(seed)
    n = N_SCENARIOS * N_ROLLOUTS
    parts = []
    for g in range(N_GROUPS):
        p = np.repeat(rng.beta(2, 2, N_SCENARIOS), N_ROLLOUTS)
        cols = {
            "agent_model": f"model-{g:02d}",
            "scenario_id": np.repeat([f"s{i:03d}" for i in range(N_SCENARIOS)], N_ROLLOUTS),
        }
        for k in range(5):
            cols[f"rate_{k}"] = (rng.random(n) < np.clip(p + 0.05 * k, 0, 1)).astype(float)
        done = rng.random(n) < 0.8  # "over completed episodes": NaN elsewhere
        cols["outcome"] = np.where(done, p * rng.uniform(0.5, 1.0, n), np.nan)
        cols["pref_score"] = np.where(rng.random(n) < 0.6, rng.random(n), np.nan)
        for name in ("tcrr", "recovery", "pass"):
            den = rng.poisson(3, n).astype(float)
            cols[f"{name}_den"] = den
            cols[f"{name}_num"] = rng.binomial(den.astype(int), p).astype(float)
        parts.append(pd.DataFrame(cols))
    metrics = ([f"rate_{k}" for k in range(5)] + ["outcome", "pref_score"]
               + [(f"{m}_num", f"{m}_den") for m in ("tcrr", "recovery", "pass")])
    return pd.concat(parts, ignore_index=True), metrics


def timed(fn, *args):
    """Result, wall seconds and CPU seconds of this process (the machine is shared)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_accordkit(frame, metrics) -> pd.DataFrame:
    return summarize(frame, metrics, "agent_model", n_resamples=N_RESAMPLES, method="bca")


def _ratio(num, den, axis=-1):
    return num.sum(axis=axis) / den.sum(axis=axis)


def run_scipy(frame, metrics) -> pd.DataFrame:
    rows = []
    for model, cell in frame.groupby("agent_model", sort=True):
        key = stable_key(["agent_model"], [model])
        for m in metrics:
            if isinstance(m, tuple):
                num = cell[m[0]].to_numpy()
                den = cell[m[1]].to_numpy()
                ok = ~(np.isnan(num) | np.isnan(den))
                num, den, name = np.where(ok, num, 0.0), np.where(ok, den, 0.0), "/".join(m)
            else:
                x = cell[m].to_numpy()
                num, den, name = np.nan_to_num(x), (~np.isnan(x)).astype(float), m
            sums = pd.DataFrame({"s": cell["scenario_id"].to_numpy(), "n": num, "d": den})
            sums = sums.groupby("s", sort=True).sum()
            res = stats.bootstrap(
                (sums["n"].to_numpy(), sums["d"].to_numpy()), _ratio, paired=True,
                vectorized=True, n_resamples=N_RESAMPLES, method="BCa",
                rng=cell_rng(0, key),  # the generator accordkit uses for this cell
            )
            ci = res.confidence_interval
            rows.append({"agent_model": model, "metric": name, "ci_low": ci.low,
                         "ci_high": ci.high})
    return pd.DataFrame(rows)


def run_with_medians(frame, metrics) -> pd.DataFrame:
    extra = [Metric("outcome_median", "outcome", stat="median"),
             Metric("pref_median", "pref_score", stat="median")]
    return summarize(frame, metrics[:8] + extra, "agent_model", n_resamples=N_RESAMPLES)


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores ({cpu}); load average {load} when written; Python "
            f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
            f"scipy {scipy.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    frame, metrics = make_frame()
    run_accordkit(frame, metrics)  # warm-up (imports, first BLAS call)
    ours = [timed(run_accordkit, frame, metrics) for _ in range(args.repeats)]
    theirs = [timed(run_scipy, frame, metrics) for _ in range(max(1, args.repeats - 1))]
    medians = [timed(run_with_medians, frame, metrics) for _ in range(args.repeats)]

    merged = ours[0][0].merge(theirs[0][0], on=["agent_model", "metric"],
                              suffixes=("", "_scipy"))
    diff = max(float(np.max(np.abs(merged.ci_low - merged.ci_low_scipy))),
               float(np.max(np.abs(merged.ci_high - merged.ci_high_scipy))))
    ak, sc, md = (min(r[1] for r in runs) for runs in (ours, theirs, medians))
    ak_cpu, sc_cpu, md_cpu = (min(r[2] for r in runs) for runs in (ours, theirs, medians))

    def runs(rs):
        return ", ".join(f"{r[1]:.2f}" for r in rs)

    text = "\n".join([
        "# Speed: accordkit.stats.summarize vs scipy.stats.bootstrap",
        "",
        f"- date: {dt.date.today().isoformat()}",
        f"- machine: {machine()}",
        f"- table: {len(metrics)} metrics (7 NaN-aware means, 3 ratios of sums) x "
        f"{N_GROUPS} groups; each group {N_SCENARIOS} scenarios x {N_ROLLOUTS} rollouts "
        f"({len(frame):,} rows in all); {N_RESAMPLES:,} resamples; BCa; clusters = scenarios",
        "- script: `python benchmarks/stats_speed.py` (best of "
        f"{args.repeats} runs for accordkit, of {len(theirs)} for scipy). The machine is "
        "shared with other engineers' jobs, so CPU seconds of this process are shown beside "
        "wall-clock seconds.",
        "",
        "| implementation | wall s (best) | CPU s (best) | all runs (wall s) |",
        "| :--- | ---: | ---: | :--- |",
        f"| accordkit `summarize` (whole table, one call) | {ak:.2f} | {ak_cpu:.2f} | "
        f"{runs(ours)} |",
        f"| `scipy.stats.bootstrap`, cell by cell (120 calls, per-scenario sums, paired) | "
        f"{sc:.2f} | {sc_cpu:.2f} | {runs(theirs)} |",
        f"| ratio scipy / accordkit | {sc / ak:.1f}x | {sc_cpu / ak_cpu:.1f}x | |",
        f"| accordkit, 8 means/ratios + 2 medians (row-level weighted medians) | "
        f"{md:.2f} | {md_cpu:.2f} | {runs(medians)} |",
        "",
        f"Target: at most 2 s for accordkit: {'met' if ak <= 2 else 'NOT met'}.",
        "",
        "Both draw identical resamples (scipy is handed the generator accordkit derives "
        "for each cell), so the intervals agree: largest absolute difference over the "
        f"{len(merged)} cells x ends = {diff:.1e}.",
        "",
        "Where the time goes: scipy draws and gathers a fresh 10,000 x 300 index array "
        "for every metric and re-evaluates the statistic on it; accordkit draws once per "
        "cell, turns the draws into counts (resamples x 300) block by block, each block "
        "small enough to stay in cache, and evaluates each metric of the cell with one "
        "matrix product per block against its per-scenario sums (the counts matrix is "
        "never kept whole; one product per metric, so that a metric's digits do not "
        "depend on the others); the BCa jackknife is closed-form for sums.",
        "",
        "About the scipy baseline: issue 5 quotes about 11 s for scipy on this table. That "
        "figure was not reproduced here. The baseline above hands scipy the per-scenario "
        "sums (300 values per cell instead of 2,400 rows) with a vectorised statistic. "
        "That is the cheapest correct way to get a cluster bootstrap out of "
        "`scipy.stats.bootstrap`, and it makes scipy's jackknife 300 evaluations "
        "instead of 2,400. Feeding scipy the rows would be slower, but it would also be "
        "wrong: it would resample rows, not scenarios.",
    ]) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text, encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
