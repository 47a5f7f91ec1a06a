"""CPU time of ``accordkit report`` on the embedded sample (every notebook), kernels included.

The report runs in a child process; its CPU time is the user + system time of that process
and everything it waited for (the papermill workers and their kernels), from
``getrusage(RUSAGE_CHILDREN)``. Beside it: the wall time, each notebook's wall time (from the
report's ``results.json``), the one-minute load average before and after, and the machine's
speed (:func:`benchmarks.scale.machine_speed`: a fixed pure-Python loop, 1.3 s when this
shared VM is quiet). CPU time moves much less with load than wall time does, but a loaded
machine still adds some (cache and scheduler), so a run on a loaded machine is re-measured.

Run:  HF_HUB_OFFLINE=1 python benchmarks/report_cpu.py [--repeat 2] [--notebooks ...]
      [--repo CHECKOUT]   (another commit's checkout, e.g. the one before a change)
Prints one Markdown row per run (for benchmarks/results/setup_and_report.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import machine_speed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ACCORDKIT = Path(sys.executable).parent / "accordkit"


def one_run(notebooks: list[str] | None, repo: Path = ROOT) -> dict:
    """One report into a fresh folder: CPU (user + sys, children), wall, per-notebook wall.
    ``repo``: a checkout of another commit, run with this environment (on ``PYTHONPATH``)."""
    speed = machine_speed()
    load_before = os.getloadavg()[0]
    out = Path(tempfile.mkdtemp(prefix="report-cpu-")) / "rep"
    args = [str(ACCORDKIT), "report", "--out", str(out)]
    if notebooks:
        args += ["--notebooks", *notebooks]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    if repo != ROOT:
        env["PYTHONPATH"] = str(repo)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"report failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    results = json.loads((out / "results.json").read_text())
    pages = {r["notebook"]: r.get("seconds") or r.get("duration") for r in
             (results if isinstance(results, list) else results.get("notebooks", []))}
    return {"cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
            "wall": wall, "pages": pages, "speed": speed, "load_before": load_before,
            "load_after": os.getloadavg()[0], "speed_after": machine_speed()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--notebooks", nargs="*")
    parser.add_argument("--repo", type=Path, default=ROOT,
                        help="a checkout of another commit to measure (default: this one)")
    args = parser.parse_args()
    for _ in range(args.repeat):
        r = one_run(args.notebooks, args.repo.resolve())
        pages = ", ".join(f"{k} {v:.0f} s" for k, v in r["pages"].items()
                          if isinstance(v, int | float))
        print(f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC | {r['cpu']:.1f} s "
              f"({r['user']:.1f} user + {r['sys']:.1f} sys) | {r['wall']:.1f} s | {pages} | "
              f"{r['speed']:.2f} / {r['speed_after']:.2f} s | {r['load_before']:.1f} / "
              f"{r['load_after']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
