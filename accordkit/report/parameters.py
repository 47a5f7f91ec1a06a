"""The report's parameters: what each means, and the check of a parameter file or ``--set``.

One table (:data:`PARAMETERS`) names every parameter a report run takes, whether the
notebooks read it (their ``parameters`` cell) or the runner does (``metadata``, ``grid``,
``notebooks``). ``accordkit report --help`` lists it, and :func:`check_parameters` refuses
a name it does not hold, so a typo is a usage error rather than a setting silently ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

__all__ = ["PARAMETERS", "check_parameters", "parameters_help"]

#: Every report parameter and what it does (defaults: ``DEFAULT_PARAMETERS`` of the runner,
#: or the notebooks' parameters cells).
PARAMETERS: dict[str, str] = {
    "source": "episodes to analyse: paths, folders or hub ids (the report's --source)",
    "verdicts": "stored judge verdict files (the report's --verdicts)",
    "scores_dir": "a score store to read the tables from (the report's --scores)",
    "revision": "hub revision (branch, tag or commit) of hub sources",
    "split": "only this split of dataset folders, hub ids and canonical files",
    "metadata": "fields for runs whose files do not say them, e.g. "
                "{agent_model: gpt-4o, domain: retail} for tau-bench files",
    "models": "only these agent models (a list)",
    "domains": "only these domains (a list)",
    "metrics": "compare_models / reliability: only these metrics (a list of names)",
    "by": "result tables: group by these columns instead of the notebook's default",
    "baseline": "compare_models / reliability: the configuration others are compared with "
                "(default: the one with the most tasks)",
    "cluster": "the column whose values are resampled together (default scenario_id: "
               "rollouts of one scenario are one cluster)",
    "ci_method": "bootstrap interval: bca, percentile, basic or t",
    "confidence": "confidence level of the intervals (default 0.95)",
    "n_resamples": "bootstrap resamples (default 10000)",
    "seed": "seed of the resampling (the same seed gives the same tables, bit for bit)",
    "tcrr_mode": "how redundant tool calls are counted: episode (default) or an upstream mode "
                 "(upstream, upstream_a6a9157, upstream_b2cc83c)",
    "action_mode": "how calls are matched to expected actions in TSR: best_match or upstream",
    "shop_type_gate": "AcCoRD shop: score the outcome 0 when the product type is wrong (spec "
                      "4.2; from a score store: as it was scored)",
    "failure": "error_analysis: the failure type to drill into (see its table)",
    "cell": "error_analysis: column values that pick the cell to list, e.g. {domain: retail}",
    "show": "error_analysis: conversations shown in full (default 2)",
    "out_dir": "where a notebook writes its tables (set by the report)",
    "figures_dir": "where a notebook writes its figures (set by the report)",
    "provenance_path": "where a notebook writes its provenance (set by the report)",
    "grid": "a mapping of lists: each combination is one run of the report (parameter file)",
    "notebooks": "only these notebooks (as --notebooks)",
}


def check_parameters(params: Mapping[str, Any]) -> None:
    """Refuse parameters the report does not take (a typo would be ignored otherwise).

    Raises
    ------
    ValueError
        Naming the first unknown parameter, with the closest known name, or a ``grid``
        that is not a mapping of lists.

    Examples
    --------
    >>> check_parameters({"n_resamples": 2000, "grid": {"seed": [0, 1]}})
    >>> check_parameters({"n_resample": 2000})
    Traceback (most recent call last):
    ...
    ValueError: unknown report parameter 'n_resample' (did you mean 'n_resamples'?); accordkit report --help lists them
    """
    grid = params.get("grid") or {}
    if not isinstance(grid, Mapping):
        raise ValueError("grid must be a mapping of parameter names to lists of values, got "
                         f"{type(grid).__name__}")
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid: {name} must be a non-empty list of values, e.g. "
                             f"{name}: [a, b]")
    for name in [*params, *grid]:
        if name not in PARAMETERS:
            close = difflib.get_close_matches(str(name), list(PARAMETERS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown report parameter {name!r}{hint}; accordkit report "
                             "--help lists them")


def parameters_help() -> str:
    """The parameter list of ``accordkit report --help``: one line per parameter."""
    import textwrap

    width = max(map(len, PARAMETERS))
    return "\n".join(textwrap.fill(text, 79, initial_indent=f"  {name:<{width}}  ",
                                    subsequent_indent=" " * (width + 4))
                      for name, text in PARAMETERS.items())
