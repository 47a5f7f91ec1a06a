"""Peak memory of ``accordkit score --out`` on a JSON Lines file holding one 1 GiB record
(issue 41, item 6).

Before the record bound that file peaked at 13.8 GB. The file is 20 canonical AcCoRD
episodes of the sample data, the sixth one's first message replaced by 1 GiB of text; it
is scored into a fresh store by ``accordkit score FILE --out DIR`` in a child process, and
the child's peak RSS (``ru_maxrss`` of ``os.wait4``) is recorded with the
wall time, the manifest's counts and a fixed Python loop's time for the machine's speed.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/record_bound.py \
        [--gib 1] [--out benchmarks/results/record_bound.md]
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
import time
from pathlib import Path

from scale import QUIET_SPEED_SECONDS, machine_speed

REPO = Path(__file__).resolve().parents[1]


def _write_input(path: Path, gib: float) -> None:
    import accordkit as ak

    rows = [json.loads(json.dumps(r)) for r in ak.load(REPO / "data/sample/accord").to_list()[:20]]
    big = rows[5]
    big["messages"] = [dict(big["messages"][0], content="x" * int(gib * (1 << 30)))]
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--write", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:      # in its own process: the measured child must not inherit its memory
        _write_input(Path(args.write), args.gib)
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "episodes.jsonl"
        subprocess.run([sys.executable, __file__, "--gib", str(args.gib), "--write", str(src)],
                       check=True)
        size = src.stat().st_size
        speed = machine_speed()
        env = {**os.environ, "ACCORDKIT_CACHE_DIR": str(Path(tmp) / "cache")}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", "import sys; from accordkit.cli import main; sys.exit(main())", "score", str(src), "--out",
                                 str(Path(tmp) / "store")], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        manifest = json.loads((Path(tmp) / "store" / "manifest.json").read_text())
        (rec,) = manifest["inputs"]
    problem = rec["problems"][0].split(", field")[0].replace(str(src), "episodes.jsonl")
    text = "\n".join([
        "# Peak memory of `accordkit score --out` on one huge JSON Lines record",
        "",
        "Issue 41.6: a 1 GiB record peaked at 13.8 GB. Records over the bound "
        "(`accordkit.ingest.formats.json_text.MAX_RECORD_BYTES`, 64 MiB) are read past in "
        "chunks and left out by name; `benchmarks/record_bound.py` measures it.",
        "",
        f"Date: {dt.date.today()}. Machine: {os.cpu_count()} cores, {platform.machine()}, "
        f"Python {platform.python_version()}. Machine speed: a fixed Python loop took "
        f"{speed:.2f} s ({QUIET_SPEED_SECONDS} s when this VM is quiet).",
        "",
        "| input | size | exit | episodes | skipped | peak RSS | time |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| 20 episodes, one of {args.gib:g} GiB | {size / 1e6:,.0f} MB | {code} | "
        f"{rec['episodes']} | {rec['skipped']} | {usage.ru_maxrss / 1024:,.0f} MB | "
        f"{seconds:.1f} s |",
        "",
        f"The skipped record is named: `{problem}`.",
        "",
    ])
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
