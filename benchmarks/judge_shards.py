"""Judge shards: the 1,000-call stub job in one process vs two shard processes at once.

The stub server (200 ms latency, its own process) answers ``gsrt`` on 1,000 distinct
episodes. One process at concurrency 16, then ``--shard 1/2`` and ``--shard 2/2`` as two
processes started together, each at concurrency 16. Wall times are whole processes
(interpreter start and imports included) from launch to exit. The merged verdicts must equal
the single run's.

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
import sys, json
sys.path.insert(0, sys.argv[1])
from benchmarks.judge_throughput import episodes
from accordkit.judges import run_judge, write_verdicts
base, cache, out, shard = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
run = run_judge(episodes(1000), judge="gsrt", model="openai/stub-judge", api_base=base,
                concurrency=16, cache_dir=cache, price_in=0.15, price_out=0.6,
                progress=False, shard=None if shard == "-" else shard)
write_verdicts(run.verdicts, out)
print(json.dumps({"calls": run.n_calls, "errors": run.n_errors}))
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
    lines = [
        "# Judge shards (`benchmarks/judge_shards.py`)",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Stub: {LATENCY * 1000:.0f} "
        f"ms latency; {N_CALLS} `gsrt` calls; concurrency {CONCURRENCY} per process; wall "
        "time of whole processes (start-up and imports included).",
        "",
        "| run | wall s | calls | errors |",
        "|---|---:|---:|---:|",
        f"| one process | {t_single:.1f} | {single_out['calls']} | {single_out['errors']} |",
        f"| shards 1/2 + 2/2 at once | {t_shards:.1f} | "
        f"{' + '.join(str(s['calls']) for s in shard_out)} | "
        f"{sum(s['errors'] for s in shard_out)} |",
        "",
        f"Ratio shards / one process: **{ratio:.2f}** (goal <= 0.6). Merged verdicts equal "
        f"the single run's: **{same}** ({len(merged)} items).",
        "",
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
