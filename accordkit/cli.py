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
    from .validate_report import format_validation, validation_report

    report = validation_report(args.sources)
    print("\n".join(format_validation(report, max_per_reason=args.max_per_reason)))
    return 1 if report.problems else 0


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


#: Subcommands defined in other modules: name -> (module with ``register``, one-line help).
#: The help is repeated here so that ``accordkit --help`` (and ``validate``, ``synth``,
#: ``cache``) need not import those modules and the statistics / litellm stack behind them;
#: ``tests/test_cli_start.py`` checks that it matches what the modules register.
LAZY_COMMANDS = {
    "judge": ("accordkit.judges.cli", "LLM-judge episodes (cached, resumable) -> verdict table"),
    "report": ("accordkit.report.cli", "run the notebooks in batch and write an HTML report"),
}


def _register_lazy(sub: argparse._SubParsersAction, load: set[str] | None) -> None:
    """Register the commands of :data:`LAZY_COMMANDS`: really for ``load`` (None: all),
    as a name and help line only for the others."""
    for name, (module, help_line) in LAZY_COMMANDS.items():
        if load is not None and name not in load:
            sub.add_parser(name, help=help_line, add_help=False)
            continue
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and not module.startswith(exc.name):
                raise
            continue
        mod.register(sub)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first argument that is not an option)."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def _cmd_cache(args: argparse.Namespace) -> int:
    from .cache import cache_clear, cache_info

    if args.action == "clear":
        removed, freed = cache_clear()
        print(f"removed {removed} cache entr{'y' if removed == 1 else 'ies'} "
              f"({freed / 1e6:.1f} MB)")
        return 0
    info = cache_info()
    print(f"cache folder: {info.folder}{'' if info.exists else ' (not created yet)'}")
    print(f"entries: {info.entries}, size: {info.size_bytes / 1e6:.1f} MB")
    print("set ACCORDKIT_CACHE_DIR to move it; `accordkit cache clear` empties it")
    return 0


def _register_cache(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="show or clear the episode cache",
                       description="The episode cache keeps the canonical table of each source "
                       "file (keyed by the file's sha256, accordkit's schema version and the "
                       "reader options) so that loading it again is instant. It lives in "
                       "ACCORDKIT_CACHE_DIR (default ~/.cache/accordkit).")
    p.add_argument("action", choices=("info", "clear"), nargs="?", default="info")
    p.set_defaults(func=_cmd_cache)


def build_parser(*, commands: set[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser (subcommands included).

    ``commands`` limits which of the commands defined in other modules are fully registered
    (the others appear in the help by name only); None registers all.
    """
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
    p.add_argument("--max-per-reason", type=int, default=3, metavar="N",
                   help="list at most N records per file and reason (default: 3)")
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
    p.add_argument("--level", choices=("episode", "preference", "shift"), default="episode")
    p.add_argument("--tcrr-mode", default="episode",
                   choices=("episode", "upstream", "upstream_a6a9157", "upstream_b2cc83c"))
    p.add_argument("--action-mode", default="best_match", choices=("best_match", "upstream"))
    p.add_argument("--shop-type-gate", action="store_true",
                   help="AcCoRD shop: outcome 0 when the product type is wrong")
    p.add_argument("--errors", choices=("raise", "skip"), default="raise",
                   help="stop at the first bad record, or skip and report bad records")
    p.add_argument("-o", "--output", help="write CSV (or .parquet) instead of printing")
    p.set_defaults(func=_cmd_score)

    _register_cache(sub)
    _register_lazy(sub, commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``accordkit`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command_of(argv)
    parser = build_parser(commands={command} if command in LAZY_COMMANDS else set())
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
