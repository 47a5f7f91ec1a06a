"""``accordkit report``: the batch report over the notebooks."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def _run(args: argparse.Namespace) -> int:
    import sys

    from ..metrics.action_diff import left_out_line
    from ..store import IncompleteStoreError
    from ..tables.comparisons import UnknownBaselineError
    from .grid import expand_grid
    from .outdir import (
        ReportBusyError,
        ReportIncompleteError,
        UnsafeOutputError,
        check_output_folder,
    )
    from .parameters import report_inputs
    from .runner import (
        RepeatedEpisodesError,
        SkippedRecordsError,
        StoreModesError,
        build_report,
        wanted_notebooks,
    )

    usage_error = None
    try:
        params = _parameters(args)
        # a parameter file or --set may name the inputs instead of the options
        inputs = report_inputs(params, sources=args.source, verdicts=args.verdicts,
                               scores=args.scores)
        args.source, args.verdicts, args.scores = inputs.sources, inputs.verdicts, inputs.scores
        params = inputs.params
    except ValueError as exc:
        usage_error = exc
    if args.scores:     # not a store: said first, whatever else is wrong
        from ..store import read_manifest

        try:
            read_manifest(args.scores)
        except IncompleteStoreError as exc:
            print(f"accordkit report: {exc}", file=sys.stderr)
            return 1
    try:
        if usage_error is not None:
            raise usage_error
        wanted_notebooks(args.notebooks, params)
        expand_grid(params)     # runs that would share a name or folder are refused
        if args.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
        check_output_folder(args.out, inputs=[*(args.source or ()), *(args.verdicts or ()),
                                              *([args.scores] if args.scores else [])])
    except (ValueError, NotADirectoryError) as exc:  # a usage error: one line, nothing run
        print(f"accordkit report: error: {exc}", file=sys.stderr)
        return 64
    from ..ingest.plan import missing_sources

    missing = missing_sources(args.source or ())
    if missing:  # a typo is a usage error, not a bad record of a report that exits 0
        print("accordkit report: no such file or folder, and not a hub id of the form "
              f"'org/name': {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.verdicts:
        from ..judges.verdicts import read_verdicts

        try:   # a bad verdict file is its own error, not a bad record of the episodes
            read_verdicts(args.verdicts)
        except (OSError, ValueError) as exc:
            print(f"accordkit report: --verdicts: {exc}", file=sys.stderr)
            return 2
    try:
        results = build_report(args.source, out=args.out, params=params,
                               verdicts=args.verdicts, notebooks=args.notebooks, jobs=args.jobs,
                               show_code=args.show_code, strict=args.strict,
                               scores=args.scores)
    except SkippedRecordsError as exc:
        print(f"accordkit report: {exc}", file=sys.stderr)
        return 2
    except (StoreModesError, UnknownBaselineError) as exc:  # a usage error: nothing run
        print(f"accordkit report: error: {exc}", file=sys.stderr)
        return 64
    except RepeatedEpisodesError as exc:
        print(f"accordkit report: error: {exc}", file=sys.stderr)
        return 1
    except UnsafeOutputError as exc:   # --out changed between the check and the lock
        print(f"accordkit report: error: {exc}", file=sys.stderr)
        return 64
    except (ReportBusyError, ReportIncompleteError, IncompleteStoreError) as exc:
        print(f"accordkit report: {exc}", file=sys.stderr)
        return 1
    if args.source and results.skipped and results.n_skipped \
            and not sum(entry.get("episodes", 0) for entry in results.skipped):
        for entry in results.skipped:
            if entry["skipped"]:
                print(f"  skipped {entry['skipped']} bad record(s) in {entry['source']}; "
                      f"first: {entry['reasons'][0]}", file=sys.stderr)
        print("accordkit report: error: no episode could be read from the sources; see "
              f"{args.out}/index.html", file=sys.stderr)
        return 1
    width = max(len(r.notebook) for r in results) if results else 0
    for r in results:
        extra = f" ({r.reason})" if r.reason else ""
        print(f"  {r.notebook:<{width}}  {r.run:<8} {r.status}{extra}")
    for entry in results.skipped:
        if entry["skipped"]:
            print(f"  skipped {entry['skipped']} bad record(s) in {entry['source']}; first: "
                  f"{entry['reasons'][0]}", file=sys.stderr)
    for entry in results.left_out:
        if entry["episodes"]:
            print(f"  left out {entry['left_out']} episode(s) of {entry['source']} at scoring "
                  f"(listed in index.html); first: {left_out_line(entry['episodes'][0])}",
                  file=sys.stderr)
    print(f"report: {args.out}/index.html")
    return 0 if all(r.status != "failed" for r in results) else 1


def _parameters(args: argparse.Namespace) -> dict:
    """The run's parameters from ``--params`` and ``--set``, checked (``ValueError``)."""
    from .parameters import MAX_PARAMS_BYTES, check_parameters, load_parameter_text

    params = {}
    if args.params:
        try:
            with open(args.params, "rb") as fh:
                text = fh.read(MAX_PARAMS_BYTES + 1)
        except OSError as exc:
            raise ValueError(f"--params {args.params}: {exc.strerror or exc}") from None
        params = load_parameter_text(text, f"--params {args.params}") or {}
        if not isinstance(params, dict):
            raise ValueError(f"--params {args.params}: expected a mapping of notebook "
                             "parameters")
    for item in args.set or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        params[key] = load_parameter_text(value, f"--set {key}")
    check_parameters(params)
    return params


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` subcommand."""
    import textwrap

    from .parameters import parameters_help

    p = subparsers.add_parser(
        "report", help="run the notebooks in batch and write an HTML report",
        description=textwrap.fill(
        "Run the parameterized notebooks with papermill (in parallel processes), "
        "export them to HTML and write tables (CSV, Markdown, LaTeX), figures (PNG, SVG) and "
        "an index.html. Notebooks whose inputs are absent are skipped with the reason; bad "
        "records are skipped and listed in index.html, results.json and provenance.json, as "
        "are episodes left out of one level at scoring (e.g. the action diff of arguments "
        "nested too deep). "
        "The report is built beside --out and swapped in when complete. Exit code 0 iff "
        "every notebook that was not skipped succeeded; 1 when a notebook failed, another "
        "report is writing --out, the report could not be written (disk full), no episode "
        "could be read from the sources, or a --scores store holds an episode twice; 2 when "
        "a --source does not exist or a --verdicts file cannot be read (nothing is written), "
        "or with --strict when a bad record was skipped or an episode left out at scoring "
        "(nothing is written); 64 on a usage error (an unknown "
        "parameter or notebook, a bad --set).", 79),
        epilog="parameters (--set KEY=VALUE, or a --params file):\n" + parameters_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", nargs="+", action="extend", metavar="PATH_OR_HUB_ID",
                   help="one or more sources loaded as one dataset; repeating --source adds to "
                   "the list (default: the embedded sample in data/sample)")
    p.add_argument("--verdicts", nargs="+", action="extend", metavar="PARQUET",
                   help="stored judge verdicts (default with the sample: its verdicts)")
    p.add_argument("--params", metavar="GRID.yaml",
                   help="notebook parameters; a `grid:` mapping of lists expands into runs")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="set one parameter (YAML value), e.g. --set n_resamples=2000")
    p.add_argument("--notebooks", nargs="+", action="extend",
                   metavar="NAME", help="run only these notebooks")
    p.add_argument("--scores", metavar="DIR",
                   help="build every table from a score store (`accordkit score --out DIR`) "
                   "without loading transcripts; drill-down pages read only the episodes "
                   "they show")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--jobs", type=int, default=2,
                   help="notebooks run in parallel (default 2); each kernel gets its share "
                        "of the cores for BLAS threads")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 2, nothing written) when any input record is bad or an "
                   "episode is left out at scoring")
    p.add_argument("--show-code", action="store_true", help="keep code cells in the HTML")
    p.set_defaults(func=_run)
