"""A long run of the loader fuzz tests (issue 11): mutated fixtures, nothing crashes or is lost.

``tests/ingest/test_load_fuzz.py`` mutates real result files (dropped keys, junk values, truncation,
shuffles, deep nesting, nested multi-tool messages, JSON text that is not an object, stray
bytes that are not UTF-8) and canonical JSONL made from them, and checks that ``ak.load``
raises only ``EpisodeValidationError`` naming file, record and field, and that with
``errors="skip"`` every simulation / line is loaded, listed as skipped or kept once as a
duplicate. The suite runs it with 60 examples per test; this script runs it with many more.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/load_fuzz.py [--examples 1000] \
        [--out benchmarks/results/load_fuzz.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(examples: int) -> tuple[int, str, float]:
    """Run the fuzz tests with ``examples`` per test; (exit code, output, seconds)."""
    env = dict(os.environ, ACCORDKIT_FUZZ_EXAMPLES=str(examples), HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/ingest/test_load_fuzz.py", "--hypothesis-show-statistics"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def _passing_examples(stdout: str) -> dict[str, int]:
    """Examples hypothesis ran per test, from ``--hypothesis-show-statistics``."""
    out: dict[str, int] = {}
    test = None
    for line in stdout.splitlines():
        m = re.match(r"tests/ingest/test_load_fuzz.py::(\w+):", line.strip())
        if m:
            test = m.group(1)
        m = re.search(r"- (\d+) passing, (\d+) failing", line)
        if m and test:
            out[test] = out.get(test, 0) + int(m.group(1)) + int(m.group(2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/load_fuzz.md")
    args = parser.parse_args()
    code, stdout, seconds = run(args.examples)
    passed = [ln for ln in stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    summary = passed[-1].strip("= ") if passed else "(no pytest summary)"
    per_test = _passing_examples(stdout)
    lines = [
        "# Loader fuzzing (long run)",
        "",
        f"Date: {dt.date.today().isoformat()}. Machine: {os.cpu_count()} cores, "
        f"{platform.machine()}, Python {platform.python_version()}. Command: "
        f"`HF_HUB_OFFLINE=1 python benchmarks/load_fuzz.py --examples {args.examples}`.",
        "",
        "The suite runs the same tests with 60 examples each (a few seconds); here each test "
        f"gets up to {args.examples}. Every example checks: no exception other than "
        "`EpisodeValidationError` (which names file, record and field), and with "
        '`errors="skip"` no simulation or line unaccounted for.',
        "",
        "| test | generated examples |",
        "|---|---:|",
        *[f"| `{name}` | {n} |" for name, n in sorted(per_test.items())],
        "",
        f"Result: `{summary}` (exit code {code}), {seconds:.0f} s wall.",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(code)


if __name__ == "__main__":
    main()
