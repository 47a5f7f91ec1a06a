"""Re-scoring speed of the AcCoRD metrics on a 100,000-episode synthetic set (issue 3).

The set is the embedded sample (``data/sample/accord``, 576 episodes) replicated with new
episode ids until it has ``--n`` rows. Times are the best of ``--repeat`` runs of the pure
metric functions on the Arrow table, plus ``accord_table`` on their output.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/accord_score_speed.py \
        [--n 100000] [--repeat 3] [--out benchmarks/results/accord_score_speed.md]

Goal: at least 20,000 episodes per second for ``score_episodes`` on a 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.metrics.accord import score_episodes, score_preferences
from accordkit.tables.paper import accord_table

REPO = Path(__file__).resolve().parents[1]
GOAL = 20_000


def synthetic_table(n: int) -> pa.Table:
    """The sample episodes, replicated with fresh episode ids, cut to ``n`` rows."""
    base = arrow_table(ak.load(str(REPO / "data" / "sample" / "accord")))
    copies = []
    for k in range(-(-n // base.num_rows)):
        ids = pc.binary_join_element_wise(base.column("episode_id"), pa.scalar(f"copy{k}"), "/")
        copies.append(base.set_column(base.schema.get_field_index("episode_id"), "episode_id",
                                      ids))
    return pa.concat_tables(copies).slice(0, n).combine_chunks()


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    t0 = time.perf_counter()
    table = synthetic_table(args.n)
    build = time.perf_counter() - t0
    n_msgs = int(pc.sum(pc.list_value_length(table.column("messages"))).as_py())
    n_prefs = int(pc.sum(pc.list_value_length(table.column("preferences"))).as_py())

    t_ep = best_of(lambda: score_episodes(table), args.repeat)
    t_pr = best_of(lambda: score_preferences(table), args.repeat)
    ids = table.select(["agent_model", "method", "scenario_id", "domain"]).to_pandas()
    ep = pd.concat([ids, score_episodes(table)], axis=1)
    pr = score_preferences(table)
    pr = pd.concat([ids.iloc[pr["row"]].reset_index(drop=True), pr.drop(columns="row")], axis=1)
    t_tab = best_of(lambda: accord_table(ep, preferences=pr), args.repeat)
    # One stored outcome verdict per preference (the join path of ``verdicts=``).
    eids = table.column("episode_id").to_numpy(zero_copy_only=False)
    rows = score_preferences(table)
    verdicts = pd.DataFrame({"episode_id": eids[rows["row"].to_numpy()], "judge": "outcome",
                             "item": rows["pref_id"].to_numpy(), "verdict": "1"})
    t_ver = best_of(lambda: score_episodes(table, verdicts=verdicts), args.repeat)

    rate = args.n / t_ep
    lines = [
        "# AcCoRD re-scoring speed",
        "",
        f"- date: {dt.date.today().isoformat()}",
        f"- machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}, pyarrow {pa.__version__}, pandas {pd.__version__}",
        f"- command: `HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/accord_score_speed.py "
        f"--n {args.n} --repeat {args.repeat}`",
        f"- data: `data/sample/accord` replicated to {args.n:,} episodes "
        f"({n_msgs:,} messages, {n_prefs:,} preferences; built in {build:.1f} s)",
        f"- timing: best of {args.repeat} runs",
        "",
        "| step | seconds | episodes / s |",
        "|---|---|---|",
        f"| `score_episodes` | {t_ep:.3f} | {rate:,.0f} |",
        f"| `score_preferences` | {t_pr:.3f} | {args.n / t_pr:,.0f} |",
        f"| `score_episodes` with {len(verdicts):,} stored verdicts | {t_ver:.3f} | "
        f"{args.n / t_ver:,.0f} |",
        f"| `accord_table` (model x method, pooled) | {t_tab:.3f} | {args.n / t_tab:,.0f} |",
        "",
        f"Goal (issue 3): >= {GOAL:,} episodes/s for `score_episodes`: "
        f"**{'met' if rate >= GOAL else 'NOT met'}** ({rate / GOAL:.1f}x the goal).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
