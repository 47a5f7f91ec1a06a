"""Where the report's notebooks and the embedded sample data are.

An installed wheel carries them inside the package, as ``accordkit/_bundled/notebooks`` and
``accordkit/_bundled/sample`` (pyproject.toml maps the clone's ``notebooks/`` and
``data/sample/`` there); a clone (or an editable install of one) has them in the project's
own folders. Both are found here, with :mod:`importlib.resources` for the installed case,
so that ``pip install`` gives a package that reports.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .env import PROJECT_ROOT

__all__ = ["bundled_folder", "notebook_folder", "sample_folder"]

#: Folder name inside an installed package -> the same folder in a clone.
_IN_CLONE = {"notebooks": PROJECT_ROOT / "notebooks",
             "sample": PROJECT_ROOT / "data" / "sample"}


def bundled_folder(name: str) -> Path:
    """The folder ``name`` (``"notebooks"`` or ``"sample"``) of this installation.

    Raises
    ------
    FileNotFoundError
        When neither the installed package nor a clone holds it (a broken install).

    Examples
    --------
    >>> bundled_folder("notebooks").joinpath("tau2_results.ipynb").is_file()
    True
    """
    if name not in _IN_CLONE:
        raise ValueError(f"unknown bundled folder {name!r}; known: {sorted(_IN_CLONE)}")
    packaged = resources.files("accordkit").joinpath("_bundled", name)
    # a wheel is installed unpacked, so the folder is a real one on disk
    if packaged.is_dir():
        return Path(str(packaged))
    if _IN_CLONE[name].is_dir():
        return _IN_CLONE[name]
    raise FileNotFoundError(
        f"accordkit's {name} folder is missing: neither accordkit/_bundled/{name} in the "
        f"installed package nor {_IN_CLONE[name]} in a clone (reinstall accordkit)")


def notebook_folder() -> Path:
    """The report's notebooks (``*.ipynb``)."""
    return bundled_folder("notebooks")


def sample_folder() -> Path:
    """The embedded sample data (``accord/``, ``goalshift/``, ``verdicts/``)."""
    return bundled_folder("sample")
