"""Simulation study of the trial planner and of the minimum detectable difference.

Binary outcomes with known task and trial variance: task success probabilities
``p_i ~ Beta`` with mean ``mu`` and intraclass correlation ``rho``; a second configuration
shifts every task by the same logit amount (effect = difference of the mean rates); each
configuration runs ``m`` trials per task; the test is the two-sided paired t test on the
per-task differences at level 0.05. Two checks:

1. **planner**: for >= 6 designs, the power predicted by
   :func:`accordkit.stats.planning.design_power` (the model behind ``plan_trials``) against
   the share of simulated data sets in which the test rejects; target +-5 points;
2. **grid** (issue 32): every design of ICC 0.05-0.8 x 1-16 trials x 10-200 tasks, at
   two mean rates, at the effect the planner says the design detects with power 0.8 (its
   minimum detectable difference), against simulation; target: every design within +-5
   points. The normal-theory power (non-central t on the same variance, the planner's
   model before issue 32) is shown beside it;
3. **mdd**: the minimum detectable difference at a present design, as ``noise_floor``
   computes it from the true components and, averaged, from the components it fits on
   simulated pilot data sets, against the simulated one (the effect whose simulated power
   is 0.8, found by bisection with common random numbers); target +-15 %.

The simulation here draws task probabilities from the Beta distribution and binomial
successes for each configuration: it shares no code with the planner's own simulation,
which draws per-task differences from their exact distribution (or their sums from the
bivariate normal limit above 100 tasks).

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
#: the grid of issue 32
GRID_MU = (0.5, 0.2)
GRID_RHO = (0.05, 0.2, 0.35, 0.5, 0.65, 0.8)
GRID_TRIALS = (1, 2, 4, 8, 16)
GRID_TASKS = (10, 25, 50, 100, 200)
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


def planner_mdd(mu: float, rho: float, k: int, m: int) -> float:
    """The effect (toward 1) the planner says a design detects with power 0.8."""
    grid = _power.beta_grid(mu, rho)
    return _power.min_detectable(
        lambda e: _power.binary_power(grid, e, m, k, alpha=0.05), power=0.8, upper=1 - mu)


def grid_rows(reps: int, seed: int) -> list[dict]:
    rows = []
    for i, (mu, rho, m, k) in enumerate((mu, rho, m, k) for mu in GRID_MU for rho in GRID_RHO
                                        for m in GRID_TRIALS for k in GRID_TASKS):
        effect = planner_mdd(mu, rho, k, m)
        row = {"mu": mu, "rho": rho, "trials": m, "tasks": k, "effect": effect}
        if not np.isfinite(effect):  # no effect within the range reaches 0.8
            rows.append({**row, "predicted": np.nan, "simulated": np.nan, "normal": np.nan})
            continue
        grid = _power.beta_grid(mu, rho)
        shift = _power.logit_shift(grid, effect)
        rng = np.random.default_rng([seed, 1000 + i])
        a, b = _ab(mu, rho)
        p = rng.beta(a, b, (reps, k))
        q = special.expit(special.logit(p) + shift)
        d = (rng.binomial(m, q) - rng.binomial(m, p)) / m
        sd = d.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(sd > 0, d.mean(axis=1) / (sd / np.sqrt(k)), 0.0)
        sim = float(np.mean(np.abs(t) > stats.t.ppf(0.975, k - 1)))
        pred = float(design_power(mu, rho, effect, k, m)[0])
        normal = float(_power.paired_power(effect, _power.diff_variance(grid, effect, m), k,
                                           0.05))
        rows.append({**row, "predicted": pred, "simulated": sim, "normal": normal})
        print(f"grid mu {mu} rho {rho} m {m} k {k}: effect {effect:.3f} predicted {pred:.3f} "
              f"simulated {sim:.3f} normal {normal:.3f}", flush=True)
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
        model = _power.min_detectable(
            lambda e, g=grid, s=sign, m=m, k=k: _power.binary_power(g, s * e, m, k, alpha=0.05),
            power=0.8, upper=upper)
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


def grid_section(rows: list[dict]) -> list[str]:
    done = [r for r in rows if np.isfinite(r["predicted"])]
    diffs = np.array([r["predicted"] - r["simulated"] for r in done])
    normal = np.array([r["normal"] - r["simulated"] for r in done])
    worst = done[int(np.argmax(np.abs(diffs)))]
    lines = [
        "",
        "## Grid: every design at its minimum detectable difference (target: all within "
        "+-5 points)",
        "",
        f"{len(rows)} designs: mean rate {', '.join(map(str, GRID_MU))} x ICC "
        f"{', '.join(map(str, GRID_RHO))} x trials {', '.join(map(str, GRID_TRIALS))} x "
        f"tasks {', '.join(map(str, GRID_TASKS))}. Effect: the one the planner says the "
        "design detects with power 0.8 (toward 1). `predicted`: the planner's power there "
        "(0.8 up to its simulation's steps); `normal`: the non-central t power on the same "
        "variance (the planner before issue 32); `simulated`: the share of simulated data "
        "sets in which the paired t test rejects.",
        "",
        f"- {len(done)} designs have such an effect ({len(rows) - len(done)} reach power 0.8 "
        "with no effect within the rate's range: too few tasks).",
        f"- planner: {int(np.sum(np.abs(diffs) <= 0.05))} of {len(done)} within 5 points; "
        f"largest |predicted - simulated| {100 * np.max(np.abs(diffs)):.1f} points (mean "
        f"rate {worst['mu']}, ICC {worst['rho']}, {worst['trials']} trials, "
        f"{worst['tasks']} tasks); mean |difference| {100 * np.mean(np.abs(diffs)):.1f}.",
        f"- normal theory at the same effects: {int(np.sum(np.abs(normal) <= 0.05))} of "
        f"{len(done)} within 5 points; from {100 * normal.min():+.1f} to "
        f"{100 * normal.max():+.1f} points.",
        "",
        "| mu | ICC | trials | tasks | effect | predicted | simulated | difference | "
        "normal theory |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if not np.isfinite(r["predicted"]):
            lines.append(f"| {r['mu']:.2f} | {r['rho']:.2f} | {r['trials']} | {r['tasks']} "
                         "| – | – | – | – | – |")
            continue
        diff = r["predicted"] - r["simulated"]
        lines.append(f"| {r['mu']:.2f} | {r['rho']:.2f} | {r['trials']} | {r['tasks']} | "
                     f"{r['effect']:.3f} | {r['predicted']:.3f} | {r['simulated']:.3f} | "
                     f"{100 * diff:+.1f} pp{' ✓' if abs(diff) <= 0.05 else ' ✗'} | "
                     f"{r['normal']:.3f} ({100 * (r['normal'] - r['simulated']):+.1f}) |")
    return lines


def report(plan: list[dict], grid: list[dict], mdd: list[dict], args,
           seconds: float) -> str:
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
    lines += grid_section(grid)
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
    done = [r for r in grid if np.isfinite(r["predicted"])]
    lines += ["", "## Summary", "",
              f"- planner: {sum(d <= 0.05 for d in diffs)} of {len(plan)} designs within 5 "
              f"points (target: at least 6); largest |predicted - simulated| = "
              f"{100 * max(diffs):.1f} points.",
              f"- grid: {sum(abs(r['predicted'] - r['simulated']) <= 0.05 for r in done)} "
              f"of {len(done)} designs within 5 points; largest |predicted - simulated| = "
              f"{100 * max(abs(r['predicted'] - r['simulated']) for r in done):.1f} points.",
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
    grid = grid_rows(args.reps, args.seed)
    mdd = mdd_rows(args.reps, args.pilots, args.seed)
    text = report(plan, grid, mdd, args, time.perf_counter() - start)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
