"""Judge shards: the 1,000-call stub job in one process vs two shard processes at once.

The stub server (200 ms latency, its own process) answers ``gsrt`` on 1,000 distinct
episodes. One process at concurrency 16, then ``--shard 1/2`` and ``--shard 2/2`` as two
processes started together, each at concurrency 16. Two wall times are recorded: whole
processes (interpreter start and imports included) from launch to exit, and the judging
phase inside each process (building the requests, the calls, the cache and the verdict file;
for the shards, until the slower one is done). The merged verdicts must equal the single
run's.

Goal (issue 14): the two shards together take <= 0.6x the single process.

Then the same job as ``accordkit judge --engine ray --shards 2`` (issue 30): on a local Ray
of 2 CPUs (its start included), and on a Ray cluster of 2 nodes of 1 CPU simulated on this
machine (:class:`accordkit.engines.ray_cluster.LocalCluster`, started beforehand, its start
timed apart) with ``RAY_ADDRESS`` pointing at it; their verdicts must equal the single
run's too. The machine's speed (a fixed Python loop, see ``benchmarks/scale.py``) is
recorded before the runs.

Run:  HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/judge_shards.py [--ray-only]
Writes benchmarks/results/judge_shards.md (``--ray-only``: its Ray section only).
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


def _episodes_file(folder: Path) -> Path:
    """The benchmark's episodes as a canonical JSONL file, for the command-line runs."""
    from benchmarks.judge_throughput import episodes

    path = folder / "episodes.jsonl"
    lines = []
    for rec in episodes(N_CALLS):
        tid = rec["episode_id"].rsplit("/", 1)[-1]
        rec.update(task_id=tid, scenario_id=f"agentchangebench/banking/new/{tid}",
                   source=str(path), rollout=0)
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cli(base: str, episodes: Path, cache: Path, out: Path, shard: str,
         *extra: str, address: str = "") -> subprocess.Popen:
    cmd = [str(Path(sys.executable).with_name("accordkit")), "judge", str(episodes),
           "--judge", "gsrt", "--model", "openai/stub-judge", "--api-base", base,
           "--concurrency", str(CONCURRENCY), "--cache", str(cache), "--no-progress",
           "-o", str(out), *extra]
    if shard != "-":
        cmd += ["--shard", shard]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "OPENAI_API_KEY": "sk-benchmark-dummy",
                                 "RAY_ADDRESS": address})


def _on_ray(base: str, episodes: Path, tmp: Path) -> dict:
    """``--engine ray --shards 2``: on a local Ray, then on a simulated 2-node cluster."""
    from accordkit.engines.ray_cluster import LocalCluster

    t = time.perf_counter()
    _timed([_cli(base, episodes, tmp / "r0", tmp / "ray-local.parquet", "-",
                 "--engine", "ray", "--shards", "2")])
    local = time.perf_counter() - t
    os.environ["OPENAI_API_KEY"] = "sk-benchmark-dummy"     # what the nodes inherit
    with LocalCluster(nodes=2, cpus_per_node=1) as cluster:
        t = time.perf_counter()
        _timed([_cli(base, episodes, tmp / "r1", tmp / "ray-cluster.parquet", "-",
                     "--engine", "ray", "--shards", "2", address=cluster.address)])
        on_cluster = time.perf_counter() - t
    return {"local": local, "cluster": on_cluster, "start": cluster.start_seconds}


def _timed(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"a judge run failed with exit status {p.returncode}")


def _same(a, b) -> bool:
    keys = ["episode_id", "item"]
    return a.drop(columns="cached_at").sort_values(keys).reset_index(drop=True) \
        .equals(b.drop(columns="cached_at").sort_values(keys).reset_index(drop=True))


def main() -> None:
    import argparse

    from accordkit.judges import merge_verdicts, read_verdicts
    from benchmarks.scale import QUIET_SPEED_SECONDS, machine_speed

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ray-only", action="store_true",
                    help="run the single process and the Ray runs only, and replace the "
                    "results' Ray section (the rest of the file is kept)")
    args = ap.parse_args()
    speed = machine_speed()
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "judges" / "stub_server.py"),
         "--latency", str(LATENCY), "--answer", REPLY], stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            if not args.ray_only:
                # 1. The judging phase, measured inside Python processes.
                single = _launch(base, tmp / "c0", tmp / "single.parquet", "-")
                single_out = json.loads(single.communicate()[0].strip().splitlines()[-1])
                shards = [_launch(base, tmp / f"c{i}", tmp / f"s{i}.parquet", f"{i}/2")
                          for i in (1, 2)]
                shard_out = [json.loads(p.communicate()[0].strip().splitlines()[-1])
                             for p in shards]
            # 2. Whole `accordkit judge` processes, as a user runs them.
            episodes = _episodes_file(tmp)
            t = time.perf_counter()
            _timed([_cli(base, episodes, tmp / "k0", tmp / "cli-single.parquet", "-")])
            t_single = time.perf_counter() - t
            cli_one = read_verdicts(tmp / "cli-single.parquet")
            if not args.ray_only:
                t = time.perf_counter()
                _timed([_cli(base, episodes, tmp / f"k{i}", tmp / f"cli-s{i}.parquet",
                             f"{i}/2") for i in (1, 2)])
                t_shards = time.perf_counter() - t
                cli_same = merge_verdicts([tmp / "cli-s1.parquet", tmp / "cli-s2.parquet"])
                cli_equal = _same(cli_same, cli_one)
                merged = merge_verdicts([tmp / "s1.parquet", tmp / "s2.parquet"])
                same = _same(merged, read_verdicts(tmp / "single.parquet"))
            # 3. The same job split by Ray.
            on_ray = _on_ray(base, episodes, tmp)
            ray_equal = all(_same(read_verdicts(tmp / f"ray-{where}.parquet"), cli_one)
                            for where in ("local", "cluster"))
    finally:
        server.kill()
    when = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    ray_lines = [
        RAY_SECTION,
        "",
        f"Run {when}; machine speed before the runs: {speed:.2f} s for a fixed Python loop "
        f"({QUIET_SPEED_SECONDS} s when the shared VM is quiet; times scale with it). The "
        "same job and stub; whole `accordkit judge` processes from launch to exit.",
        "",
        "| run | wall s | calls |",
        "|---|---:|---:|",
        f"| one process (the reference, in the same session) | {t_single:.1f} | {N_CALLS} |",
        f"| `--engine ray --shards 2`, a local Ray of 2 CPUs (its start included) | "
        f"{on_ray['local']:.1f} | {N_CALLS} |",
        f"| `--engine ray --shards 2` on a simulated cluster of 2 nodes of 1 CPU "
        f"(`RAY_ADDRESS`; the cluster's start, {on_ray['start']:.1f} s, apart) | "
        f"{on_ray['cluster']:.1f} | {N_CALLS} |",
        "",
        f"Ratio to one process: local Ray **{on_ray['local'] / t_single:.2f}**, cluster "
        f"**{on_ray['cluster'] / t_single:.2f}**. Verdicts equal the single run's: "
        f"**{ray_equal}**.",
        "",
        "On Ray each shard is a Ray task in a worker process of its own (accordkit and "
        "litellm imported again there), besides the command itself and Ray's start or "
        "connection; the nodes of the simulated cluster share this machine's 2 cores. At "
        "1,000 calls those fixed costs outweigh the split. The Ray route pays off when the "
        "judging phase is long (many calls, slow models) or when the nodes are machines of "
        "their own, with their own network and rate limits.",
        "",
    ]
    if args.ray_only:
        text = RESULTS.read_text(encoding="utf-8")
        head = text.split(RAY_SECTION, 1)[0].rstrip("\n") + "\n\n"
        RESULTS.write_text(head + "\n".join(ray_lines), encoding="utf-8")
        print("\n".join(ray_lines))
        return
    ratio = t_shards / t_single
    # The judging phase of the shards ends when the slower shard is done.
    judge_single = single_out["judge_s"]
    judge_shards = max(s["judge_s"] for s in shard_out)
    starts = [single_out["start_s"], *(s["start_s"] for s in shard_out)]
    overhead = t_single - judge_single
    lines = [
        "# Judge shards (`benchmarks/judge_shards.py`)",
        "",
        f"Run {when} on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Stub: {LATENCY * 1000:.0f} "
        f"ms latency, its own process; {N_CALLS} `gsrt` calls; concurrency {CONCURRENCY} per "
        "process. Whole processes: `accordkit judge` command lines from launch to exit. "
        "Judging phase: inside a Python process, from building the requests to the verdict "
        "file written (for the shards, until the slower one is done). Machine speed before "
        f"the runs: {speed:.2f} s for a fixed Python loop ({QUIET_SPEED_SECONDS} s when the "
        "shared VM is quiet; times scale with it).",
        "",
        "| run | whole `accordkit judge` processes, wall s | judging phase, wall s | calls |",
        "|---|---:|---:|---:|",
        f"| one process | {t_single:.1f} | {judge_single:.1f} | {single_out['calls']} |",
        f"| shards 1/2 + 2/2 at once | {t_shards:.1f} | {judge_shards:.1f} | "
        f"{' + '.join(str(s['calls']) for s in shard_out)} |",
        "",
        f"Ratio shards / one process: whole processes **{ratio:.2f}**, judging phase "
        f"**{judge_shards / judge_single:.2f}** (goal <= 0.6). Transport errors: "
        f"{single_out['errors'] + sum(s['errors'] for s in shard_out)}.",
        "",
        f"What a shard cannot divide: each process spends {min(starts):.1f}-{max(starts):.1f} s "
        f"importing accordkit and litellm, about {overhead:.1f} s in all outside the judging "
        "phase. With that fixed cost F and judging time J, two shards take F + J/2 of F + J, "
        "so the whole-process ratio is <= 0.6 once J >= 4 F: from about "
        f"{4 * overhead / judge_single * N_CALLS:,.0f} calls at this latency and concurrency.",
        "",
        f"Merged shard verdicts equal the single run's: **{same and cli_equal}** "
        f"({len(merged)} items; Python runs and command-line runs alike).",
        "",
        *ray_lines,
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


#: The heading of the results' Ray section (``--ray-only`` replaces it alone).
RAY_SECTION = "## On Ray (`accordkit judge --engine ray`)"


if __name__ == "__main__":
    main()
