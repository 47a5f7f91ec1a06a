"""environment.yml (conda users) must list what pyproject.toml lists, with the same bounds."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement

from .conftest import REPO


def _pyproject() -> dict[str, str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    reqs = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["dev"]
    return {Requirement(r).name.lower(): str(Requirement(r).specifier) for r in reqs}


#: conda-forge names of packages whose pip name (with extras) differs
CONDA_TO_PIP = {"ray-data": "ray"}


def _conda() -> dict[str, str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
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
    assert sorted(_conda()) == sorted(_pyproject())


def test_same_version_bounds():
    conda, pip = _conda(), _pyproject()
    differ = {k: (pip[k], conda[k]) for k in pip if k in conda and pip[k] != conda[k]}
    assert not differ, f"pyproject vs environment.yml bounds differ: {differ}"


def test_python_floor_matches():
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    assert f"python{data['project']['requires-python']}" in env["dependencies"]


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
