"""Deprecated location of the figures: they live in :mod:`accordkit.tables.plots`.

Kept as a re-export for one release so existing notebooks keep working.
"""

from .tables.plots import *  # noqa: F403
from .tables.plots import __all__  # noqa: F401
