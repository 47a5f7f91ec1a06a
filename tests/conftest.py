"""Shared test fixtures: paths to the sample data and to the released fixture files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_folder() -> Path:
    """The folder holding fixtures/: $ACCORDKIT_SHARED when set, else ../shared beside the
    clone. Nothing else: a test run never depends on a path of one machine."""
    if os.environ.get("ACCORDKIT_SHARED"):
        return Path(os.environ["ACCORDKIT_SHARED"])
    return REPO.parent / "shared"


SHARED = _shared_folder()
FIXTURES = SHARED / "fixtures"
ACB = FIXTURES / "agentchangebench"
TAU2 = FIXTURES / "tau2"
SAMPLE = REPO / "data" / "sample"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"released fixture files not found at {path} "
                    "(set ACCORDKIT_SHARED to the folder holding fixtures/)")
    return path


@pytest.fixture(scope="session")
def acb_dir() -> Path:
    """Folder of real AgentChangeBench result files (skips when absent)."""
    return _need(ACB)


@pytest.fixture(scope="session")
def tau2_dir() -> Path:
    """Folder of real tau2-bench result files (skips when absent)."""
    return _need(TAU2)


@pytest.fixture(scope="session")
def expected_upstream(acb_dir: Path) -> dict:
    """Values the upstream AgentChangeBench code computes on each fixture file."""
    import json

    return json.loads((acb_dir / "expected_upstream.json").read_text())["files"]


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    if not SAMPLE.exists():
        pytest.skip("data/sample has not been generated (run `make sample`)")
    return SAMPLE


@pytest.fixture
def read_ahead_done(monkeypatch: pytest.MonkeyPatch):
    """An event set each time the loader has read a file ahead (on its other thread): a
    test that stands for another process changing a file waits for it first."""
    import importlib
    import threading

    load_mod = importlib.import_module("accordkit.ingest.read")
    real = load_mod._read_and_hash
    done = threading.Event()

    def read_and_hash(path, cache):
        try:
            return real(path, cache)
        finally:
            done.set()

    monkeypatch.setattr(load_mod, "_read_and_hash", read_and_hash)
    return done


@pytest.fixture(scope="session")
def hostile_report(tmp_path_factory, tau2_dir, sample_dir) -> Path:
    """A report built from result files whose every name is a script and whose domain is a
    path out of the report (tests/payloads.py); shared by the report and browser tests."""
    from tests.payloads import hostile_report as build

    return build(tmp_path_factory.mktemp("hostile"),
                 template=tau2_dir / "airline_grok-3_4tasks_4trials.json", sample=sample_dir)


#: Released AgentChangeBench files that define a task twice with different content (so upstream
#: released them): reading one warns so, and a test that reads it asserts the warning.
TWICE_DEFINED = frozenset({"banking_gpt-4.1_legacy-reward_meta-tags_7sims.json"})


def warns_of_twice_defined_tasks(paths):
    """``pytest.warns`` for the warning that reading these files gives when one of them is in
    :data:`TWICE_DEFINED`, else a context that expects nothing."""
    import contextlib

    paths = [paths] if isinstance(paths, (str, Path)) else paths
    if any(Path(p).name in TWICE_DEFINED for p in paths):
        return pytest.warns(UserWarning, match="is defined 2 times with different content")
    return contextlib.nullcontext()
