"""``pip install`` gives a package that reports (issue 36, item 2).

The wheel is built from the sdist (as ``pip install .`` of a release would), the locked
dependencies go into a fresh venv (uv, offline, from the lock: what ``make setup`` already
fetched), and plain ``pip install --no-index`` installs the wheel there: pip checks every
requirement of the wheel against what is installed and would have to fetch any that is
missing, which ``--no-index`` forbids. Then ``accordkit report`` runs from a folder outside
the clone, on the bundled sample and on a ``--source``.

It takes about a minute, so it is a CI step of its own (``make test-install``); ``make
test`` leaves it out (marker ``install``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.install]


def _uv() -> str:
    found = shutil.which("uv") or str(REPO / ".cache" / "uv-tool" / "bin" / "uv")
    if not Path(found).is_file():
        pytest.skip("uv is not installed (make setup installs it in .cache/uv-tool)")
    return found


def _run(args, *, cwd, env, timeout=600):
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with the locked dependencies and the wheel installed by pip."""
    uv = _uv()
    tmp = tmp_path_factory.mktemp("install")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    dist = tmp / "dist"
    # sdist, then the wheel from the sdist: both must carry the notebooks and the sample
    _run([uv, "build", "--offline", "--quiet", "-o", dist], cwd=REPO, env=env)
    (wheel,) = dist.glob("accordkit-*.whl")
    venv = tmp / "venv"
    _run([uv, "sync", "--frozen", "--offline", "--quiet", "--no-install-project",
          "--compile-bytecode", "--python", sys.executable],
         cwd=REPO, env={**env, "UV_PROJECT_ENVIRONMENT": str(venv)})
    python = venv / "bin" / "python"
    _run([python, "-m", "ensurepip"], cwd=tmp, env=env)
    _run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check",
          "--quiet", wheel], cwd=tmp, env=env)
    _run([python, "-m", "pip", "check", "--disable-pip-version-check"], cwd=tmp, env=env)
    return venv, env, tmp


def test_the_installed_package_is_the_wheel_not_the_clone(installed):
    venv, env, tmp = installed
    where = _run([venv / "bin" / "python", "-c",
                  "import accordkit, accordkit.report.notebooks as n, "
                  "accordkit.report.runner as r; print(accordkit.__file__); "
                  "print(n.NOTEBOOK_DIR); print(r.SAMPLE_SOURCES[0])"],
                 cwd=tmp, env=env).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where), where
    assert Path(where[1], "tau2_results.ipynb").is_file()


def _results(out: Path) -> dict[str, tuple[str, str]]:
    data = json.loads((out / "results.json").read_text())
    return {r["notebook"]: (r["status"], r["reason"]) for r in data["notebooks"]}


def test_report_alone_reports_the_bundled_sample(installed):
    venv, env, tmp = installed
    work = tmp / "elsewhere"
    work.mkdir(exist_ok=True)
    _run([venv / "bin" / "accordkit", "report", "--out", "rep", "--notebooks",
          "accord_results", "usersim_unit_tests", "--set", "n_resamples=200"],
         cwd=work, env={**env, "HF_HUB_OFFLINE": "1"})
    assert _results(work / "rep") == {"accord_results": ("ok", ""),
                                      "usersim_unit_tests": ("ok", "")}
    headline = json.loads((work / "rep" / "results.json").read_text())["headline"]
    assert {row["benchmark"] for row in headline} == {"AcCoRD"}
    assert (work / "rep" / "tables" / "accord_results__table3.csv").is_file()


def test_report_of_a_source_runs_the_bundled_notebooks(installed):
    venv, env, tmp = installed
    work = tmp / "elsewhere2"
    work.mkdir()
    shutil.copytree(REPO / "data" / "sample" / "goalshift", work / "runs")
    _run([venv / "bin" / "accordkit", "report", "--source", "runs", "--out", "rep",
          "--notebooks", "tau2_results", "accord_results", "--set", "n_resamples=200"],
         cwd=work, env={**env, "HF_HUB_OFFLINE": "1"})
    assert _results(work / "rep") == {
        "accord_results": ("skipped", "no AcCoRD episodes in the sources"),
        "tau2_results": ("ok", "")}
