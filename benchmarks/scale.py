"""Scale: a million AcCoRD episodes through the score store on one 2-core machine.

Steps (each a fresh process, timed wall-clock; peak RSS is the largest single process among
the command and its workers, from ``getrusage(RUSAGE_CHILDREN)``):

1. ``accordkit synth --episodes N --shards S --num-proc 2`` (the data, made once, kept);
2. ``accordkit score DIR --out STORE --num-proc 2`` (read + score + write, streamed);
3. ``accordkit score DIR --out STORE --engine ray --num-proc 2`` (a local 2-CPU Ray,
   start included), and a check that both stores are equal row for row;
3b. the same on a Ray cluster of 2 nodes of 1 CPU simulated on this machine
   (:class:`accordkit.engines.ray_cluster.LocalCluster`, started beforehand and timed apart)
   with ``RAY_ADDRESS`` pointing at it: how the batches spread over the nodes;
3c. the same on 3 such nodes, one worker node killed once the first batches are stored:
   the run's wall time, and a check that its store equals the local one;
4. ``ak.summarize`` of 3 metrics x 4 groups at 10,000 resamples over the stored scores,
   with the memory it adds above the frame;
5. ``accordkit report --scores STORE`` (every notebook from the store; peak RSS of the
   largest of the command, its workers and their kernels).

Every step records the machine's speed measured just before it (:func:`machine_speed`).

Run:  HF_HUB_OFFLINE=1 python benchmarks/scale.py [--episodes 1000000] [--shards 16]
      [--data /tmp/accordkit-1m] [--skip ray cluster kill summarize report]
Writes benchmarks/results/scale.md; the rows of skipped steps are kept from the file as it
was (each with the date and machine speed of its own run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "scale.md"
PY = sys.executable
CLI = [PY, "-m", "accordkit.cli"]


def run_timed(cmd: list[str], *, env: dict | None = None) -> tuple[float, float, str]:
    """Run a command in a new process; (seconds, peak RSS of its largest process in MB)."""
    return finish_timed(start_timed(cmd, env=env))


def start_timed(cmd: list[str], *, env: dict | None = None) -> subprocess.Popen:
    """:func:`run_timed`, started: finish it with :func:`finish_timed`."""
    script = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'seconds': dt, 'rss_mb': rss, 'code': p.returncode,\n"
        "                  'out': p.stdout[-2000:], 'err': p.stderr[-2000:]}))\n")
    return subprocess.Popen([PY, "-c", script, *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def finish_timed(proc: subprocess.Popen) -> tuple[float, float, str]:
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"timing wrapper failed ({proc.returncode}):\n{err[-2000:]}")
    data = json.loads(out.strip().splitlines()[-1])
    if data["code"]:
        raise SystemExit(f"{' '.join(proc.args[3:])} failed ({data['code']}):\n{data['err']}")
    return data["seconds"], data["rss_mb"], data["out"]


#: A pure-Python loop, timed in a fresh process: how fast this shared VM is at the moment.
_SPEED = ("import time\nt = time.perf_counter()\nx = 0\nfor i in range(20_000_000):\n"
          "    x += i\nprint(time.perf_counter() - t)\n")
#: What that loop takes when the VM is quiet (best of this stop's runs).
QUIET_SPEED_SECONDS = 1.3


def machine_speed() -> float:
    """Seconds of a fixed pure-Python loop now (:data:`QUIET_SPEED_SECONDS` when quiet):
    the times of a run scale with it, so results record it beside their own times."""
    out = subprocess.run([PY, "-c", _SPEED], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


_SUMMARIZE = r"""
import json, resource, sys, time, tracemalloc
import accordkit as ak
store = sys.argv[1]
frame = ak.read_scores(store, columns=["completed", "outcome_score", "task_score"])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
table = ak.summarize(frame, ["completed", "outcome_score", "task_score"],
                     by=["domain", "method"], n_resamples=10_000, seed=0)
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": dt, "rows": len(frame), "groups": int(table[["domain", "method"]]
      .drop_duplicates().shape[0]), "frame_rss_mb": base, "peak_rss_mb": peak,
      "clusters": int(frame["scenario_id"].nunique())}))
"""


def same_tables(a: Path, b: Path) -> str:
    """'equal' when two stores give the same episode and preference frames, else why not
    (read in a new process: two 1M-row frames at once)."""
    check = subprocess.run([PY, "-c", (
        "import sys, pandas as pd, accordkit as ak\n"
        "for lv in ('episode', 'preference'):\n"
        "    pd.testing.assert_frame_equal(ak.read_scores(sys.argv[1], level=lv),\n"
        "                                  ak.read_scores(sys.argv[2], level=lv))\n"
        "print('equal')"), str(a), str(b)], capture_output=True, text=True)
    return check.stdout.strip() or check.stderr[-300:]


def spread(manifest: dict) -> str:
    """How the batches of a Ray run spread over its nodes, from the store's manifest."""
    nodes = manifest.get("nodes", [])
    parts = [f"{len(n['batches'])} batches / {n['episodes']:,} episodes"
             + ("" if n["alive_at_end"] else " (killed)") for n in nodes]
    return f"{len(nodes)} nodes: " + ", ".join(parts)


def score_on_cluster(data: Path, store: Path, *, nodes: int, kill: bool,
                     local: Path | None) -> list[tuple[str, float, float, float, str]]:
    """Start a simulated cluster of ``nodes`` nodes of 1 CPU, score ``data`` on it (killing
    a worker node once the first batches are stored, with ``kill``), and stop it."""
    from accordkit.engines.ray_cluster import LocalCluster

    rows = []
    speed = machine_speed()
    with LocalCluster(nodes=nodes, cpus_per_node=1, object_store_mb=300) as cluster:
        rows.append((f"start a simulated Ray cluster of {nodes} nodes of 1 CPU "
                     "(ray.cluster_utils)", cluster.start_seconds, 0, speed, ""))
        shutil.rmtree(store, ignore_errors=True)
        speed = machine_speed()
        proc = start_timed([*CLI, "score", str(data), "--out", str(store), "--engine", "ray",
                            "--quiet"], env={"RAY_ADDRESS": cluster.address})
        note = ""
        if kill:
            started = time.perf_counter()
            while proc.poll() is None and not list(store.glob("episodes/*.parquet")):
                time.sleep(0.1)
            cluster.kill_node(cluster.worker_ids()[0])
            done = len(list(store.glob("episodes/*.parquet")))
            note = (f"killed after {time.perf_counter() - started:.1f} s and {done} "
                    "stored batches; ")
        secs, rss, _ = finish_timed(proc)
    manifest = json.loads((store / "manifest.json").read_text())
    n = manifest["episodes"]
    note += f"{n:,} episodes, {n / secs:,.0f} episodes/s; {spread(manifest)}"
    if local is not None:
        note += f"; store vs local: {same_tables(store, local)}"
    what = (f"score --engine ray on those {nodes} nodes (RAY_ADDRESS), "
            + ("a worker node killed mid-run" if kill else "read + score + write"))
    rows.append((what, secs, rss, speed, note))
    return rows


STEPS = ("ray", "cluster", "kill", "summarize", "report")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--data", default="/tmp/accordkit-scale")
    ap.add_argument("--skip", nargs="*", default=[], choices=STEPS)
    args = ap.parse_args()
    data = Path(args.data) / f"accord-{args.episodes}"
    rows: list[tuple[str, float, float, float, str]] = []
    if not (data / "README.md").exists():
        speed = machine_speed()
        secs, rss, _ = run_timed([*CLI, "synth", "--episodes", str(args.episodes), "--shards",
                                  str(args.shards), "--num-proc", "2", "--out", str(data)])
        rows.append(("synth (simulate + write shards), 2 processes", secs, rss, speed, ""))
    size = sum(p.stat().st_size for p in data.rglob("*.parquet")) / 2**20
    stores = {}
    for engine in ("local", "ray"):
        if engine in args.skip:
            continue
        store = Path(args.data) / f"store-{engine}"
        shutil.rmtree(store, ignore_errors=True)
        speed = machine_speed()
        secs, rss, out = run_timed([*CLI, "score", str(data), "--out", str(store),
                                    "--num-proc", "2", "--engine", engine, "--quiet"],
                                   env={"RAY_ADDRESS": ""})
        manifest = json.loads((store / "manifest.json").read_text())
        n = manifest["episodes"]
        where = "" if engine == "local" else ", a local Ray: 1 node of 2 CPUs, start included"
        rows.append((f"score --engine {engine} --num-proc 2 (read + score + write{where})",
                     secs, rss, speed, f"{n:,} episodes, {n / secs:,.0f} episodes/s"))
        stores[engine] = (store, secs)
    if len(stores) == 2:
        ratio = stores["ray"][1] / stores["local"][1]
        rows.append(("ray vs local: same tables", 0, 0, 0,
                     f"{same_tables(stores['local'][0], stores['ray'][0])}; "
                     f"wall ratio {ratio:.2f}"))
    local = stores["local"][0] if "local" in stores else None
    if "cluster" not in args.skip:
        rows += score_on_cluster(data, Path(args.data) / "store-cluster", nodes=2, kill=False,
                                 local=local)
    if "kill" not in args.skip:
        rows += score_on_cluster(data, Path(args.data) / "store-kill", nodes=3, kill=True,
                                 local=local)
    if "summarize" not in args.skip and "local" in stores:
        speed = machine_speed()
        res = subprocess.run([PY, "-c", _SUMMARIZE, str(stores["local"][0])],
                             capture_output=True, text=True, check=True)
        s = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(("ak.summarize 3 metrics x 4 groups, 10k resamples", s["seconds"],
                     s["peak_rss_mb"], speed,
                     f"{s['rows']:,} rows, {s['clusters']:,} clusters; "
                     f"{s['peak_rss_mb'] - s['frame_rss_mb']:.0f} MB above the loaded frame"))
    report_rows = []
    if "report" not in args.skip and "local" in stores:
        out = Path(args.data) / "report"
        shutil.rmtree(out, ignore_errors=True)
        speed = machine_speed()
        secs, rss, _ = run_timed([*CLI, "report", "--scores", str(stores["local"][0]), "--out",
                                  str(out)], env={"OPENBLAS_NUM_THREADS": "1"})
        results = json.loads((out / "results.json").read_text())["notebooks"]
        ran = [r for r in results if r["status"] != "skipped"]
        rows.append(("accordkit report --scores (every table from the store)", secs, rss,
                     speed, f"{len(ran)} notebooks ({sum(r['status'] == 'ok' for r in ran)} "
                     "ok), 2 at a time, 10,000 resamples"))
        report_rows = [f"| {r['notebook']} | {r['status']} | {r['seconds']:.1f} |"
                       for r in ran]
    today = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    table = [f"| {name} | {secs:.1f} | {rss:,.0f} | {f'{speed:.2f}' if speed else ''} | "
             f"{note} |" for name, secs, rss, speed, note in rows]
    kept, kept_notebooks = _kept_rows({name for name, *_ in rows}, skipped=set(args.skip))
    lines = [
        "# Scale: a million episodes through the score store",
        "",
        f"Run {today} on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; `python benchmarks/scale.py --episodes "
        f"{args.episodes} --shards {args.shards}"
        + (f" --skip {' '.join(args.skip)}`" if args.skip else "`") + ".",
        f"Data: {args.episodes:,} requested AcCoRD episodes in {args.shards} shards, "
        f"{size:,.0f} MB of parquet.",
        "",
        f"Machine speed: a fixed pure-Python loop timed just before the step ({_SPEED_LOOP}; "
        f"{QUIET_SPEED_SECONDS} s when the shared VM is quiet, more when it is busy): times "
        "scale with it. Rows marked *kept* are from an earlier run (skipped in this one).",
        "",
        "| step | wall s | peak RSS of the largest process, MB | machine speed s | notes |",
        "|---|---:|---:|---:|---|",
        *table, *kept,
    ]
    lines += ["", "Goals (issue 14): score >= 20,000 episodes/s with the largest process "
              "<= 2 GB; Ray <= 2x the local wall time; summarize <= 60 s and <= 1 GB above "
              "the frame; `accordkit report --scores` <= 5 minutes and <= 3 GB.", "",
              "The Ray rows' peak RSS is the driver's only: Ray's worker processes are not "
              "children of the command, so `getrusage` does not see them (each worker scores "
              "one batch at a time, like a local worker). The simulated cluster's nodes share "
              "this machine's 2 cores: a node is a raylet, an object store and worker "
              "processes, not more CPU, so the cluster rows measure what spreading and losing "
              "a node cost, not a speed-up.", ""]
    if report_rows or kept_notebooks:
        lines += ["Notebooks of the report (seconds from submission to done):", "",
                  "| notebook | status | seconds |", "|---|---|---:|",
                  *(report_rows or kept_notebooks), ""]
    lines += _other_sections()
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def _other_sections() -> list[str]:
    """The sections other scripts keep in the results file (between ``<!-- name: begin -->``
    and ``<!-- name: end -->``, e.g. report_scale.py's), carried over unchanged."""
    import re

    if not RESULTS.exists():
        return []
    text = RESULTS.read_text(encoding="utf-8")
    return [m.group(0) + "\n" for m in re.finditer(
        r"<!-- ([\w-]+): begin -->.*?<!-- \1: end -->", text, flags=re.S)]


_SPEED_LOOP = "20 million additions"


#: Row names of each step that may be skipped (their rows are kept from the last run).
_STEP_ROWS = {
    "ray": ("score --engine ray --num-proc", "ray vs local"),
    "cluster": ("start a simulated Ray cluster of 2 ", "score --engine ray on those 2 "),
    "kill": ("start a simulated Ray cluster of 3 ", "score --engine ray on those 3 "),
    "summarize": ("ak.summarize",),
    "report": ("accordkit report",),
}


def _kept_rows(done: set[str], *, skipped: set[str]) -> tuple[list[str], list[str]]:
    """Rows of the results file as it was for the skipped steps (marked *kept*, with the
    date of their run), and its notebook rows when the report was skipped."""
    if not RESULTS.exists() or not skipped:
        return [], []
    text = RESULTS.read_text(encoding="utf-8")
    when = next((line.split(" on ", 1)[0][4:] for line in text.splitlines()
                 if line.startswith("Run ")), "an earlier run")
    wanted = tuple(p for step in skipped for p in _STEP_ROWS[step])
    kept, notebooks, in_notebooks = [], [], False
    for line in text.splitlines():
        if line.startswith("| notebook |"):
            in_notebooks = True
        if not line.startswith("| ") or line.startswith(("| step |", "| notebook |")):
            continue
        if in_notebooks:
            notebooks.append(line)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        name = cells[0].removeprefix("*kept* ")
        if name in done or not name.startswith(wanted):
            continue
        if len(cells) == 4:            # a row from before the machine speed column
            cells.insert(3, "")
        if not cells[0].startswith("*kept*"):
            cells[0], cells[-1] = f"*kept* {name}", f"{cells[-1]} (run of {when})"
        kept.append("| " + " | ".join(cells) + " |")
    return kept, (notebooks if "report" in skipped else [])


if __name__ == "__main__":
    main()
