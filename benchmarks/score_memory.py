"""Peak memory of ``accordkit score --out`` on large text inputs, by batch size (issue 35).

A scoring run's memory should be bounded by its batch, not by its input. Three kinds of
large text input are made from the sample data (fresh episode ids, so nothing is merged):

* **JSONL**: canonical AcCoRD episodes, one per line;
* **one-line JSON**: the same episodes as one JSON array on one line;
* **one-line results file**: an AgentChangeBench results file (replicated simulations of the
  largest fixture) written without indentation, on one line.

Each is scored into a fresh store by ``score_to_store`` in a fresh process (the episode cache
in its own empty folder), with ``--batch-size`` 1,000 and 10,000; the child's peak RSS
(``VmHWM``) is recorded, with the input's size, the peak of the same run on 10 lines of the
JSONL beside it (the fixed cost: interpreter, pyarrow, datasets, the metrics), and a fixed
Python loop's time for the machine's speed. ``--code DIR`` measures another
checkout of accordkit (e.g. the code before the change) with the same inputs.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/score_memory.py [--mb 256] \
        [--code /path/to/other/checkout] [--out benchmarks/results/score_memory.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from scale import QUIET_SPEED_SECONDS, machine_speed

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("ACCORDKIT_SHARED", REPO.parent / "shared")) / "fixtures"
BATCH_SIZES = (1_000, 10_000)

_CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {code!r})
def _hwm_kb():
    with open("/proc/self/status") as fh:
        return int(next(line for line in fh if line.startswith("VmHWM")).split()[1])
import accordkit
from accordkit.engines import score_to_store
t0 = time.perf_counter()
manifest = score_to_store([{path!r}], out={out!r}, batch_size={batch}, progress=False)
print(json.dumps({{"seconds": time.perf_counter() - t0, "rss_kb": _hwm_kb(),
                  "episodes": manifest["episodes"],
                  "failed": manifest["failed_inputs"], "code": accordkit.__file__}}))
"""


def _episodes(n_bytes: int) -> list[dict]:
    """Canonical AcCoRD episodes of the sample, replicated with fresh ids to ``n_bytes``."""
    import accordkit as ak

    rows = ak.load(REPO / "data" / "sample" / "accord").to_list()
    size = sum(len(json.dumps(r)) for r in rows)
    copies = max(1, n_bytes // size + 1)
    return [dict(r, episode_id=f"{r['episode_id']}-c{c}", scenario_id=f"{r['scenario_id']}-c{c}")
            for c in range(copies) for r in rows]


def make_inputs(folder: Path, mb: int) -> dict[str, Path]:
    """The three inputs of about ``mb`` MB each."""
    episodes = _episodes(mb * 1_000_000)
    jsonl = folder / "episodes.jsonl"
    with jsonl.open("w") as fh:
        for rec in episodes:
            fh.write(json.dumps(rec) + "\n")
    one_line = folder / "episodes_one_line.json"
    one_line.write_text(json.dumps(episodes))
    del episodes
    src = FIXTURES / "agentchangebench" / "banking_gpt-4.1_13sims_tasks-trimmed.json"
    obj = json.loads(src.read_text())
    sims = obj["simulations"]
    copies = mb * 1_000_000 // len(json.dumps(sims)) + 1
    obj["simulations"] = [dict(s, id=f"{s['id']}-copy{c}") for c in range(copies) for s in sims]
    results = folder / "results_one_line.json"
    results.write_text(json.dumps(obj))
    tiny = folder / "tiny.jsonl"
    with jsonl.open() as src, tiny.open("w") as dst:
        dst.writelines(line for _, line in zip(range(10), src, strict=False))
    return {"10 lines of the JSONL (the fixed cost)": tiny,
            "JSONL (canonical AcCoRD episodes)": jsonl,
            "one-line JSON (canonical AcCoRD episodes)": one_line,
            "one-line results file (AgentChangeBench)": results}


def measure(path: Path, *, code: Path, batch: int, tmp: Path) -> dict:
    out = tmp / f"store-{path.stem}-{batch}"
    env = dict(os.environ, HF_HUB_OFFLINE="1", ACCORDKIT_CACHE_DIR=str(tmp / f"cache-{batch}"))
    run = subprocess.run([sys.executable, "-c", _CHILD.format(
        code=str(code), path=str(path), out=str(out), batch=batch)],
        capture_output=True, text=True, env=env, cwd=tmp, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def _commit(code: Path) -> str:
    """The measured code by its commit, never by its folder (a path of one machine)."""
    import subprocess

    try:
        rev = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "a checkout that is not a git clone"
    return f"commit {rev}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--code", type=Path, default=REPO,
                        help="the accordkit checkout to measure (default: this one)")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    speed = [machine_speed()]
    with tempfile.TemporaryDirectory(prefix="accordkit-memory-") as tmp:
        inputs = make_inputs(Path(tmp), args.mb)
        for name, path in inputs.items():
            size = path.stat().st_size
            for batch in BATCH_SIZES:
                got = measure(path, code=args.code, batch=batch, tmp=Path(tmp))
                rows.append((name, f"{size / 1e6:.1f} MB", f"{batch:,}", f"{got['episodes']:,}",
                             f"{got['rss_kb'] / 1e3:,.0f} MB",
                             f"{got['rss_kb'] * 1e3 / size:.1f}x", f"{got['seconds']:.1f} s"))
                print(rows[-1], got["failed"], got["code"], flush=True)
    speed.append(machine_speed())
    lines = [
        f"### {args.label}",
        "",
        f"Date: {dt.date.today().isoformat()}. Machine: {os.cpu_count()} cores, "
        f"{platform.machine()}, Python {platform.python_version()}. Code: {_commit(args.code)}. "
        f"Command: `HF_HUB_OFFLINE=1 python benchmarks/score_memory.py --mb {args.mb}`. "
        f"Machine speed: a fixed Python loop took {speed[0]:.2f} s before and "
        f"{speed[1]:.2f} s after ({QUIET_SPEED_SECONDS} s when this VM is quiet).",
        "",
        "| input | size | --batch-size | episodes | peak RSS | peak / size | time |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *[f"| {' | '.join(r)} |" for r in rows],
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        with args.out.open("a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
