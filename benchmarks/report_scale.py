"""``accordkit report`` on a large input: 200k AcCoRD + 100k goal-shift episodes (issue 13).

The embedded sample (``data/sample/accord``, 576 episodes; ``data/sample/goalshift``, 216)
is replicated into two canonical parquet files: copy ``k`` of an episode gets the episode
id ``<id>/copy<k>`` and the scenario (and task) id ``<id>/copy<k>``, so the clusters grow
with the data as they would in a bigger benchmark. Then, in a fresh process and with an
empty episode cache::

    accordkit report --source accord.parquet goalshift.parquet --out OUT

is timed from launch to exit with ``scale.py``'s runner; the peak RSS of the largest process
among the command, its notebook workers and their kernels is read from
``getrusage(RUSAGE_CHILDREN)`` (every one of them is waited for). Per-notebook times come from ``results.json``.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/report_scale.py \
        [--accord 200000] [--goalshift 100000] [--data /tmp/accordkit-report-scale] \
        [--out benchmarks/results/report_scale.md]

With ``--scores STORE`` it times ``accordkit report --scores STORE`` instead (issue 30: a
store of a million episodes, ``accordkit synth --episodes 1000000 --shards 16`` then
``accordkit score``), with the machine's speed and load beside it, and writes the report
section of ``benchmarks/results/scale.md`` (between its ``report-from-store`` markers)::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/report_scale.py --scores /tmp/acc1m-scores
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
from pathlib import Path

# one way to time a command and its largest process, and how fast the VM is at the time
from scale import QUIET_SPEED_SECONDS, machine_speed, run_timed

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable

#: Goals of issue 13 for this run.
GOAL_SECONDS = 120
GOAL_RSS_MB = 2048


def replicate_sample(name: str, n: int, path: Path) -> int:
    """Write ``n`` episodes made of copies of the sample ``name`` to ``path`` (parquet)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    import accordkit as ak
    from accordkit._internal.arrow import arrow_table
    from accordkit.schema.arrow import episode_dataset

    base = arrow_table(ak.load(str(REPO / "data" / "sample" / name), cache=False))
    copies = []
    for k in range(-(-n // base.num_rows)):
        table = base
        for column in ("episode_id", "scenario_id", "task_id"):
            idx = table.schema.get_field_index(column)
            renamed = pc.binary_join_element_wise(table.column(column), pa.scalar(f"copy{k}"),
                                                  "/")
            table = table.set_column(idx, column, renamed)
        copies.append(table)
    big = pa.concat_tables(copies).slice(0, n).combine_chunks()
    ak.save(episode_dataset(big), str(path))
    return big.num_rows


def measure(accord: int, goalshift: int, data: Path) -> dict:
    """Build the inputs (once) and time one report over them: the figures of the run."""
    data.mkdir(parents=True, exist_ok=True)
    inputs = {"accord": (data / f"accord-{accord}.parquet", accord),
              "goalshift": (data / f"goalshift-{goalshift}.parquet", goalshift)}
    for name, (path, n) in inputs.items():
        if not path.exists():
            replicate_sample(name, n, path)
    report = data / "report"
    cache = data / "cache"
    shutil.rmtree(report, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = {"HF_HUB_OFFLINE": "1", "ACCORDKIT_CACHE_DIR": str(cache),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MPLBACKEND": "Agg"}
    cmd = [PY, "-m", "accordkit.cli", "report", "--source",
           *[str(p) for p, _ in inputs.values()], "--out", str(report)]
    speed = [machine_speed()]
    seconds, rss_mb, _ = run_timed(cmd, env=env)
    speed.append(machine_speed())
    return {"seconds": seconds, "rss_mb": rss_mb, "speed": speed,
            "notebooks": json.loads((report / "results.json").read_text())["notebooks"],
            "sizes_mb": {name: path.stat().st_size / 1e6 for name, (path, _) in inputs.items()}}


#: Goals of issue 30 for ``accordkit report --scores`` on a million episodes.
STORE_GOAL_SECONDS = 60
STORE_GOAL_RSS_MB = 2048
SCALE_MD = REPO / "benchmarks/results/scale.md"
BEGIN, END = "<!-- report-from-store: begin -->", "<!-- report-from-store: end -->"


def _store_rows(store: Path) -> tuple[int, int]:
    """Episodes and scenarios in a score store (from its parquet, not its manifest)."""
    import pyarrow.dataset as pads

    table = pads.dataset(str(store / "episodes"), format="parquet").to_table(
        columns=["scenario_id"])
    return table.num_rows, len(table.column("scenario_id").unique())


def measure_store(store: Path, out: Path) -> dict:
    """Time one ``accordkit report --scores STORE``, with speed and load before and after."""
    shutil.rmtree(out, ignore_errors=True)
    env = {"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MPLBACKEND": "Agg"}
    cmd = [PY, "-m", "accordkit.cli", "report", "--scores", str(store), "--out", str(out)]
    load = [os.getloadavg()]
    speed = [machine_speed()]
    seconds, rss_mb, _ = run_timed(cmd, env=env)
    speed.append(machine_speed())
    load.append(os.getloadavg())
    return {"seconds": seconds, "rss_mb": rss_mb, "speed": speed, "load": load,
            "notebooks": json.loads((out / "results.json").read_text())["notebooks"]}


def store_section(store: Path, run: dict) -> str:
    episodes, scenarios = _store_rows(store)
    load = "; ".join(", ".join(f"{x:.1f}" for x in triple) for triple in run["load"])
    lines = [
        BEGIN,
        "## `accordkit report --scores` on a million episodes (issue 30)",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; "
        f"`python benchmarks/report_scale.py --scores STORE`.",
        f"Store: {episodes:,} AcCoRD episodes on {scenarios:,} scenarios "
        "(`accordkit synth --episodes 1000000 --shards 16 --num-proc 2`, then "
        "`accordkit score --num-proc 2`); default settings (10,000 resamples, BCa, "
        "2 notebooks at a time). The AcCoRD results notebook resamples the scenarios once for "
        "all the cells of its five tables (`accordkit.tables.accord_tables`, "
        "docs/statistics.md, \"Shared draws\").",
        f"Machine speed: a fixed pure-Python loop took {run['speed'][0]:.2f} s before the "
        f"run and {run['speed'][1]:.2f} s after ({QUIET_SPEED_SECONDS} s when this VM is "
        f"quiet); load average (1, 5, 15 min) {load} before and after. The machine is "
        "shared: the run's times scale with that speed.",
        "",
        *result_lines(run, goal_seconds=STORE_GOAL_SECONDS, goal_rss_mb=STORE_GOAL_RSS_MB,
                      processes="command, kernels"),
        END,
    ]
    return "\n".join(lines)


def result_lines(run: dict, *, goal_seconds: float, goal_rss_mb: int,
                 processes: str) -> list[str]:
    """The measures against their goals, whether the goals are met, and the notebooks' times."""
    met = run["seconds"] <= goal_seconds and run["rss_mb"] <= goal_rss_mb
    return [
        "| measure | value | goal |",
        "|---|---:|---:|",
        f"| wall time, launch to exit | {run['seconds']:.1f} s | <= {goal_seconds} s |",
        f"| peak RSS of the largest process ({processes}) | {run['rss_mb']:,.0f} MB | "
        f"<= {goal_rss_mb:,} MB |",
        "",
        f"Goal met: **{'yes' if met else 'no'}**.",
        "",
        "| notebook | status | seconds from submission to done (2 at a time) |",
        "|---|---|---:|",
        *[f"| {r['notebook']} | {r['status']} | {r['seconds']:.1f} |"
          for r in run["notebooks"]],
    ]


def write_store_section(section: str) -> None:
    text = SCALE_MD.read_text(encoding="utf-8")
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    SCALE_MD.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scores", type=Path, default=None,
                    help="time `accordkit report --scores` on this store instead")
    ap.add_argument("--accord", type=int, default=200_000)
    ap.add_argument("--goalshift", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=Path("/tmp/accordkit-report-scale"))
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks/results/report_scale.md")
    args = ap.parse_args()
    if args.scores is not None:
        section = store_section(args.scores, measure_store(args.scores, args.data / "report"))
        write_store_section(section)
        print(section)
        return
    run = measure(args.accord, args.goalshift, args.data)
    sizes = run["sizes_mb"]
    lines = [
        "# `accordkit report` on 200k AcCoRD + 100k goal-shift episodes",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; "
        f"`python benchmarks/report_scale.py --accord {args.accord} "
        f"--goalshift {args.goalshift}`.",
        f"Inputs: the sample replicated with new episode and scenario ids, as canonical "
        f"parquet: {args.accord:,} AcCoRD episodes ({sizes['accord']:.0f} MB), "
        f"{args.goalshift:,} goal-shift episodes ({sizes['goalshift']:.0f} MB); empty episode "
        "cache; default settings (10,000 resamples, 2 notebooks at a time). The report "
        "scores the sources batch by batch into its store, then every notebook reads that "
        "store; only the drill-down reads transcripts, of the episodes it shows.",
        f"Machine speed: a fixed pure-Python loop took {run['speed'][0]:.2f} s before the "
        f"run and {run['speed'][1]:.2f} s after ({QUIET_SPEED_SECONDS} s when this VM is "
        "quiet); the run's times scale with it.",
        "",
        *result_lines(run, goal_seconds=GOAL_SECONDS, goal_rss_mb=GOAL_RSS_MB,
                      processes="command, workers, kernels"),
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
