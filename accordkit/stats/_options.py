"""One name per option: deprecated aliases of the statistics options.

Every function that resamples takes the same option names: ``by``, ``cluster``,
``method``, ``confidence``, ``n_resamples`` and ``seed``. Earlier names are accepted for one
release with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["OPTION_ALIASES", "resolve_aliases"]

#: deprecated option name -> its one name
OPTION_ALIASES = {"pair_on": "cluster", "task": "cluster", "ci_method": "method"}


def resolve_aliases(function: str, deprecated: Mapping[str, Any], current: dict[str, Any],
                    defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``current`` options with the deprecated ones of ``deprecated`` moved to their names.

    Raises ``TypeError`` for an unknown keyword (as Python would) and when an option is
    given under both names.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     resolve_aliases("compare", {"pair_on": "task_id"}, {"cluster": "scenario_id"},
    ...                     {"cluster": "scenario_id"})
    {'cluster': 'task_id'}
    """
    out = dict(current)
    for old, value in deprecated.items():
        new = OPTION_ALIASES.get(old)
        if new is None or new not in current:
            raise TypeError(f"{function}() got an unexpected keyword argument {old!r}")
        if current[new] != defaults[new]:
            raise TypeError(f"{function}() got both {new!r} and its deprecated name {old!r}")
        warnings.warn(f"{function}({old}=...) is deprecated and will be removed in the next "
                      f"release; use {new}=...", DeprecationWarning, stacklevel=3)
        out[new] = value
    return out
