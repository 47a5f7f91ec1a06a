"""environment.yml and environment-dev.yml (conda users) must list what pyproject.toml lists,
with the same bounds: the first its dependencies, the second its dev extra (issue 36)."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement

from .conftest import REPO


def _requirements(extra: str | None = None) -> dict[str, str]:
    """Package -> version bounds of pyproject's dependencies, or of one of its extras."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    reqs = (data["project"]["dependencies"] if extra is None
            else data["project"]["optional-dependencies"][extra])
    return {Requirement(r).name.lower(): str(Requirement(r).specifier) for r in reqs}


def _pyproject() -> dict[str, str]:
    return {**_requirements(), **_requirements("dev")}


#: conda-forge names of packages whose pip name (with extras) differs
CONDA_TO_PIP = {"ray-data": "ray"}


def _conda(name: str = "environment.yml") -> dict[str, str]:
    env = yaml.safe_load((REPO / name).read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # the pip: section
            continue
        name, spec = re.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", dep).groups()
        if name in ("python", "pip"):
            continue
        out[CONDA_TO_PIP.get(name.lower(), name.lower())] = \
            str(Requirement(f"{name}{spec}").specifier)
    return out


def test_same_packages():
    # the base environment is what the report needs; the dev file adds the test tools and
    # Ray (issue 36, item 7), and together they are pyproject's dependencies and dev extra
    assert sorted(_conda()) == sorted(_requirements())
    assert sorted(_conda("environment-dev.yml")) == sorted(_requirements("dev"))
    assert not {"pytest", "ruff", "hypothesis", "playwright", "ray"} & set(_conda())


def test_same_version_bounds():
    conda = {**_conda(), **_conda("environment-dev.yml")}
    pip = _pyproject()
    differ = {k: (pip[k], conda[k]) for k in pip if k in conda and pip[k] != conda[k]}
    assert not differ, f"pyproject vs environment files bounds differ: {differ}"


def test_python_floor_matches():
    # conda gets the Python the lock is made for: pyproject's and uv.lock's floor, pinned
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    floor = data["project"]["requires-python"]
    assert floor == lock["requires-python"] == ">=3.11"
    assert "python=3.11" in env["dependencies"]


def test_pip_section_installs_the_project():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_parts = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_parts == [["-e ."]]


def test_litellm_excludes_compromised_releases():
    spec = Requirement(f"litellm{_pyproject()['litellm']}").specifier
    for bad in ("1.82.7", "1.82.8", "1.107.0", "1.107.5"):
        assert bad not in spec
    assert "1.110.2" in spec


def test_lock_file_is_hashed_and_pins_litellm_in_range():
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    (litellm,) = [p for p in lock["package"] if p["name"] == "litellm"]
    assert litellm["version"] in Requirement(f"litellm{_pyproject()['litellm']}").specifier
    registry = [p for p in lock["package"] if "registry" in p.get("source", {})]
    unhashed = [p["name"] for p in registry
                if not all(w.get("hash", "").startswith("sha256:") for w in p.get("wheels", []))
                or not p.get("wheels") and not p.get("sdist", {}).get("hash")]
    assert registry and not unhashed


def test_make_runs_in_an_existing_environment_without_a_second_install():
    """Conda users run `make report VENV=$CONDA_PREFIX` (README): the targets use that
    environment and never create .venv with uv."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        import pytest

        pytest.skip("make is not installed")
    env = REPO / ".venv"   # stands for a conda environment: any folder with bin/accordkit
    plan = subprocess.run(["make", "-n", "report", "test", f"VENV={env.resolve()}"],
                          cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert f"{env.resolve()}/bin/accordkit report" in plan
    assert f"{env.resolve()}/bin/python -m pytest" in plan
    assert "uv sync" not in plan and "sync --frozen" not in plan
