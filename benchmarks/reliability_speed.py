"""Speed of the reliability functions on a score-store-sized per-episode table.

One million episodes (20 configurations x 10,000 tasks x 5 trials, binary success with
task difficulty) and 300,000 goal shifts (20 configurations, right-censored recovery
times): ``noise_floor``, ``plan_trials`` and ``task_discrimination`` on the episodes,
``recovery_curves`` and ``km_medians`` (1,000 cluster-bootstrap resamples) on the shifts.

Run:  python benchmarks/reliability_speed.py [--no-write]
Writes benchmarks/results/reliability_speed.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy

import accordkit as ak

RESULTS = Path(__file__).resolve().parent / "results" / "reliability_speed.md"


def episodes(configs=20, tasks=10_000, trials=5, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, tasks)
    skill = np.linspace(-1, 1, configs)
    q = 1 / (1 + np.exp(-(np.log(p / (1 - p))[None, :] + skill[:, None])))
    q = np.repeat(q, trials, axis=1).ravel()
    return pd.DataFrame({
        "agent_model": np.repeat([f"c{j:02d}" for j in range(configs)], tasks * trials),
        "scenario_id": np.tile(np.repeat(np.arange(tasks), trials), configs),
        "success": rng.random(len(q)) < q,
    })


def shifts(configs=20, tasks=5_000, per_task=3, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = configs * tasks * per_task
    t = np.ceil(rng.exponential(3.0, n))
    c = rng.integers(2, 20, n).astype(float)
    observed = t <= c
    return pd.DataFrame({
        "agent_model": np.repeat([f"c{j:02d}" for j in range(configs)], tasks * per_task),
        "scenario_id": np.tile(np.repeat(np.arange(tasks), per_task), configs),
        **{f"gsrt_{e}": np.where(observed, t + k, np.nan)
           for k, e in enumerate(("ack", "tool", "outcome"))},
        **{f"censored_{e}": pd.array(~observed, dtype="boolean")
           for e in ("ack", "tool", "outcome")},
        "messages_after_shift": c + 2,
    })


def timed(label: str, fn) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    seconds = time.perf_counter() - start
    print(f"{label}: {seconds:.2f} s", flush=True)
    return {"step": label, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    ep, sh = episodes(), shifts()
    rows = [
        timed("noise_floor by configuration (1M episodes)",
              lambda: ak.noise_floor(ep, by="agent_model")),
        timed("plan_trials by configuration, 2 effects, trials 1-10",
              lambda: ak.plan_trials(ep, effect=[-0.05, 0.05], by="agent_model")),
        timed("task_discrimination (2PL, 10,000 tasks x 20 configurations)",
              lambda: ak.task_discrimination(ep)),
        timed("recovery_curves, 3 events (300k shifts)",
              lambda: ak.recovery_curves(sh)),
        timed("km_medians, 3 events, 1,000 resamples (300k shifts)",
              lambda: ak.km_medians(sh, n_resamples=1000)),
    ]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = ["# Reliability functions on a 1M-episode table", "",
             f"- date: {dt.date.today().isoformat()}",
             f"- machine: {os.cpu_count()} cores; load average {load} when written (shared "
             f"with other runs); Python {platform.python_version()}, numpy {np.__version__}, "
             f"pandas {pd.__version__}, scipy {scipy.__version__}",
             "- script: `python benchmarks/reliability_speed.py`", "",
             "| step | seconds |", "| :--- | ---: |"]
    lines += [f"| {r['step']} | {r['seconds']:.2f} |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
