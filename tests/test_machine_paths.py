"""No path of a development machine in a committed file (issue 42, part 1).

Every text file git tracks is read for a path that only means something on one machine: a
folder under ``/work/``, ``/root/`` or ``/home/<user>/``, or a named place in ``/tmp``. A
benchmark result says which commit it measured, not which folder it ran in. What must stay is
listed below with its reason; a doctest line (``>>>``) shows a call, it reads no file here.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import REPO

#: Paths of one machine: its work and home folders, and a named place in /tmp.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root)/[\w.-]*|(?<![\w.])/home/[\w.-]+"
                          r"|(?<![\w.])/tmp/[\w.-]+")

#: This file names the paths it looks for (and the allowed ones): it is not read.
THIS = "tests/test_machine_paths.py"
#: (file, path found) -> why it stays.
ALLOWED = {
    ("benchmarks/report_scale.py", "/tmp/accordkit-report-scale"):
        "the default scratch folder the benchmark makes for its data (any machine has /tmp)",
    ("benchmarks/report_scale.py", "/tmp/acc1m-scores"):
        "the usage line's example of a score store folder the user names",
    ("benchmarks/scale.py", "/tmp/accordkit-1m"):
        "the usage line's example of a data folder the user names",
    ("benchmarks/scale.py", "/tmp/accordkit-scale"):
        "the default scratch folder the benchmark makes for its data",
    ("tests/report/test_outputs.py", "/tmp/x"):
        "a name climbing out of the report folder, which the test proves is refused",
    ("tests/report/test_parameters.py", "/tmp/elsewhere"):
        "an out_dir parameter the test proves the report refuses",
}


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git clone: the committed files are not known here")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                         check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def machine_paths(text: str) -> list[tuple[int, str]]:
    """``(line number, path)`` of each machine path in ``text``, doctest lines left out.

    >>> machine_paths("a = '/tmp/run.json'\\n>>> load('/tmp/run.json')\\n/tmp is fine")
    [(1, '/tmp/run.json')]
    """
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(">>>"):
            continue
        found += [(number, m.group(0).rstrip(".")) for m in MACHINE_PATH.finditer(line)]
    return found


def test_no_committed_text_file_names_a_path_of_this_machine():
    found = []
    for name in _tracked():
        path = REPO / name
        if not path.is_file() or path.is_symlink() or name == THIS:
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:                   # binary: parquet, images
            continue
        for number, hit in machine_paths(data.decode("utf-8", "replace")):
            if (name, hit) not in ALLOWED:
                found.append(f"{name}:{number}: {hit}")
    assert found == []


def test_every_allowed_path_is_still_there_and_says_why():
    tracked = set(_tracked())
    for (name, hit), reason in ALLOWED.items():
        assert name in tracked, name
        assert hit in (REPO / name).read_text(encoding="utf-8"), (name, hit)
        assert len(reason.split()) >= 5, (name, hit)
