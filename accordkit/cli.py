"""The ``accordkit`` command: a thin face over the library.

Each subcommand lives with the code it drives and registers itself here through a
``register(subparsers)`` function that sets ``func`` (returning the exit code).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import re
import sys
from collections.abc import Sequence

from . import __version__
from .benchmarks import CATALOG, sample_parts

DESCRIPTION = """\
accordkit re-scores user-agent collaboration benchmarks and reports them.

  load      sources (hub ids, dataset folders, parquet/JSONL, tau2 and
            AgentChangeBench result files) become canonical episodes
  score     accordkit's own metric implementations ({names})
  judge     LLM-judged scores through litellm, cached on disk and resumable
  report    parameterized notebooks run by papermill -> HTML report, tables, figures

Sources are recognised by content. A path that exists is never treated as a hub id. The
command runs offline (HF_HUB_OFFLINE=1 unless set): set HF_HUB_OFFLINE=0 to read from
the hub.
""".format(names=", ".join(b.name for b in CATALOG.values()))

EPILOG = """\
examples:
  accordkit validate data/sample/goalshift path/to/results.json
  accordkit score data/sample/accord --level preference -o prefs.csv
  accordkit score run1.json run2.json --out scores/   # parquet tables + manifest.json
  accordkit report                          # the embedded sample -> reports/index.html
  accordkit report --source run1.json run2.json --out reports/acb
  accordkit judge data/sample/goalshift --judge nl_assertions \\
      --model openai/gpt-4o-mini -o verdicts.parquet
  accordkit synth --out data/sample --seed 0
"""


#: Exit status of a usage error (unknown option, missing or malformed argument): sysexits'
#: EX_USAGE, distinct from every status a command returns (``judge`` uses 2 for "run again").
USAGE_ERROR = 64

EXIT_STATUS = """
exit status: 0 success; 1 bad input (every problem listed); 2 (judge) some items still
have transport errors, run again, (report) a --source does not exist, or --strict and a
bad record; 64 usage error (unknown option, missing argument; report: unknown parameter
or notebook), with option values never printed; 130 interrupted.
"""

_BAD_VALUE = re.compile(r"(invalid choice|invalid [\w ]*?value|ignored explicit argument):? "
                        r"(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)")
_OPTION_VALUE = re.compile(r"(--?[\w-]+)=\S*")


def safe_usage_message(message: str) -> str:
    """An argparse error message with every option value removed (values may be secrets).

    Examples
    --------
    >>> safe_usage_message("unrecognized arguments: --api-key sk-123 --x=1")
    'unrecognized option(s): --api-key --x (1 other argument not shown)'
    >>> safe_usage_message("argument --judge: invalid choice: 'sk-1' (choose from 'a', 'b')")
    "argument --judge: invalid choice (value not shown) (choose from 'a', 'b')"
    """
    match = re.match(r"unrecognized arguments: (.*)", message, re.DOTALL)
    if match:
        tokens = match.group(1).split()
        options = [t.split("=", 1)[0][:60] for t in tokens if t.startswith("-")]
        n_other = len(tokens) - len(options)
        text = "unrecognized option(s): " + " ".join(options) if options \
            else "unrecognized argument(s)"
        if n_other:
            text += f" ({n_other} other argument{'s' if n_other > 1 else ''} not shown)"
        return text
    message = _BAD_VALUE.sub(r"\1 (value not shown)", message)
    return _OPTION_VALUE.sub(r"\1=(value not shown)", message)


class UsageErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage errors exit with :data:`USAGE_ERROR` and never echo
    option values (subcommand parsers inherit it)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {safe_usage_message(message)}\n")


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate_report import format_validation, validation_report

    report = validation_report(args.sources)
    print("\n".join(format_validation(report, max_per_reason=args.max_per_reason)))
    return 1 if report.problems else 0


def _cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .load import load
    from .save import save

    ds = load(args.sources)
    if args.format == "canonical":
        print(f"wrote {save(ds, args.out)}")
        return 0
    save(ds, args.out, format="eee", organization=args.organization,
         relationship=args.relationship, timestamp=args.timestamp, seed=args.seed,
         n_resamples=args.n_resamples)
    for path in sorted(Path(args.out).glob("data/*/*/*/*")):
        print(f"wrote {path}")
    return 0


def _register_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write episodes in another format (Every Eval Ever)",
                       description="Load the sources and write them out: --format eee scores "
                       "them and writes one Every Eval Ever aggregate record per configuration "
                       "(headline metrics with cluster-bootstrap intervals) with its "
                       "_samples.jsonl sidecar, in the EEE datastore layout under --out "
                       "(docs/formats.md); --format canonical writes accordkit's own files "
                       "(as ak.save).")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="files, folders or hub ids (as accordkit load reads them)")
    p.add_argument("--out", required=True, help="output folder (or .parquet/.jsonl file "
                   "for --format canonical)")
    p.add_argument("--format", choices=("eee", "canonical"), default="eee",
                   help="eee (default) or canonical")
    p.add_argument("--organization", default="unknown",
                   help="who publishes the numbers (EEE source_organization_name)")
    p.add_argument("--relationship", default="third_party",
                   choices=("first_party", "third_party", "collaborative", "other"),
                   help="who ran the evaluation, relative to the model's developer")
    p.add_argument("--timestamp", default=None,
                   help="retrieved_timestamp in Unix seconds (default: now)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.add_argument("--n-resamples", type=int, default=10_000,
                   help="bootstrap resamples per interval (default: 10000)")
    p.set_defaults(func=_cmd_export)


def _cmd_synth(args: argparse.Namespace) -> int:
    if args.episodes is not None:
        from .synth.sharded import write_accord_shards

        written = write_accord_shards(args.out, episodes=args.episodes, shards=args.shards,
                                      seed=args.seed, num_proc=args.num_proc)
        print(f"wrote {len(written) - 1} shard(s) and README.md to {args.out}")
        return 0
    from .synth.write import write_sample

    written = write_sample(args.out, seed=args.seed, parts=args.only)
    for path in written:
        print(f"wrote {path}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    """Score sources; bad input is one line on stderr and exit status 1, not a traceback."""
    from pathlib import Path

    from ._internal.redact import redact_sources

    modes = {"tcrr_mode": args.tcrr_mode, "action_mode": args.action_mode,
             "shop_type_gate": args.shop_type_gate}
    if args.num_proc < 1 or args.batch_size < 1:
        print("accordkit score: error: --num-proc and --batch-size must be at least 1",
              file=sys.stderr)
        return USAGE_ERROR
    if args.out:
        return _score_to_store(args, modes)
    if args.output and (Path(args.output).suffix.lower() not in (".csv", ".parquet")
                        or not Path(args.output).resolve().parent.is_dir()):
        print(f"accordkit score: error: -o {args.output}: a .csv or .parquet file in a folder "
              "that exists", file=sys.stderr)
        return USAGE_ERROR
    from .ingest.plan import missing_sources

    missing = missing_sources(args.sources)
    if missing:
        print(f"accordkit score: error: {missing[0]}: no such file or folder, and not a hub "
              "id or URL", file=sys.stderr)
        return 1
    from .load import load
    from .schema import EpisodeValidationError
    from .score import score

    try:
        ds = load(args.sources, errors=args.errors or "raise", revision=args.revision,
                  split=args.split)
    except (EpisodeValidationError, OSError, ValueError) as exc:
        print(f"accordkit score: error: {redact_sources(str(exc))} (--errors skip scores the "
              "good records and lists the bad ones)", file=sys.stderr)
        return 1
    verdicts = None
    if args.verdicts:
        from .judges.verdicts import read_verdicts

        try:
            verdicts = read_verdicts(args.verdicts)
        except (OSError, ValueError) as exc:
            print(f"accordkit score: error: --verdicts: {exc}", file=sys.stderr)
            return 1
    frame = score(ds, level=args.level, verdicts=verdicts, **modes)
    if args.output:
        if args.output.lower().endswith(".parquet"):
            frame.to_parquet(args.output, index=False)
        else:
            frame.to_csv(args.output, index=False)
        print(f"wrote {len(frame)} rows to {args.output}")
    else:
        print(frame.to_string(max_rows=40))
    return 0


def _score_to_store(args: argparse.Namespace, modes: dict) -> int:
    from ._internal.redact import redact_sources
    from .engines import score_to_store
    from .engines.run import RayUnreachableError, StoreBusyError
    from .ingest.plan import missing_sources
    from .store import IncompleteStoreError

    missing = missing_sources(args.sources)
    if missing:
        print(f"accordkit score: error: {missing[0]}: no such file or folder, and not a hub "
              "id or URL", file=sys.stderr)
        return 1

    try:
        manifest = score_to_store(args.sources, out=args.out, engine=args.engine,
                                  num_proc=args.num_proc, batch_size=args.batch_size,
                                  errors="raise" if args.errors == "raise" else "skip",
                                  modes=modes, progress=not args.quiet,
                                  verdicts=args.verdicts, revision=args.revision,
                                  split=args.split)
    except (FileExistsError, StoreBusyError, IncompleteStoreError, RayUnreachableError,
            ImportError, ValueError) as exc:
        print(f"accordkit score: error: {redact_sources(str(exc))}", file=sys.stderr)
        return 1
    n_in = len(manifest["inputs"])
    print(f"scored {manifest['episodes']} episodes from {n_in} input(s) in "
          f"{manifest['seconds']:.1f} s -> {args.out} (engine {manifest['engine']})")
    failed = [r for r in manifest["inputs"] if r["error"]]
    for r in manifest["inputs"]:
        if r.get("same_as") is not None:
            print(f"  {r['source']} was named more than once: read once (input "
                  f"{r['same_as']})")
    if manifest["skipped"]:
        print(f"skipped {manifest['skipped']} bad record(s); see {args.out}/manifest.json")
    left = [r for i in manifest["inputs"] for r in i.get("left_out_records") or ()]
    if manifest.get("left_out") and left:
        from .metrics.action_diff import left_out_line

        print(f"left out {manifest['left_out']} episode(s) of a level it could not score "
              f"(their other scores stand), e.g. {left_out_line(left[0])}; "
              f"see left_out_records in {args.out}/manifest.json")
    noted = sum(bool(r.get("notes")) for r in manifest["inputs"])
    if noted:
        print(f"the loader noted something of {noted} input(s) (e.g. "
              f"{next(r['notes'][0] for r in manifest['inputs'] if r.get('notes'))}); see "
              f"{args.out}/manifest.json")
    for r in failed:
        print(f"  FAILED {r['source']}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


#: Subcommands defined in other modules: name -> (module with ``register``, one-line help).
#: The help is repeated here so that ``accordkit --help`` (and ``validate``, ``synth``,
#: ``cache``) need not import those modules and the statistics / litellm stack behind them;
#: ``tests/test_cli_start.py`` checks that it matches what the modules register.
SCORE_HELP = "re-score episodes and write a tidy table (or a score store)"

LAZY_COMMANDS = {
    "judge": ("accordkit.judges.cli", "LLM-judge episodes (cached, resumable) -> verdict table"),
    "judge-merge": ("accordkit.judges.cli:register_merge",
                    "combine the verdict files (and caches) of sharded judge runs"),
    "report": ("accordkit.report.cli", "run the notebooks in batch and write an HTML report"),
}


#: Commands typed with a space (``main`` turns ``judge merge`` into ``judge-merge``): the
#: help lists them as typed, so that each is named one way.
SPOKEN_NAMES = {"judge-merge": "judge merge"}


def _register_lazy(sub: argparse._SubParsersAction, load: set[str] | None) -> None:
    """Register the commands of :data:`LAZY_COMMANDS`: really for ``load`` (None: all),
    as a name and help line only for the others."""
    for name, (target, help_line) in LAZY_COMMANDS.items():
        if load is not None and name not in load:
            sub.add_parser(name, help=help_line, add_help=False)
            continue
        module, _, func = target.partition(":")
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and not module.startswith(exc.name):
                raise
            continue
        getattr(mod, func or "register")(sub)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first argument that is not an option)."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def _cmd_cache(args: argparse.Namespace) -> int:
    from .ingest.cache import cache_clear, cache_info

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
    p.add_argument("action", choices=("info", "clear"), nargs="?", default="info",
                   metavar="{info,clear}",
                   help="info: the folder, its entries and their size (the default); clear: "
                   "delete every entry (sources are read again on their next load)")
    p.set_defaults(func=_cmd_cache)


def build_parser(*, commands: set[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser (subcommands included).

    ``commands`` limits which of the commands defined in other modules are fully registered
    (the others appear in the help by name only); None registers all.
    """
    parser = UsageErrorParser(
        prog="accordkit", description=DESCRIPTION, epilog=EPILOG + EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"accordkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("validate", help="load sources and list counts and every problem",
                       description="Load every source, print episode counts per benchmark, "
                       "domain and agent model, and list every bad record (file, record, field, "
                       "reason). Exit code 1 when any record is bad.")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="files, folders or hub ids (as accordkit load reads them)")
    p.add_argument("--max-per-reason", type=int, default=3, metavar="N",
                   help="list at most N records per file and reason (default: 3)")
    p.set_defaults(func=_cmd_validate)

    _register_export(sub)

    p = sub.add_parser("synth", help="regenerate the embedded sample data",
                       description="Write the sample datasets made by accordkit's deterministic "
                       "scripted simulator (bit-identical for a given seed).")
    p.add_argument("--out", default="data/sample", help="output folder (default: data/sample)")
    p.add_argument("--seed", type=int, default=0, help="simulator seed (default: 0)")
    p.add_argument("--only", nargs="+", action="extend",
                   choices=(*(s.part for s in sample_parts()), "verdicts"),
                   help="write only these parts")
    big = p.add_argument_group(
        "large sets", "With --episodes, write a large AcCoRD set instead of the sample: "
        "distinct scenarios from the same simulator, as a local dataset folder of parquet "
        "shards (the same seed gives the same files, whatever --num-proc).")
    big.add_argument("--episodes", type=int, metavar="N",
                     help="episodes to simulate, rounded up to a multiple of 24 (each "
                     "scenario pair is played by every agent and method, 3 rollouts each); "
                     "without it the sample is written")
    big.add_argument("--shards", type=int, default=16, metavar="S",
                     help="parquet files (default 16)")
    big.add_argument("--num-proc", type=int, default=1, metavar="P",
                     help="processes simulating shards in parallel (default 1)")
    p.set_defaults(func=_cmd_synth)

    if commands is not None and "score" not in commands:
        # its choices come from the metric modules: imported only when `score` is run
        sub.add_parser("score", help=SCORE_HELP, add_help=False)
    else:
        from .metrics.tcrr import TCRR_MODES
        from .metrics.tsr import ACTION_MODES
        from .score import LEVELS

        p = sub.add_parser("score", help=SCORE_HELP,
                           description="Score episodes with accordkit's metrics; one row per "
                           "episode, preference or goal shift.")
        p.add_argument("sources", nargs="+", metavar="SOURCE",
                       help="files, folders or hub ids, scored as one dataset")
        p.add_argument("--level", choices=LEVELS, default=LEVELS[0],
                       help="one row per episode, per AcCoRD preference or per goal shift "
                       f"(default {LEVELS[0]})")
        p.add_argument("--tcrr-mode", default=TCRR_MODES[0], choices=TCRR_MODES,
                       help="how redundant tool calls are counted: per episode (default) or "
                       "as an upstream version of AgentChangeBench does (docs/"
                       "metrics-goalshift.md)")
        p.add_argument("--action-mode", default=ACTION_MODES[0], choices=ACTION_MODES,
                       help="how calls are matched to expected actions for TSR: best match "
                       "(default) or the upstream rule (first call of each tool)")
        p.add_argument("--shop-type-gate", action="store_true",
                       help="AcCoRD shop: outcome 0 when the product type is wrong")
        p.add_argument("--errors", choices=("raise", "skip"), default=None,
                       help="stop at the first bad record, or skip and report bad records "
                       "(default: raise; with --out: skip, listed in the manifest)")
        p.add_argument("-o", "--output", metavar="FILE",
                       help="write the table to FILE (.csv or .parquet) instead of printing")
        p.add_argument("--verdicts", nargs="+", action="extend", default=[], metavar="PARQUET",
                       help="stored judge verdicts (accordkit judge) to attach where the "
                       "episodes hold none: tables rebuild from them without an API key")
        p.add_argument("--revision", metavar="REV",
                       help="hub ids: the branch, tag or commit to read (pin it for "
                       "reproducible tables)")
        p.add_argument("--split", metavar="NAME",
                       help="only this split (dataset folders, hub ids, canonical files)")
        store = p.add_argument_group(
            "score store (large data)",
            "With --out DIR, episodes are read and scored batch by batch and written as a score "
            "store (parquet per level + manifest.json) that `ak.read_scores(DIR)` and "
            "`accordkit report --scores DIR` read. Memory grows with --batch-size, not with the "
            "data. A bad input is listed in the manifest and the others still score (exit 1).")
        store.add_argument("--out", metavar="DIR", help="write a score store to DIR")
        store.add_argument("--engine", choices=("local", "ray"), default="local",
                           help="local processes, or Ray Data (RAY_ADDRESS, else a local Ray)")
        store.add_argument("--num-proc", type=int, default=1, metavar="N",
                           help="worker processes (local) or CPUs of a local Ray (default 1)")
        store.add_argument("--batch-size", type=int, default=20_000, metavar="ROWS",
                           help="episodes per batch of a parquet shard (default 20000)")
        store.add_argument("--quiet", action="store_true", help="no progress bar")
        p.set_defaults(func=_cmd_score)

    _register_cache(sub)
    _register_lazy(sub, commands)
    for choice in sub._choices_actions:   # listed as typed: `accordkit judge merge`
        if choice.dest in SPOKEN_NAMES:
            choice.metavar = SPOKEN_NAMES[choice.dest]
    return parser


def _terminate_as_interrupt() -> None:
    """SIGTERM (how schedulers and ``kill`` stop a job) ends a command as Ctrl-C does: what
    is stored stays stored, worker processes are stopped, exit status 130."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError, OSError):     # not the main thread: leave it
        signal.signal(signal.SIGTERM, interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``accordkit`` console script."""
    from_console = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["judge", "merge"]:          # `accordkit judge merge` reads naturally
        argv = ["judge-merge", *argv[2:]]
    command = _command_of(argv)
    parser = build_parser(commands={command} if command in (*LAZY_COMMANDS, "score")
                          else set())
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    if from_console:
        from ._internal.warnings_format import plain_warnings

        # offline unless asked: without a network, a hub id would wait ~24 s in retries
        # (before datasets / huggingface_hub are imported, which read it once)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        _terminate_as_interrupt()
        plain_warnings()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if from_console:
            # The process is ending: spare the interpreter's last garbage collection over
            # every object the imports made (1.2 s after litellm's import on this machine).
            # Outputs are all written and closed by now; memory goes back on exit.
            gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
