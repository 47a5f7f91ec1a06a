"""docs/make_screenshots.py takes a relative --report (issue 36, item 6: it raised
``ValueError: relative path can't be expressed as a file URI``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ..conftest import REPO
from .conftest import chromium_path

pytestmark = [pytest.mark.browser]


def test_a_relative_report_folder_is_photographed(tmp_path):
    if chromium_path() is None:
        pytest.skip("no Chromium on this machine: install it (Debian: `apt-get install -y "
                    "chromium`) or set ACCORDKIT_CHROMIUM to its path")
    report = tmp_path / "reports" / "mine"
    report.mkdir(parents=True)
    for name in ("index", "tau2_results"):
        (report / f"{name}.html").write_text(
            f"<!doctype html><html><body><h1>{name}</h1></body></html>", encoding="utf-8")
    done = subprocess.run([sys.executable, str(REPO / "docs" / "make_screenshots.py"),
                           "--report", "reports/mine", "--out", "shots"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    shots = sorted(p.name for p in (tmp_path / "shots").glob("*.png"))
    assert shots == ["report_index.png", "report_tau2_results.png"]
    # a folder that is not a report is a usage error, not a traceback
    bad = subprocess.run([sys.executable, str(REPO / "docs" / "make_screenshots.py"),
                          "--report", "shots", "--out", "shots"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no index.html" in bad.stderr
    assert "Traceback" not in bad.stderr
