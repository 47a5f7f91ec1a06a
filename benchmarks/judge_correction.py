"""Coverage of the judge-corrected intervals (issue 44): ak.corrected_rate and ak.ppi_mean.

Each simulated data set is a benchmark run judged by an imperfect judge: scenarios with
their own pass probability (Beta with mean ``rate`` and ICC 0.2), 4 rollouts per scenario,
``n + m`` episodes; the judge calls a true pass *pass* with probability ``sens`` and a true
failure *fail* with probability ``spec``, independently. ``m`` episodes drawn at random are
labelled by a human (the calibration set); the other ``n`` are only judged. The truth is
the scenarios' mean pass rate ``rate``.

Intervals, all at 95 %:

- ``raw``: the judged rate of all episodes with its cluster-robust (CR1) normal interval,
  the number a table shows when the judge is taken at its word;
- ``corrected_rate (clusters)``: ak.corrected_rate with ``cluster="scenario_id"`` (target);
- ``corrected_rate (iid)``: the same without ``cluster`` (the reference's interval);
- ``ppi_mean (clusters)``: ak.ppi_mean with ``cluster="scenario_id"`` (target);
- ``ppi_mean (iid)``: without ``cluster`` (ppi_py's interval).

Run:  python benchmarks/judge_correction.py [--reps 500] [--resamples 1000]
Writes benchmarks/results/judge_correction.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy

import accordkit as ak

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import QUIET_SPEED_SECONDS, machine_speed  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "judge_correction.md"
ROLLOUTS = 4
ICC = 0.2
TARGET = 0.93
METHODS = ("raw", "corrected_rate (clusters)", "corrected_rate (iid)", "ppi_mean (clusters)",
           "ppi_mean (iid)")
TARGETS = ("corrected_rate (clusters)", "ppi_mean (clusters)")


@dataclass(frozen=True)
class Case:
    sens: float
    spec: float
    m: int
    n: int
    rate: float = 0.6

    @property
    def name(self) -> str:
        return (f"sens {self.sens:g}, spec {self.spec:g}, m {self.m}, n {self.n}, "
                f"rate {self.rate:g}")


def cases() -> list[Case]:
    grid = [Case(s, p, m, n) for s in (0.7, 0.95) for p in (0.7, 0.95) for m in (50, 500)
            for n in (200, 5000)]
    return [*grid, Case(0.85, 0.85, 100, 1000, 0.3), Case(0.8, 0.9, 200, 2000, 0.85)]


def draw(rng: np.random.Generator, case: Case) -> tuple[pd.DataFrame, pd.DataFrame]:
    total = case.n + case.m
    scenarios = -(-total // ROLLOUTS)
    strength = 1 / ICC - 1  # Beta(a, b) with a + b = strength has ICC 1 / (a + b + 1)
    pi = rng.beta(case.rate * strength, (1 - case.rate) * strength, scenarios)
    scen = np.repeat(np.arange(scenarios), ROLLOUTS)[:total]
    truth = rng.random(total) < pi[scen]
    right = np.where(truth, rng.random(total) < case.sens, rng.random(total) < case.spec)
    verdict = np.where(right, truth, ~truth)
    labelled = rng.choice(total, case.m, replace=False)
    verdicts = pd.DataFrame({"episode_id": np.arange(total), "scenario_id": scen,
                             "verdict": verdict})
    labels = pd.DataFrame({"episode_id": labelled, "label": truth[labelled]})
    return verdicts, labels


def raw_interval(verdicts: pd.DataFrame) -> tuple[float, float]:
    """The judged rate with a CR1 normal interval over scenarios."""
    v = verdicts.verdict.to_numpy(dtype=float)
    codes = verdicts.scenario_id.to_numpy()
    g = int(codes.max()) + 1
    resid = np.bincount(codes, weights=v - v.mean(), minlength=g)
    se = np.sqrt(g / (g - 1) * np.sum(resid ** 2)) / len(v)
    return v.mean() - 1.959963984540054 * se, v.mean() + 1.959963984540054 * se


def one(rng: np.random.Generator, case: Case, resamples: int, seed: int) -> dict[str, tuple]:
    verdicts, labels = draw(rng, case)
    out = {"raw": raw_interval(verdicts)}
    for cluster, tag in (("scenario_id", "clusters"), (None, "iid")):
        row = ak.corrected_rate(verdicts, labels, cluster=cluster).iloc[0]
        out[f"corrected_rate ({tag})"] = (row.ci_low, row.ci_high)
        row = ak.ppi_mean(verdicts, labels, cluster=cluster, n_resamples=resamples,
                          seed=seed).iloc[0]
        out[f"ppi_mean ({tag})"] = (row.ci_low, row.ci_high)
    return out


def run_case(case: Case, reps: int, resamples: int, seed: int) -> dict[str, dict]:
    rng = np.random.default_rng([seed, int(case.sens * 100), int(case.spec * 100), case.m,
                                 case.n, int(case.rate * 100)])
    hits = {k: [] for k in METHODS}
    for rep in range(reps):
        for name, (low, high) in one(rng, case, resamples, seed + rep).items():
            hits[name].append((low <= case.rate <= high, high - low, high < case.rate,
                               low > case.rate))
    out = {}
    for name, rows in hits.items():
        arr = np.array(rows, dtype=float)
        out[name] = {"coverage": arr[:, 0].mean(), "width": arr[:, 1].mean(),
                     "low": arr[:, 2].mean(), "high": arr[:, 3].mean()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    speed_before = machine_speed()
    start = time.perf_counter()
    results = []
    for case in cases():
        t = time.perf_counter()
        res = run_case(case, args.reps, args.resamples, args.seed)
        results.append((case, res, time.perf_counter() - t))
        print(case.name, {k: round(v["coverage"], 3) for k, v in res.items()},
              f"{time.perf_counter() - t:.1f} s", flush=True)
    total = time.perf_counter() - start
    speed_after = machine_speed()
    args.out.write_text(report(results, args, total, speed_before, speed_after),
                        encoding="utf-8")


def report(results, args, total, speed_before, speed_after) -> str:
    se = np.sqrt(0.95 * 0.05 / args.reps) * 100
    worst = {m: min(r[m]["coverage"] for _, r, _ in results) for m in METHODS}
    lines = [
        "# Coverage of judge-corrected 95% intervals: ak.corrected_rate and ak.ppi_mean",
        "",
        f"- date: {dt.date.today().isoformat()}",
        f"- machine: {os.cpu_count()} cores ({platform.processor() or platform.machine()}); "
        f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} when written; "
        f"speed {speed_before:.2f} s before / {speed_after:.2f} s after (a fixed Python "
        f"loop; {QUIET_SPEED_SECONDS} s on a quiet machine); Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"scipy {scipy.__version__}",
        f"- {args.reps} simulated data sets per case, {args.resamples} cluster-bootstrap "
        f"resamples per ppi_mean (clusters) interval, seed {args.seed}; total run time "
        f"{total:.0f} s on one core",
        "- script: `python benchmarks/judge_correction.py`",
        f"- data: scenarios with pass probability ~ Beta (mean `rate`, ICC {ICC}), "
        f"{ROLLOUTS} rollouts each; judge errors independent given the truth; `m` episodes "
        "drawn at random are labelled (calibration), the other `n` only judged; the truth "
        "is `rate`",
        f"- target: the clustered intervals (✓/✗) cover at least {TARGET:.0%}; the raw "
        "judged rate's interval (cluster-robust, honest about the scenarios but not about "
        "the judge) is shown for contrast",
        f"- Monte-Carlo standard error of a coverage near 95% with {args.reps} "
        f"repetitions: about {se:.1f} percentage points",
        "",
        "## Summary",
        "",
        "| interval | lowest coverage over the cases | cases at or above 93% |",
        "| :--- | ---: | ---: |",
    ]
    for m in METHODS:
        ok = sum(r[m]["coverage"] >= TARGET for _, r, _ in results)
        lines.append(f"| {m} | {100 * worst[m]:.1f}% | {ok} of {len(results)} |")
    lines += [
        "",
        "## Coverage by case",
        "",
        "`miss low` / `miss high`: the whole interval lies below / above the truth.",
        "",
        "| case | interval | coverage | miss low | miss high | mean width | seconds |",
        "| :--- | :--- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case, res, secs in results:
        for m in METHODS:
            r = res[m]
            mark = (" ✓" if r["coverage"] >= TARGET else " ✗") if m in TARGETS else ""
            lines.append(f"| {case.name} | {m} | {100 * r['coverage']:.1f}%{mark} | "
                         f"{100 * r['low']:.1f}% | {100 * r['high']:.1f}% | "
                         f"{r['width']:.4f} | {secs:.1f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
