"""Wall time of `make test` (the fast default) and `make test-all` (what CI runs), issue 42.

Each target runs as a user runs it, in this clone, with ``-q -p no:cacheprovider``; its wall
time, the tests it ran (pytest's last line) and its 20 slowest tests (``--durations=20``,
always on) are kept. Beside them: the machine's speed (a fixed Python loop, 1.3 s on a quiet
machine of this kind) before and after, and the load average sampled every 10 s during the
run (the 2-core machine is shared: a loaded run says so rather than passing for a quiet one).

Usage::

    python benchmarks/test_suite.py [--target test] [--target test-all] \
        [--out benchmarks/results/test_suite.md]

Appends one section per target to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import threading
import time
from pathlib import Path

from scale import QUIET_SPEED_SECONDS, machine_speed

REPO = Path(__file__).resolve().parents[1]


def _loads(stop: threading.Event, into: list[float]) -> None:
    while not stop.wait(10):
        into.append(os.getloadavg()[0])


def run(target: str) -> dict:
    """Run ``make TARGET`` once; its wall time, last line, slowest tests and the load."""
    speed_before, load_before = machine_speed(), os.getloadavg()[0]
    stop, loads = threading.Event(), []
    watcher = threading.Thread(target=_loads, args=(stop, loads), daemon=True)
    watcher.start()
    started = time.perf_counter()
    done = subprocess.run(["make", target, "PYTEST_ARGS=-q -p no:cacheprovider"], cwd=REPO,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    stop.set()
    watcher.join()
    lines = done.stdout.splitlines()
    summary = next((x.strip("= ") for x in reversed(lines) if re.search(r"\d+ (passed|failed)",
                                                                       x)), "no summary")
    at = next((i for i, x in enumerate(lines) if "slowest 20 durations" in x), None)
    slowest = [x for x in lines[at + 1:at + 21] if re.match(r"\d+\.\d+s ", x)] if at else []
    return {"target": target, "seconds": seconds, "exit": done.returncode, "summary": summary,
            "slowest": slowest, "speed": (speed_before, machine_speed()),
            "load": (load_before, max(loads, default=load_before),
                     sum(loads) / len(loads) if loads else load_before),
            "tail": done.stdout[-4000:] + done.stderr[-2000:]}


def _workers(target: str) -> str:
    """How many pytest-xdist workers the target runs on (the Makefile's TEST_WORKERS)."""
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    line = re.search(rf"^{re.escape(target)}: .*\n\t(.*)$", make, re.M)
    workers = re.search(r"^TEST_WORKERS \?= (\d+)$", make, re.M)
    if line and "-n $(TEST_WORKERS)" in line.group(1) and workers:
        return f"{workers.group(1)} pytest-xdist workers (`--dist loadgroup`)"
    return "one process"


def section(r: dict) -> str:
    minutes, secs = divmod(round(r["seconds"]), 60)
    lines = [
        f"### `make {r['target']}`",
        "",
        f"Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC. Machine: "
        f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}. "
        f"Command: `make {r['target']} PYTEST_ARGS=\"-q -p no:cacheprovider\"` "
        f"({_workers(r['target'])}). Machine speed: "
        f"a fixed Python loop took {r['speed'][0]:.2f} s before and {r['speed'][1]:.2f} s after "
        f"({QUIET_SPEED_SECONDS} s when this VM is quiet). Load average (1 min, 2 cores): "
        f"{r['load'][0]:.1f} at the start, {r['load'][2]:.1f} on average and "
        f"{r['load'][1]:.1f} at most during the run.",
        "",
        f"Wall time: **{minutes}:{secs:02d}** ({r['seconds']:.0f} s), exit {r['exit']}: "
        f"{r['summary']}.",
        "",
        "Slowest 20 tests:",
        "",
        "```text",
        *r["slowest"],
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", choices=["test", "test-all"])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    for target in args.target or ["test", "test-all"]:
        result = run(target)
        text = section(result)
        print(text, flush=True)
        if result["exit"] != 0:
            print(result["tail"], flush=True)
        if args.out is not None:
            with args.out.open("a", encoding="utf-8") as fh:
                fh.write(text + "\n")


if __name__ == "__main__":
    main()
