"""Import litellm lazily (it takes seconds), quietly and offline."""

from __future__ import annotations

import os
import warnings
from functools import cache
from types import ModuleType

__all__ = ["get_litellm"]


@cache
def get_litellm() -> ModuleType:
    """The litellm module, imported once with its local price list and no banners.

    ``LITELLM_LOCAL_MODEL_COST_MAP=True`` keeps the import from fetching a price list (set
    here as well as by ``import accordkit``, for code that imports this module alone).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with warnings.catch_warnings():
        # pydantic complains about litellm's own type definitions at import time
        warnings.filterwarnings("ignore", category=UserWarning, module=r"pydantic\..*")
        import litellm
    litellm.suppress_debug_info = True
    return litellm
