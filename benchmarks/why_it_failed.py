"""Throughput of the error-analysis tools (issue 31) on 100,000 synthetic episodes.

The episodes are the goal-shift sample written by ``accordkit synth`` (``data/sample/
goalshift``: AgentChangeBench-style tasks with action sets, wrong arguments, repeats and
hand-offs) replicated with new episode ids, as in ``goalshift_score_speed.py``.

Measured:

1. ``ak.action_diff`` on the whole set (every expected action against every call);
2. ``ak.find`` with each kind of condition: text (case-insensitive substring, and a regular
   expression), a tool, a role with text, an action status (with the diff given), and a
   status with text;
3. ``ak.failure_taxonomy`` over the diff (domain x agent, 2,000 resamples) and ``ak.flips``.

The machine's speed (a fixed pure-Python loop, ``scale.machine_speed``) is recorded before
and after, as the times scale with it.

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/why_it_failed.py [--episodes N]``;
the result is written to ``benchmarks/results/why_it_failed.md``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

from goalshift_score_speed import replicate
from scale import QUIET_SPEED_SECONDS, machine_speed

import accordkit as ak
from accordkit._internal.arrow import arrow_table

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "results" / "why_it_failed.md"


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """First and median wall time of ``repeat`` runs, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    speed = [machine_speed()]
    sample = arrow_table(ak.load(REPO / "data" / "sample" / "goalshift"))
    table = replicate(sample, args.episodes)
    n_msgs = sum(len(m) for m in sample.column("messages").to_pylist()) / sample.num_rows
    rows = []
    first, median, diff = timed(lambda: ak.action_diff(table), args.repeat)
    rows.append(("`ak.action_diff(table)`", first, median, len(diff)))
    searches = [
        ("`ak.find(text=\"transfer\")`", dict(text="transfer")),
        ("`ak.find(text=r\"HAT\\d+\", regex=True)`", dict(text=r"HAT\d+", regex=True)),
        ("`ak.find(tool=\"lock_card\")`", dict(tool="lock_card")),
        ("`ak.find(role=\"user\", text=\"dispute\")`", dict(role="user", text="dispute")),
        ("`ak.find(status=\"wrong_arguments\", actions=diff)`",
         dict(status="wrong_arguments", actions=diff)),
        ("`ak.find(status=\"extra\", text=\"card\", actions=diff)`",
         dict(status="extra", text="card", actions=diff)),
    ]
    for label, kwargs in searches:
        first, median, out = timed(lambda kw=kwargs: ak.find(table, **kw), args.repeat)
        rows.append((label, first, median, len(out)))
    episodes = ak.score(ak.load(REPO / "data" / "sample" / "goalshift"))
    small = ak.action_diff(ak.load(REPO / "data" / "sample" / "goalshift"))
    first, median, out = timed(lambda: ak.failure_taxonomy(
        episodes, actions=small, by=["domain", "agent_model"], n_resamples=2_000), 1)
    rows.append((f"`ak.failure_taxonomy` ({len(episodes)} sample episodes, 2,000 resamples)",
                 first, median, len(out)))
    first, median, out = timed(lambda: ak.flips(episodes, actions=small), 1)
    rows.append((f"`ak.flips` ({len(episodes)} sample episodes)", first, median, len(out)))
    speed.append(machine_speed())

    lines = [
        "# Why it failed: action diff and search throughput",
        "",
        f"Script: `benchmarks/why_it_failed.py` (`HF_HUB_OFFLINE=1 .venv/bin/python "
        f"benchmarks/why_it_failed.py --repeat {args.repeat}`). Date: "
        f"{datetime.date.today().isoformat()}. Machine: {os.cpu_count()} cores, "
        f"{platform.machine()}, Python {platform.python_version()}. Machine speed: a fixed "
        f"pure-Python loop took {speed[0]:.2f} s before and {speed[1]:.2f} s after "
        f"({QUIET_SPEED_SECONDS} s when this VM is quiet): times scale with it.",
        "",
        f"Data: {args.episodes:,} episodes replicated from the {sample.num_rows} episodes of "
        f"`data/sample/goalshift` (written by `accordkit synth`; ~{n_msgs:.0f} messages "
        f"each), {len(diff):,} action-diff rows.",
        "",
        "| what | first run | median | rows out | episodes / s (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for i, (label, first, median, n) in enumerate(rows):
        per = f"{args.episodes / median:,.0f}" if i < 1 + len(searches) else "–"
        lines.append(f"| {label} | {first:.2f} s | {median:.2f} s | {n:,} | {per} |")
    lines += [
        "",
        "Goal (issue 31): `ak.find` fast enough to use interactively on 100k episodes (well "
        "under the 2 s a reader waits for an answer); the action diff recorded, as it runs "
        "inside `accordkit score` for every goal-shift episode.",
        "",
        "How: the action diff evaluates each distinct (expected arguments, compared keys, "
        "call arguments) pair once and does the rest (which call each action names, extra "
        "writes, first divergence) with numpy over all episodes at once; `ak.find` runs one "
        "Arrow kernel per condition over the flattened messages and touches only the "
        "matching rows in Python.",
    ]
    RESULT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
