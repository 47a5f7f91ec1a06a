"""Simulation study of the trial planner and of the minimum detectable difference.

Binary outcomes with known task and trial variance: task success probabilities
``p_i ~ Beta`` with mean ``mu`` and intraclass correlation ``rho``; a second configuration
shifts every task by the same logit amount (effect = difference of the mean rates); each
configuration runs ``m`` trials per task; the test is the two-sided paired t test on the
per-task differences at level 0.05. Two checks:

1. **planner**: for >= 6 designs, the power predicted by
   :func:`accordkit.stats.planning.design_power` (the model behind ``plan_trials``) against
   the share of simulated data sets in which the test rejects; target +-5 points;
2. **mdd**: the minimum detectable difference at a present design, as ``noise_floor``
   computes it from the true components and, averaged, from the components it fits on
   simulated pilot data sets, against the simulated one (the effect whose simulated power
   is 0.8, found by bisection with common random numbers); target +-15 %.

Run:  python benchmarks/reliability_power.py [--reps 4000] [--no-write]
Writes benchmarks/results/reliability_power.md.
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
from scipy import special, stats

from accordkit.stats import _power, noise_floor
from accordkit.stats.planning import design_power

RESULTS = Path(__file__).resolve().parent / "results" / "reliability_power.md"

#: (mu, rho, effect, tasks, trials per task)
DESIGNS = [
    (0.5, 1 / 3, 0.10, 30, 3),
    (0.5, 1 / 3, 0.10, 100, 1),
    (0.7, 0.3, 0.05, 200, 3),
    (0.7, 0.3, -0.10, 50, 5),
    (0.1, 0.13, 0.05, 120, 3),
    (0.9, 0.2, -0.08, 40, 8),
    (0.3, 0.5, 0.15, 20, 10),
    (0.5, 0.05, 0.08, 60, 4),
]
#: (mu, rho, tasks, trials per task): present designs for the mdd check
MDD_DESIGNS = [(0.5, 1 / 3, 36, 3), (0.7, 0.3, 36, 3), (0.1, 0.13, 60, 3), (0.4, 0.2, 100, 5)]


def _ab(mu: float, rho: float) -> tuple[float, float]:
    scale = 1 / rho - 1
    return mu * scale, (1 - mu) * scale


def _reject(p, u_a, u_b, effect, shift, alpha=0.05):
    """Paired t test per simulated data set (rows); uniforms give common random numbers."""
    q = special.expit(special.logit(p) + shift)
    m = u_a.shape[2]
    d = (u_b < q[..., None]).sum(2) / m - (u_a < p[..., None]).sum(2) / m
    k = d.shape[1]
    sd = d.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=1) / (sd / np.sqrt(k))
    t = np.where(sd > 0, t, 0.0)
    return np.abs(t) > stats.t.ppf(1 - alpha / 2, k - 1)


def planner_rows(reps: int, seed: int) -> list[dict]:
    rows = []
    for i, (mu, rho, effect, k, m) in enumerate(DESIGNS):
        rng = np.random.default_rng([seed, i])
        a, b = _ab(mu, rho)
        p = rng.beta(a, b, (reps, k))
        shift = _power.logit_shift(_power.beta_grid(mu, rho), effect)
        rej = _reject(p, rng.random((reps, k, m)), rng.random((reps, k, m)), effect, shift)
        sim = float(rej.mean())
        pred = float(design_power(mu, rho, effect, k, m)[0])
        rows.append({"mu": mu, "rho": rho, "effect": effect, "tasks": k, "trials": m,
                     "predicted": pred, "simulated": sim,
                     "mc_se": float(np.sqrt(sim * (1 - sim) / reps))})
        print(f"design {i}: predicted {pred:.3f} simulated {sim:.3f}", flush=True)
    return rows


def simulated_mdd(mu, rho, k, m, reps, rng, power=0.8) -> float:
    a, b = _ab(mu, rho)
    p = rng.beta(a, b, (reps, k))
    u_a, u_b = rng.random((reps, k, m)), rng.random((reps, k, m))
    grid = _power.beta_grid(mu, rho)
    sign = 1.0 if mu <= 0.5 else -1.0
    upper = (1 - mu) if sign > 0 else mu

    def gap(e):
        shift = _power.logit_shift(grid, sign * e)
        return float(_reject(p, u_a, u_b, sign * e, shift).mean()) - power

    lo, hi = 1e-4, upper * 0.999
    for _ in range(30):  # bisection; simulated power is a step function of the effect
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def mdd_rows(reps: int, pilots: int, seed: int) -> list[dict]:
    rows = []
    for i, (mu, rho, k, m) in enumerate(MDD_DESIGNS):
        rng = np.random.default_rng([seed, 100 + i])
        sim = simulated_mdd(mu, rho, k, m, reps, rng)
        # noise_floor on a frame whose components equal the truth is the model value:
        grid = _power.beta_grid(mu, rho)
        sign = 1.0 if mu <= 0.5 else -1.0
        upper = (1 - mu) if sign > 0 else mu
        model = _power.min_detectable(lambda e, g=grid, s=sign, m=m: _power.diff_variance(
                                          g, s * e, m), k,
                                      power=0.8, alpha=0.05, upper=upper)
        a, b = _ab(mu, rho)
        p = np.repeat(rng.beta(a, b, (pilots, k)), m, axis=1)
        frame = pd.DataFrame({"pilot": np.repeat(np.arange(pilots), k * m),
                              "scenario_id": np.tile(np.repeat(np.arange(k), m), pilots),
                              "success": (rng.random(p.shape) < p).ravel()})
        fitted = noise_floor(frame, by="pilot")["mdd"]
        rows.append({"mu": mu, "rho": rho, "tasks": k, "trials": m, "simulated": sim,
                     "model": model, "fitted_median": float(fitted.median()),
                     "fitted_nan": int(fitted.isna().sum())})
        print(f"mdd {i}: simulated {sim:.4f} model {model:.4f} "
              f"fitted median {fitted.median():.4f}", flush=True)
    return rows


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores; load average {load} when written; Python "
            f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
            f"scipy {scipy.__version__}")


def report(plan: list[dict], mdd: list[dict], args, seconds: float) -> str:
    lines = [
        "# Trial planner and minimum detectable difference: simulation study",
        "",
        f"- date: {dt.date.today().isoformat()}",
        f"- machine: {machine()}",
        f"- {args.reps:,} simulated data sets per design, {args.pilots} pilot data sets per "
        f"mdd design, seed {args.seed}; run time {seconds:.0f} s",
        "- script: `python benchmarks/reliability_power.py`"
        + (f" --reps {args.reps}" if args.reps != 4000 else ""),
        "- model: p_i ~ Beta(mean mu, ICC rho); the second configuration shifts every task "
        "by one logit amount; paired t test on per-task differences, alpha 0.05.",
        "",
        "## Planner: predicted against simulated power (target +-5 points)",
        "",
        "| mu | rho | effect | tasks | trials | predicted | simulated | MC s.e. | "
        "difference |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in plan:
        diff = r["predicted"] - r["simulated"]
        ok = " ✓" if abs(diff) <= 0.05 else " ✗"
        lines.append(f"| {r['mu']:.2f} | {r['rho']:.3f} | {r['effect']:+.2f} | {r['tasks']} | "
                     f"{r['trials']} | {r['predicted']:.3f} | {r['simulated']:.3f} | "
                     f"{r['mc_se']:.3f} | {100 * diff:+.1f} pp{ok} |")
    lines += [
        "",
        "## Minimum detectable difference at the present design (target +-15 %)",
        "",
        "`model`: noise_floor's formula with the true components; `fitted median`: the "
        "median of noise_floor's mdd over pilot data sets of the same design (its own "
        "estimation noise included); `simulated`: the effect with simulated power 0.8.",
        "",
        "| mu | rho | tasks | trials | simulated | model | model error | fitted median | "
        "fitted error | fitted NaN |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in mdd:
        e1 = r["model"] / r["simulated"] - 1
        e2 = r["fitted_median"] / r["simulated"] - 1
        lines.append(f"| {r['mu']:.2f} | {r['rho']:.3f} | {r['tasks']} | {r['trials']} | "
                     f"{r['simulated']:.4f} | {r['model']:.4f} | {100 * e1:+.1f} %"
                     f"{' ✓' if abs(e1) <= 0.15 else ' ✗'} | {r['fitted_median']:.4f} | "
                     f"{100 * e2:+.1f} %{' ✓' if abs(e2) <= 0.15 else ' ✗'} | "
                     f"{r['fitted_nan']} |")
    diffs = [abs(r["predicted"] - r["simulated"]) for r in plan]
    lines += ["", "## Summary", "",
              f"- planner: {sum(d <= 0.05 for d in diffs)} of {len(plan)} designs within 5 "
              f"points (target: at least 6); largest |predicted - simulated| = "
              f"{100 * max(diffs):.1f} points.",
              "- mdd: model error from "
              f"{100 * min(r['model'] / r['simulated'] - 1 for r in mdd):+.1f} % to "
              f"{100 * max(r['model'] / r['simulated'] - 1 for r in mdd):+.1f} %."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--pilots", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    plan = planner_rows(args.reps, args.seed)
    mdd = mdd_rows(args.reps, args.pilots, args.seed)
    text = report(plan, mdd, args, time.perf_counter() - start)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
