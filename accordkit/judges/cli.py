"""``accordkit judge``: run an LLM judge over episodes and write the verdict table."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from typing import Any

from .options import Flag, JudgeOptions

__all__ = ["register", "run", "add_option_flags", "options_from_args"]

DESCRIPTION = """\
Judge episodes with an LLM through litellm and write one verdict row per judged item.

Replies are cached on disk as they arrive (--cache, default $ACCORDKIT_JUDGE_CACHE or
./.cache/judges): an interrupted run loses nothing, and running the same command again
requests only what is missing. API keys are read from the environment only
(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).

exit status: 0 every item has a verdict (including "invalid"); 2 some items still have
transport errors (run again to retry them); 1 bad input or option values, or a cache
folder that cannot be written (checked before anything is sent); 64 usage error (unknown
option, missing argument: nothing was run, and option values are never printed).
"""

EPILOG = """\
examples:
  accordkit judge data/sample/accord --judge usersim_tests --model gpt-4o-mini \\
      -o verdicts/usersim_gpt4omini.parquet
  accordkit judge run.json --judge gsrt --model anthropic/claude-sonnet-4-5 --max-cost 5
  accordkit judge run.json --task review --model gpt-4o-mini -o reviews.parquet
  accordkit judge run.json --judge nl_assertions --model openai/Qwen2.5-7B-Instruct \\
      --api-base http://127.0.0.1:8000/v1 --price-in 0 --price-out 0 -o nl.parquet
  # one job on two machines (or processes), then combined:
  accordkit judge run.json --judge gsrt --model gpt-4o-mini --shard 1/2 -o part1.parquet
  accordkit judge run.json --judge gsrt --model gpt-4o-mini --shard 2/2 -o part2.parquet
  accordkit judge merge part1.parquet part2.parquet -o gsrt.parquet
  # the same split done by Ray on the cluster at RAY_ADDRESS, one shard per CPU:
  accordkit judge run.json --judge gsrt --model gpt-4o-mini --engine ray -o gsrt.parquet
"""


def run(args: argparse.Namespace) -> int:
    """Execute the ``judge`` subcommand; returns the exit code."""
    from .._internal.ray_cluster import RayUnreachableError
    from ..load import load
    from .cache import CacheNotWritableError
    from .runner import run_judge
    from .verdicts import write_verdicts

    runner, on_ray = run_judge, {}
    if args.shards is not None and args.engine != "ray":
        print("accordkit judge: error: --shards goes with --engine ray", file=sys.stderr)
        return 1
    if args.engine == "ray":
        from .ray_judge import run_judge_on_ray as runner
        on_ray = {"shards": args.shards}
    try:
        options = options_from_args(args)       # checked before anything is loaded
        ds = load(args.sources, errors=args.errors)
        result = runner(ds, options=options, **on_ray)
    except (ValueError, CacheNotWritableError, RayUnreachableError) as exc:
        print(f"accordkit judge: error: {exc}", file=sys.stderr)
        return 1
    write_verdicts(result.verdicts, args.output)
    s = result.summary()
    cost = "unknown (no price)" if math.isnan(result.cost_usd) else f"${result.cost_usd:.4f}"
    if s["n_uncounted"]:     # billed by the provider, though no cost could be recorded
        guess = s["uncounted_cost_usd"]
        about = "an unknown amount" if math.isnan(guess) else f"about ${guess:.4f}"
        cost += (f" recorded, plus {about} estimated for {s['n_uncounted']} answer(s) whose "
                 "token usage the server reported as invalid (charged to --max-cost)")
    skipped = ", ".join(f"{n} {why}" for why, n in s["n_skipped"].items() if n) or "none"
    print(f"{s['judge']} · {s['model']}: {s['n_items']} items from {s['n_episodes']} episodes "
          f"(skipped: {skipped})\n"
          f"  requests {s['n_requests']}: {s['n_cached']} from cache, {s['n_calls']} called "
          f"({s['n_attempts']} attempts); cost of this run {cost}\n"
          f"  invalid {s['n_invalid']}, errors {s['n_errors']}"
          + (f", {s['n_estimated']} with locally counted tokens" if s["n_estimated"] else "")
          + "\n"
          f"wrote {args.output}", file=sys.stderr)
    if s["n_unstored"]:
        print(f"warning: {s['n_unstored']} answer(s) could not be stored in the judge cache; "
              f"they are in {args.output} only and will be requested again by a later run",
              file=sys.stderr)
    if result.exit_code:
        print(f"{s['n_errors']} item(s) have no verdict yet: run the same command again to "
              "retry them", file=sys.stderr)
    return result.exit_code


def add_option_flags(parser: argparse.ArgumentParser) -> None:
    """Add a flag for every field of :class:`JudgeOptions` that has one (its :class:`Flag`),
    with the field's name as ``dest`` and its default."""
    for f in dataclasses.fields(JudgeOptions):
        flag: Flag | None = f.metadata["flag"]
        if flag is None:                # an option of Python only
            continue
        kwargs: dict[str, Any] = {"dest": f.name, "help": flag.help}
        if f.default is dataclasses.MISSING:
            kwargs["required"] = True
        else:
            kwargs["default"] = f.default
        if flag.action is not None:
            kwargs["action"] = flag.action
        for name in ("type", "metavar"):
            if getattr(flag, name) is not None:
                kwargs[name] = getattr(flag, name)
        if flag.choices is not None:
            kwargs["choices"] = flag.choices()
        parser.add_argument(*flag.names, **kwargs)


def options_from_args(args: argparse.Namespace) -> JudgeOptions:
    """The :class:`JudgeOptions` of parsed ``accordkit judge`` arguments (checked)."""
    return JudgeOptions(**{f.name: getattr(args, f.name) for f in dataclasses.fields(JudgeOptions)
                           if f.metadata["flag"] is not None})


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``judge`` subcommand to ``accordkit``'s parser."""
    p = subparsers.add_parser(
        "judge", help="LLM-judge episodes (cached, resumable) -> verdict table",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="episodes (any loadable source)")
    add_option_flags(p)
    p.add_argument("--errors", choices=("raise", "skip"), default="raise",
                   help="stop at the first bad record, or skip bad records")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="ray: the requests in shards, each a Ray task on the cluster at "
                   "RAY_ADDRESS (else a local Ray), one cache and one --max-cost for all")
    p.add_argument("--shards", type=int, metavar="N",
                   help="with --engine ray: Ray tasks (default: the cluster's CPUs)")
    p.add_argument("-o", "--output", required=True, metavar="VERDICTS.parquet",
                   help="the verdict table to write (parquet; what --verdicts of score and "
                   "report read)")
    p.set_defaults(func=run)


def register_merge(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``judge-merge`` subcommand (``accordkit judge merge``)."""
    m = subparsers.add_parser(
        "judge-merge", prog="accordkit judge merge",
        help="combine the verdict files (and caches) of sharded judge runs",
        description="Combine verdict files of `accordkit judge --shard I/N` runs (or of "
        "re-runs) into one, and optionally their caches into one folder. Refuses, and "
        "writes nothing, when two runs answered the same request differently, or when the "
        "files are not the whole of one job (a shard missing, shards of different splits, "
        "files of another judge, model or set of episodes) unless --allow-partial.")
    m.add_argument("verdicts", nargs="+", metavar="VERDICTS.parquet")
    m.add_argument("-o", "--output", required=True, metavar="MERGED.parquet",
                   help="the merged verdict table to write (parquet)")
    m.add_argument("--caches", nargs="+", action="extend",
                   metavar="DIR", help="cache folders to combine")
    m.add_argument("--into", metavar="DIR", help="cache folder receiving --caches")
    m.add_argument("--allow-partial", action="store_true",
                   help="merge files that are not the whole of one judge job (the merged "
                   "table then lacks the items of the missing shards)")
    m.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    """Execute ``accordkit judge merge``; 0 on success, 1 on a conflict or bad input."""
    from .merge import MergeConflictError, merge_caches, merge_verdicts
    from .verdicts import write_verdicts

    if bool(args.caches) != bool(args.into):
        print("accordkit judge merge: error: --caches and --into go together", file=sys.stderr)
        return 1
    try:
        merged = merge_verdicts(args.verdicts, allow_partial=args.allow_partial)
        counts = merge_caches(args.caches, args.into) if args.caches else None
    except (MergeConflictError, ValueError, FileNotFoundError) as exc:
        print(f"accordkit judge merge: error: {exc}", file=sys.stderr)
        return 1
    write_verdicts(merged, args.output)
    print(f"merged {len(args.verdicts)} file(s): {len(merged)} items -> {args.output}",
          file=sys.stderr)
    if counts is not None:
        print(f"cache: {counts['copied']} entries copied, {counts['present']} already there "
              f"-> {args.into}", file=sys.stderr)
    return 0
