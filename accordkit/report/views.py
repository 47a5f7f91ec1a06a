"""Deprecated location of the report tables: they live in :mod:`accordkit.tables`.

Kept as thin re-exports for one release so notebooks and report code keep working.
"""

from ..tables.builders import *  # noqa: F403
from ..tables.builders import __all__ as _builders
from ..tables.catalogue import ACCORD_DYNAMICS, ACCORD_MAIN, GOALSHIFT_GSRT, GOALSHIFT_MAIN

__all__ = ["ACCORD_MAIN", "ACCORD_DYNAMICS", "GOALSHIFT_MAIN", "GOALSHIFT_GSRT", *_builders]
