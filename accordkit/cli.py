"""The ``accordkit`` command: a thin face over the library.

Each subcommand lives with the code it drives and registers itself here through a
``register(subparsers)`` function that sets ``func`` (returning the exit code).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__

DESCRIPTION = """\
accordkit re-scores user-agent collaboration benchmarks and reports them.

  load      sources (hub ids, dataset folders, parquet/JSONL, tau2 and
            AgentChangeBench result files) become canonical episodes
  score     accordkit's own metric implementations (AcCoRD, AgentChangeBench, tau2)
  judge     LLM-judged scores through litellm, cached on disk and resumable
  report    parameterized notebooks run by papermill -> HTML report, tables, figures

Sources are recognised by content. A path that exists is never treated as a hub id.
Tests and the default run are offline; set HF_HUB_OFFLINE=0 to read from the hub.
"""

EPILOG = """\
examples:
  accordkit validate data/sample/goalshift path/to/results.json
  accordkit score data/sample/accord --level preference -o prefs.csv
  accordkit report                          # the embedded sample -> reports/index.html
  accordkit report --source run1.json run2.json --out reports/acb
  accordkit judge data/sample/goalshift --judge nl_assertions \\
      --model openai/gpt-4o-mini -o verdicts.parquet
  accordkit synth --out data/sample --seed 0
"""


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate_report import validation_summary

    counts, problems = validation_summary(args.sources)
    if counts.empty:
        print("no episodes loaded")
    else:
        print(counts.to_string(index=False))
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for p in problems:
            print(f"  - {p}")
        return 1
    print("\nno problems found")
    return 0


def _cmd_synth(args: argparse.Namespace) -> int:
    from .synth.write import write_sample

    written = write_sample(args.out, seed=args.seed, parts=args.only)
    for path in written:
        print(f"wrote {path}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from .load import load
    from .score import score

    ds = load(args.sources, errors=args.errors)
    frame = score(ds, level=args.level, tcrr_mode=args.tcrr_mode, action_mode=args.action_mode,
                  shop_type_gate=args.shop_type_gate)
    if args.output:
        if args.output.endswith(".parquet"):
            frame.to_parquet(args.output, index=False)
        else:
            frame.to_csv(args.output, index=False)
        print(f"wrote {len(frame)} rows to {args.output}")
    else:
        print(frame.to_string(max_rows=40))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (subcommands included)."""
    from .metrics.tcrr import TCRR_MODES
    from .metrics.tsr import ACTION_MODES
    from .score import LEVELS

    parser = argparse.ArgumentParser(
        prog="accordkit", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"accordkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("validate", help="load sources and list counts and every problem",
                       description="Load every source, print episode counts per benchmark, "
                       "domain and agent model, and list every bad record (file, record, field, "
                       "reason). Exit code 1 when any record is bad.")
    p.add_argument("sources", nargs="+", metavar="SOURCE")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("synth", help="regenerate the embedded sample data",
                       description="Write the sample datasets made by accordkit's deterministic "
                       "scripted simulator (bit-identical for a given seed).")
    p.add_argument("--out", default="data/sample", help="output folder (default: data/sample)")
    p.add_argument("--seed", type=int, default=0, help="simulator seed (default: 0)")
    p.add_argument("--only", nargs="+", choices=("accord", "goalshift", "verdicts"),
                   help="write only these parts")
    p.set_defaults(func=_cmd_synth)

    p = sub.add_parser("score", help="re-score episodes and write a tidy table",
                       description="Score episodes with accordkit's metrics; one row per "
                       "episode, preference or goal shift.")
    p.add_argument("sources", nargs="+", metavar="SOURCE")
    p.add_argument("--level", choices=LEVELS, default=LEVELS[0])
    p.add_argument("--tcrr-mode", default=TCRR_MODES[0], choices=TCRR_MODES)
    p.add_argument("--action-mode", default=ACTION_MODES[0], choices=ACTION_MODES)
    p.add_argument("--shop-type-gate", action="store_true",
                   help="AcCoRD shop: outcome 0 when the product type is wrong")
    p.add_argument("--errors", choices=("raise", "skip"), default="raise",
                   help="stop at the first bad record, or skip and report bad records")
    p.add_argument("-o", "--output", help="write CSV (or .parquet) instead of printing")
    p.set_defaults(func=_cmd_score)

    for module in ("accordkit.judges.cli", "accordkit.report.cli"):
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and not module.startswith(exc.name):
                raise
            continue
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``accordkit`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
