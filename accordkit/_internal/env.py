"""Process-wide defaults that must be set before datasets or litellm are imported.

* ``LITELLM_LOCAL_MODEL_COST_MAP=True``: otherwise ``import litellm`` fetches a price list
  from the internet (the value must be the word ``True``; ``1`` is ignored by litellm).
* ``HF_HOME``: inside a source checkout, the project's own ``.cache/huggingface`` folder, so
  downloads and the datasets cache stay with the project. An explicit setting wins.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def in_source_checkout() -> bool:
    """True when accordkit runs from a clone (pyproject.toml beside the package)."""
    return (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "accordkit").is_dir()


def apply_defaults() -> None:
    """Set the environment defaults described in the module docstring (idempotent)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if in_source_checkout():
        os.environ.setdefault("HF_HOME", str(PROJECT_ROOT / ".cache" / "huggingface"))
