"""Speed of the goal-shift metrics (issue 4).

1. The full goal-shift metric set (``goalshift.score_episodes`` with default modes: TSR and
   channels, TUE, TCRR, GSRT, outcome columns) on a 100,000-episode synthetic set, made by
   replicating the sample episodes (``data/sample/goalshift``) with new episode ids. Also the
   shift level, the dispatcher ``accordkit.score`` on a ``datasets.Dataset``, and the pooled
   upstream modes.
2. Loading and scoring all released fixture files together (AgentChangeBench and tau2).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/goalshift_score_speed.py [--episodes N]``.
The result is recorded in ``benchmarks/results/goalshift_score_speed.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

import datasets
import pyarrow as pa

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.metrics import goalshift
from accordkit.schema import EPISODE_FEATURES

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ACCORDKIT_SHARED", REPO.parent / "shared"))


def replicate(table: pa.Table, n: int) -> pa.Table:
    """``n`` episodes made of copies of ``table``'s rows, each with a new episode id."""
    copies = -(-n // table.num_rows)
    big = pa.concat_tables([table] * copies).slice(0, n).combine_chunks()
    ids = pa.array([f"agentchangebench/bench-{i:07d}" for i in range(n)], pa.string())
    return big.set_column(big.schema.get_field_index("episode_id"), "episode_id", ids)


def best_of(fn, repeat: int) -> tuple[float, float, float]:
    """First (cold), best and median wall time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    sample = arrow_table(ak.load(REPO / "data" / "sample" / "goalshift"))
    table = replicate(sample, args.episodes)
    n_msgs = sum(len(m) for m in sample.column("messages").to_pylist())
    print(f"{platform.python_version()} on {os.cpu_count()} cores; {args.episodes:,} episodes "
          f"(~{n_msgs / sample.num_rows:.1f} messages each), from {sample.num_rows} sample "
          "episodes")

    for label, fn in (
        ("score_episodes, default modes (full metric set)",
         lambda: goalshift.score_episodes(table)),
        ("score_episodes, tcrr_mode=upstream, action_mode=upstream",
         lambda: goalshift.score_episodes(table, tcrr_mode="upstream",
                                          action_mode="upstream")),
        ("score_shifts", lambda: goalshift.score_shifts(table)),
    ):
        first, best, median = best_of(fn, args.repeat)
        print(f"{label}: first {first:.2f} s, best {best:.2f} s, median {median:.2f} s -> "
              f"{args.episodes / median:,.0f} episodes/s (median), "
              f"{args.episodes / first:,.0f} (first run)")

    ds = datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES))
    first, best, median = best_of(lambda: ak.score(ds), args.repeat)
    print(f"ak.score(ds) (dispatcher, id columns added): first {first:.2f} s, best "
          f"{best:.2f} s, median {median:.2f} s -> {args.episodes / median:,.0f} episodes/s")

    fixtures = sorted(p for p in (SHARED / "fixtures" / "agentchangebench").glob("*.json")
                      if p.name != "expected_upstream.json")
    fixtures += sorted((SHARED / "fixtures" / "tau2").glob("*.json"))
    if fixtures:
        def load_and_score():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loaded = ak.load(fixtures)
                return loaded, ak.score(loaded), ak.compare_modes(loaded)

        first, best, median = best_of(load_and_score, args.repeat)
        loaded = load_and_score()[0]
        print(f"load + score + compare_modes of {len(fixtures)} fixture files "
              f"({len(loaded)} episodes): first {first:.2f} s, best {best:.2f} s, "
              f"median {median:.2f} s")


if __name__ == "__main__":
    main()
