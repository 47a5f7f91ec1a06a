"""Fast CLI start (issue 13): ``--help``, ``validate``, ``synth`` and ``cache`` import only what
they use; the commands registered lazily show the same help line as their modules."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from accordkit.cli import LAZY_COMMANDS, build_parser

HEAVY = ("pandas", "scipy", "litellm", "datasets", "papermill", "seaborn", "matplotlib",
         "accordkit.stats", "accordkit.report", "accordkit.judges")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_help_imports_no_heavy_stack():
    code = ("import contextlib, io\nfrom accordkit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    loaded = _modules_after(code)
    assert not [m for m in HEAVY if m in loaded]


def test_cache_info_imports_no_heavy_stack(tmp_path):
    code = ("import contextlib, io, os\n"
            f"os.environ['ACCORDKIT_CACHE_DIR'] = {str(tmp_path)!r}\n"
            "from accordkit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['cache', 'info'])")
    loaded = _modules_after(code)
    assert not [m for m in HEAVY if m in loaded]


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_lazy_help_line_matches_the_module(name):
    def help_line(parser: argparse.ArgumentParser) -> str:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return next(c.help for c in sub._choices_actions if c.dest == name)

    assert help_line(build_parser(commands=set())) == help_line(build_parser()) \
        == LAZY_COMMANDS[name][1]
