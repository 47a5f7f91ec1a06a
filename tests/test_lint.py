"""ruff (configured in pyproject.toml) is part of the test suite."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO


def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed in this environment (pip install -e .[dev])")
    result = subprocess.run([ruff, "check", "accordkit", "tests", "benchmarks"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
