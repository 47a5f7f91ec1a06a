"""Simulation study of Kaplan–Meier medians of recovery times under censoring and clustering.

Shifts are nested in tasks (clusters) with a shared frailty: task ``i`` has a rate
``Z_i ~ Gamma(shape k, scale 1/k)``; a shift of task ``i`` recovers after ``T ~
Exponential(rate lam * Z_i)``, and is cut off by the end of the conversation at ``C ~
Uniform(0, c_max)``. The marginal survival is ``(1 + lam t / k)^-k``, so the true median is
``k (2^(1/k) - 1) / lam``. Per data set:

* the KM median (``accordkit.stats.km_median``) and the median of the observed times only;
  their biases against the true median (target: KM bias at most 1/3 of the other's);
* the 95 % cluster-bootstrap interval of the KM median from ``summarize`` with
  ``Metric(..., stat="km_median")`` (percentile, as ``km_medians`` uses by default), and
  whether it covers the truth (target >= 93 %).

Run:  python benchmarks/reliability_km.py [--reps 400] [--resamples 1000] [--no-write]
Writes benchmarks/results/reliability_km.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy

from accordkit.stats import Metric, km_median, summarize

RESULTS = Path(__file__).resolve().parent / "results" / "reliability_km.md"


@dataclass(frozen=True)
class Case:
    name: str
    tasks: int
    shifts: int
    shape: float
    lam: float
    c_max: float

    @property
    def truth(self) -> float:
        return self.shape * (2 ** (1 / self.shape) - 1) / self.lam


CASES = [
    Case("moderate censoring", 40, 4, 2.0, 1.0, 4.0),
    Case("heavy censoring", 40, 4, 2.0, 1.0, 2.0),
    Case("strong clustering", 30, 6, 0.8, 1.0, 4.0),
    Case("many tasks", 100, 3, 2.0, 0.5, 8.0),
]


def simulate(case: Case, reps: int, rng: np.random.Generator) -> pd.DataFrame:
    n = case.tasks * case.shifts
    z = np.repeat(rng.gamma(case.shape, 1 / case.shape, (reps, case.tasks)), case.shifts,
                  axis=1)
    t = rng.exponential(1.0, (reps, n)) / (case.lam * z)
    c = rng.uniform(0, case.c_max, (reps, n))
    return pd.DataFrame({
        "rep": np.repeat(np.arange(reps), n),
        "scenario_id": np.tile(np.repeat(np.arange(case.tasks), case.shifts), reps),
        "time": np.minimum(t, c).ravel(),
        "observed": (t <= c).ravel().astype(float),
    })


def run_case(case: Case, reps: int, resamples: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, CASES.index(case)])
    frame = simulate(case, reps, rng)
    km, obs = [], []
    for _, part in frame.groupby("rep", sort=True):
        o = part["observed"].to_numpy() > 0
        km.append(km_median(part["time"].to_numpy(), o))
        obs.append(float(np.median(part["time"].to_numpy()[o])))
    km, obs = np.array(km), np.array(obs)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resamples where the median is not reached
        res = summarize(frame, Metric("km", ("time", "observed"), stat="km_median"), "rep",
                        method="percentile", n_resamples=resamples, seed=seed)
    seconds = time.perf_counter() - start
    truth = case.truth
    cover = float(((res.ci_low <= truth) & (truth <= res.ci_high)).mean())
    out = {
        "case": case.name, "design": f"{case.tasks} x {case.shifts}", "truth": truth,
        "censored": float(1 - frame["observed"].mean()),
        "km_bias": float(np.nanmean(km) - truth), "km_nan": int(np.isnan(km).sum()),
        "obs_bias": float(np.mean(obs) - truth), "coverage": cover,
        "mc_se": float(np.sqrt(cover * (1 - cover) / reps)),
        "width": float((res.ci_high - res.ci_low)[np.isfinite(res.ci_high)].mean()),
        "open": int(np.isposinf(res.ci_high).sum()), "seconds": seconds,
    }
    print(f"{case.name}: KM bias {out['km_bias']:+.4f}, observed-only bias "
          f"{out['obs_bias']:+.4f}, coverage {cover:.3f} ({seconds:.1f} s)", flush=True)
    return out


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores; load average {load} when written; Python "
            f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
            f"scipy {scipy.__version__}")


def report(rows: list[dict], args, seconds: float) -> str:
    lines = [
        "# Kaplan–Meier medians of recovery times: bias and clustered coverage",
        "",
        f"- date: {dt.date.today().isoformat()}",
        f"- machine: {machine()}",
        f"- {args.reps:,} simulated data sets per case, {args.resamples:,} cluster-bootstrap "
        f"resamples per interval (percentile), seed {args.seed}; run time {seconds:.0f} s",
        "- script: `python benchmarks/reliability_km.py`"
        + (f" --reps {args.reps}" if args.reps != 400 else "")
        + (f" --resamples {args.resamples}" if args.resamples != 1000 else ""),
        "- model: task frailty Z ~ Gamma(k, 1/k); T ~ Exponential(lam Z); censoring "
        "C ~ Uniform(0, c_max); true median k (2^(1/k) - 1) / lam.",
        "- targets: |KM bias| <= 1/3 |observed-only bias|; coverage >= 93 %. Monte-Carlo "
        f"s.e. of a coverage near 95 %: {100 * np.sqrt(0.95 * 0.05 / args.reps):.1f} points.",
        "",
        "| case | tasks x shifts | censored | true median | KM bias | observed-only bias | "
        "ratio | KM not reached | coverage | MC s.e. | open above | mean width | seconds |",
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ratio = abs(r["km_bias"]) / abs(r["obs_bias"])
        lines.append(
            f"| {r['case']} | {r['design']} | {100 * r['censored']:.0f} % | {r['truth']:.4f} | "
            f"{r['km_bias']:+.4f} | {r['obs_bias']:+.4f} | {ratio:.3f}"
            f"{' ✓' if ratio <= 1 / 3 else ' ✗'} | {r['km_nan']} | "
            f"{100 * r['coverage']:.1f} %{' ✓' if r['coverage'] >= 0.93 else ' ✗'} | "
            f"{100 * r['mc_se']:.1f} | {r['open']} | {r['width']:.4f} | {r['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [run_case(c, args.reps, args.resamples, args.seed) for c in CASES]
    text = report(rows, args, time.perf_counter() - start)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
