"""Judge shards: the 1,000-call stub job in one process vs two shard processes at once.

The stub server (200 ms latency, its own process) answers ``gsrt`` on 1,000 distinct
episodes. One process at concurrency 16, then ``--shard 1/2`` and ``--shard 2/2`` as two
processes started together, each at concurrency 16. Two wall times are recorded: whole
processes (interpreter start and imports included) from launch to exit, and the judging
phase inside each process (building the requests, the calls, the cache and the verdict file;
for the shards, until the slower one is done). The merged verdicts must equal the single
run's.

Goal (issue 14): the two shards together take <= 0.6x the single process.

Run:  HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/judge_shards.py
Writes benchmarks/results/judge_shards.md.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "judge_shards.md"
sys.path.insert(0, str(REPO))

N_CALLS, LATENCY, CONCURRENCY = 1000, 0.2, 16
REPLY = json.dumps({"start_goal": {"turn": 1, "goal": "cards"}, "user_goal_shifts": []})

_CHILD = r"""
import time
t0 = time.perf_counter()
import sys, json
sys.path.insert(0, sys.argv[1])
from benchmarks.judge_throughput import episodes
from accordkit.judges import run_judge, write_verdicts
import litellm  # imported by the first call anyway: timed as start-up, not as judging
base, cache, out, shard = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
t1 = time.perf_counter()
run = run_judge(episodes(1000), judge="gsrt", model="openai/stub-judge", api_base=base,
                concurrency=16, cache_dir=cache, price_in=0.15, price_out=0.6,
                progress=False, shard=None if shard == "-" else shard)
write_verdicts(run.verdicts, out)
t2 = time.perf_counter()
print(json.dumps({"calls": run.n_calls, "errors": run.n_errors, "start_s": t1 - t0,
                  "judge_s": t2 - t1}))
"""


def _launch(base: str, cache: Path, out: Path, shard: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(REPO), base, str(cache),
                             str(out), shard], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy"})


def main() -> None:
    from accordkit.judges import merge_verdicts, read_verdicts

    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "judges" / "stub_server.py"),
         "--latency", str(LATENCY), "--answer", REPLY], stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            t = time.perf_counter()
            single = _launch(base, tmp / "c0", tmp / "single.parquet", "-")
            single_out = json.loads(single.communicate()[0].strip().splitlines()[-1])
            t_single = time.perf_counter() - t
            t = time.perf_counter()
            shards = [_launch(base, tmp / f"c{i}", tmp / f"s{i}.parquet", f"{i}/2")
                      for i in (1, 2)]
            shard_out = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in shards]
            t_shards = time.perf_counter() - t
            merged = merge_verdicts([tmp / "s1.parquet", tmp / "s2.parquet"])
            one = read_verdicts(tmp / "single.parquet")
            keys = ["episode_id", "item"]
            same = merged.drop(columns="cached_at").sort_values(keys).reset_index(drop=True) \
                .equals(one.drop(columns="cached_at").sort_values(keys).reset_index(drop=True))
    finally:
        server.kill()
    ratio = t_shards / t_single
    # The judging phase of the shards ends when the slower shard is done.
    judge_single = single_out["judge_s"]
    judge_shards = max(s["judge_s"] for s in shard_out)
    starts = [single_out["start_s"], *(s["start_s"] for s in shard_out)]
    lines = [
        "# Judge shards (`benchmarks/judge_shards.py`)",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Stub: {LATENCY * 1000:.0f} "
        f"ms latency; {N_CALLS} `gsrt` calls; concurrency {CONCURRENCY} per process; wall "
        "time of whole processes (start-up and imports included).",
        "",
        "| run | whole processes, wall s | judging phase, wall s | calls | errors |",
        "|---|---:|---:|---:|---:|",
        f"| one process | {t_single:.1f} | {judge_single:.1f} | {single_out['calls']} | "
        f"{single_out['errors']} |",
        f"| shards 1/2 + 2/2 at once | {t_shards:.1f} | {judge_shards:.1f} | "
        f"{' + '.join(str(s['calls']) for s in shard_out)} | "
        f"{sum(s['errors'] for s in shard_out)} |",
        "",
        f"Ratio shards / one process, judging phase (request building, calls, cache and "
        f"verdict writes): **{judge_shards / judge_single:.2f}** (goal <= 0.6). Whole "
        f"processes: **{ratio:.2f}**; each process first spends "
        f"{min(starts):.1f}-{max(starts):.1f} s starting (interpreter, accordkit, litellm's "
        "import), which a shard cannot divide: with start-up S and judging J, two shards take "
        "S + J/2, so whole-process ratios reach 0.6 once J >= 4 S (here about "
        f"{4 * max(starts) / judge_single * N_CALLS:,.0f} calls at this latency and "
        "concurrency).",
        "",
        f"Merged verdicts equal the single run's: **{same}** ({len(merged)} items).",
        "",
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
