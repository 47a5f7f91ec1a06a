"""Flips between two identical configurations: how often noise is called a flip.

Two configurations with the same per-task success rates run ``--tasks`` tasks with ``n``
trials each; every task's move is tested as :func:`accordkit.flips` tests it (Fisher's
exact test per task, then the adjustment over the comparison's tasks). Every flip listed is
a false one. Reported per task rate ``p`` (every task at ``p``) and for a mixed design (task
rates drawn from a uniform distribution, binned by rate):

* the per-task false-flip rate before adjustment (the per-task test's size: at most alpha at
  every rate is the claim) and after Holm;
* the family-wise error rate of a comparison (any false flip listed) under Holm and under
  Benjamini-Hochberg (with every task unchanged, the false-discovery rate equals it).

The p-values come from the same functions ``flips`` uses; ``--check`` also runs some
comparisons through ``ak.flips`` itself and asserts that it flags the same tasks.

Run:  HF_HUB_OFFLINE=1 python benchmarks/flips_noise.py [--reps 2000] [--tasks 50]
Prints Markdown (for benchmarks/results/flips_noise.md) with the machine speed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import machine_speed  # noqa: E402

from accordkit.analysis.flips import _fisher, _smallest_p, flips  # noqa: E402
from accordkit.stats._adjust import adjust_pvalues  # noqa: E402

ALPHA = 0.05


def simulate(rates: np.ndarray, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One comparison of two identical configurations: flagged tasks by each adjustment."""
    k_b = rng.binomial(n, rates)
    k_o = rng.binomial(n, rates)
    p = np.array([_fisher(int(a), n, int(b), n) for a, b in zip(k_b, k_o, strict=True)])
    testable = _smallest_p(n, n) <= ALPHA
    out = {}
    for adjust in ("none", "holm", "bh"):
        flagged = adjust_pvalues(p, adjust) < ALPHA
        out[adjust] = flagged & testable
    out["k"] = (k_b, k_o)
    return out


def fixed_rates(reps: int, tasks: int, trials: list[int], rates: list[float],
                seed: int) -> pd.DataFrame:
    rows = []
    for n in trials:
        for p in rates:
            rng = np.random.default_rng([seed, n, int(p * 1000)])
            raw = holm = fw_holm = fw_bh = 0
            for _ in range(reps):
                got = simulate(np.full(tasks, p), n, rng)
                raw += got["none"].sum()
                holm += got["holm"].sum()
                fw_holm += got["holm"].any()
                fw_bh += got["bh"].any()
            rows.append({"trials": n, "task rate": p,
                         "per-task, unadjusted": raw / (reps * tasks),
                         "per-task, Holm": holm / (reps * tasks),
                         "FWER, Holm": fw_holm / reps, "FWER = FDR, BH": fw_bh / reps})
    return pd.DataFrame(rows)


def mixed_rates(reps: int, tasks: int, trials: list[int], seed: int) -> pd.DataFrame:
    rows = []
    bins = np.linspace(0, 1, 6)
    for n in trials:
        rng = np.random.default_rng([seed, n, 7])
        flagged = {a: np.zeros(5) for a in ("none", "holm")}
        count = np.zeros(5)
        fw_holm = fw_bh = 0
        for _ in range(reps):
            rates = rng.uniform(0, 1, tasks)
            got = simulate(rates, n, rng)
            which = np.clip(np.digitize(rates, bins) - 1, 0, 4)
            count += np.bincount(which, minlength=5)
            for a in flagged:
                flagged[a] += np.bincount(which, weights=got[a], minlength=5)
            fw_holm += got["holm"].any()
            fw_bh += got["bh"].any()
        for i in range(5):
            rows.append({"trials": n, "task rate": f"{bins[i]:.1f}–{bins[i + 1]:.1f}",
                         "per-task, unadjusted": flagged["none"][i] / count[i],
                         "per-task, Holm": flagged["holm"][i] / count[i],
                         "FWER, Holm": fw_holm / reps, "FWER = FDR, BH": fw_bh / reps})
    return pd.DataFrame(rows)


def power(reps: int, tasks: int, trials: list[int], moves: list[tuple[float, float]],
          seed: int) -> pd.DataFrame:
    """The other side of the bargain: how often one real flip (``p_b -> p_o``) among
    ``tasks - 1`` unchanged tasks at rate 0.5 is found beyond noise (Holm)."""
    rows = []
    for n in trials:
        for p_b, p_o in moves:
            rng = np.random.default_rng([seed, n, int(p_b * 100), int(p_o * 100)])
            found = 0
            for _ in range(reps):
                k_b = rng.binomial(n, np.r_[p_b, np.full(tasks - 1, 0.5)])
                k_o = rng.binomial(n, np.r_[p_o, np.full(tasks - 1, 0.5)])
                p = np.array([_fisher(int(a), n, int(b), n) for a, b in zip(k_b, k_o,
                                                                           strict=True)])
                found += bool(adjust_pvalues(p, "holm")[0] < ALPHA)
            rows.append({"trials": n, "real flip": f"{p_b:.1f} → {p_o:.1f}",
                         "found beyond noise (Holm)": found / reps})
    return pd.DataFrame(rows)


def check_against_flips(tasks: int, n: int, reps: int, seed: int) -> int:
    """Run ``reps`` comparisons through ``ak.flips``: the same tasks flagged, every time."""
    rng = np.random.default_rng([seed, 99])
    for _ in range(reps):
        rates = rng.uniform(0, 1, tasks)
        state = rng.bit_generator.state
        got = simulate(rates, n, rng)
        rng.bit_generator.state = state
        k_b, k_o = got["k"]
        rows = [{"episode_id": f"{c}-{i}-{t}", "domain": "d", "agent_model": c,
                 "scenario_id": f"t{i:03d}", "success": t < k}
                for c, ks in (("a", k_b), ("b", k_o)) for i, k in enumerate(ks)
                for t in range(n)]
        rng.binomial(n, rates)   # keep the stream as simulate() left it
        rng.binomial(n, rates)
        out = flips(pd.DataFrame(rows), include_unmoved=True).sort_values("scenario_id")
        mine = got["holm"]
        theirs = out["noise_explains"].eq(False).to_numpy()
        assert (mine == theirs).all(), "ak.flips flags other tasks than the simulation"
    return reps


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown table (4 decimals for rates)."""
    def cell(v: object) -> str:
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |",
             "|" + "|".join("---:" for _ in frame.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", type=int, default=50,
                        help="comparisons also run through ak.flips (0: none)")
    args = parser.parse_args()
    speed = machine_speed()
    t0 = time.perf_counter()
    trials = [2, 4, 8, 16]
    fixed = fixed_rates(args.reps, args.tasks, trials, [0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97],
                        args.seed)
    mixed = mixed_rates(args.reps, args.tasks, trials, args.seed)
    found = power(max(args.reps // 4, 100), args.tasks, [4, 8, 16],
                  [(0.0, 1.0), (0.1, 0.9), (0.2, 0.8)], args.seed)
    checked = check_against_flips(args.tasks, 8, args.check, args.seed) if args.check else 0
    seconds = time.perf_counter() - t0
    print(f"{args.reps:,} simulated comparisons per row, {args.tasks} tasks, alpha = {ALPHA}, "
          f"seed {args.seed}; {checked} comparisons also run through `ak.flips` (same "
          f"tasks flagged). Took {seconds:.0f} s; machine speed {speed:.2f} s (fixed "
          "Python loop, 1.3 s when the VM is quiet).\n")
    print("### Every task at one rate\n")
    print(markdown(fixed))
    print("\n### Task rates uniform on (0, 1), binned\n")
    print(markdown(mixed))
    print(f"\n### Power: one real flip among {args.tasks - 1} unchanged tasks "
          f"({max(args.reps // 4, 100):,} comparisons per row)\n")
    print(markdown(found))
    worst = max(fixed["per-task, unadjusted"].max(), mixed["per-task, unadjusted"].max())
    fwer = max(fixed["FWER, Holm"].max(), mixed["FWER, Holm"].max())
    print(f"\nLargest per-task false-flip rate: {worst:.4f}; largest FWER (Holm): {fwer:.4f}.")


if __name__ == "__main__":
    main()
