"""Load time of ``ak.load`` for every fixture file, all fixtures together and the sample data.

Each case runs in a fresh Python process with an empty ``HF_HOME`` (so the datasets cache is
empty): the first ``ak.load`` call is the *cold* time, the median of the next calls the *warm*
time (for hub-layout folders the warm calls read ``datasets``' Arrow cache). Import time of
``accordkit`` is measured apart. Machine: 2 cores.

Run:  HF_HUB_OFFLINE=1 python benchmarks/load_speed.py [--repeats 5]
Writes benchmarks/results/load_speed.md.
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

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ACCORDKIT_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures"
SAMPLE = REPO / "data" / "sample"
RESULTS = REPO / "benchmarks" / "results" / "load_speed.md"

_CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import accordkit as ak
t_import = time.perf_counter() - t0
sources, repeats, export = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
times, n = [], None
for _ in range(repeats + 1):
    t = time.perf_counter()
    ds = ak.load(sources if len(sources) > 1 else sources[0])
    times.append(time.perf_counter() - t)
    n = len(ds)
if export != "-":
    ak.save(ds, export)
print(json.dumps({"import": t_import, "times": times, "n": n}))
"""


def run_case(sources: list[str], repeats: int, export: str = "-") -> dict:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HF_HOME=home, HF_HUB_OFFLINE="1")
        out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(sources), str(repeats),
                              export], env=env, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    warm = sorted(res["times"][1:])
    res["cold"], res["warm"] = res["times"][0], warm[len(warm) // 2]
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases: list[tuple[str, list[str]]] = []
    files = sorted(p for p in FIXTURES.glob("*/*.json") if p.name != "expected_upstream.json")
    for f in files:
        cases.append((f"fixture `{f.parent.name}/{f.name}`", [str(f)]))
    if files:
        cases.append((f"all {len(files)} fixture files (one list)", [str(f) for f in files]))
    tmp = Path(tempfile.mkdtemp())
    samples = sorted(p for p in SAMPLE.iterdir() if (p / "README.md").is_file()) \
        if SAMPLE.is_dir() else []
    rows, n_import = [], []
    for name, sources in cases:
        res = run_case(sources, args.repeats)
        n_import.append(res["import"])
        rows.append((name, res["n"], res["cold"], res["warm"]))
        print(rows[-1], flush=True)
    for folder in samples:
        pq_path = tmp / f"{folder.name}.parquet"
        res = run_case([str(folder)], args.repeats, export=str(pq_path))
        rows.append((f"sample folder `data/sample/{folder.name}` (hub layout)", res["n"],
                     res["cold"], res["warm"]))
        print(rows[-1], flush=True)
        jsonl = tmp / f"{folder.name}.jsonl"
        subprocess.run([sys.executable, "-c", "import sys, accordkit as ak; "
                        "ak.save(ak.load(sys.argv[1]), sys.argv[2])", str(pq_path), str(jsonl)],
                       check=True, capture_output=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        for label, path in (("parquet export", pq_path), ("JSONL export", jsonl)):
            res = run_case([str(path)], args.repeats)
            rows.append((f"sample `{folder.name}`, {label}", res["n"], res["cold"], res["warm"]))
            print(rows[-1], flush=True)
    if len(samples) > 1:
        res = run_case([str(s) for s in samples], args.repeats)
        rows.append(("both sample folders (one list)", res["n"], res["cold"], res["warm"]))
    lines = [
        "# ak.load speed",
        "",
        f"Date: {dt.date.today().isoformat()}. Machine: 2 cores, {platform.machine()}, "
        f"Python {platform.python_version()}, {platform.system()}. "
        f"Command: `HF_HUB_OFFLINE=1 python benchmarks/load_speed.py --repeats {args.repeats}`.",
        "",
        "Each row runs in a fresh process with an empty `HF_HOME`. *Cold* is the first "
        "`ak.load` call (for hub-layout folders it includes `datasets` converting the parquet "
        "files into its Arrow cache); *warm* is the median of the next "
        f"{args.repeats} calls in the same process. `import accordkit` is not included: it "
        f"took {min(n_import):.2f}–{max(n_import):.2f} s." if n_import else "",
        "",
        "| source | episodes | cold (s) | warm (s) |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {n} | {cold:.3f} | {warm:.3f} |" for name, n, cold, warm in rows]
    if not samples:
        lines += ["", "data/sample was absent when this ran: sample rows are missing."]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print(RESULTS.read_text())


if __name__ == "__main__":
    main()
