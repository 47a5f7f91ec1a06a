"""The runs of a report: its parameters, their grid, the notebooks asked for and the scoring
modes each run needs."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..names import SCORE_OPTIONS
from .notebooks import NOTEBOOKS, NotebookSpec

__all__ = ["DEFAULT_PARAMETERS", "expand_grid", "wanted_notebooks", "StoreModesError",
           "store_modes_conflict", "run_modes", "run_key", "SCORING_PARAMETERS"]

#: Parameters every notebook accepts, with their defaults.
DEFAULT_PARAMETERS: dict[str, Any] = {
    "revision": None,
    "split": None,
    "models": None,
    "domains": None,
    "metrics": None,
    "by": None,
    "cluster": "scenario_id",
    "ci_method": "bca",
    "confidence": 0.95,
    "n_resamples": 10_000,
    "seed": 0,
    "tcrr_mode": "episode",
    "action_mode": "best_match",
    "baseline": None,
}

#: Run parameters that change what is read (``revision``, ``split``, ``metadata``) or how it
#: is scored (the modes): runs that share them share one score store.
SCORING_PARAMETERS = ("tcrr_mode", "action_mode", "revision", "split", "metadata")


def expand_grid(params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Expand a parameter file into runs.

    Keys are notebook parameters; the optional ``grid`` mapping holds lists of values whose
    combinations each give one run, named after the values (``domains=shop``).

    Examples
    --------
    >>> expand_grid({"n_resamples": 500, "grid": {"domains": [["shop"], ["travel"]]}})
    [('domains=shop', {'n_resamples': 500, 'domains': ['shop']}), ('domains=travel', {'n_resamples': 500, 'domains': ['travel']})]
    """
    base = {k: v for k, v in params.items() if k not in ("grid", "notebooks")}
    grid = params.get("grid") or {}
    if not grid:
        return [("main", base)]
    keys = list(grid)
    runs = []
    for values in itertools.product(*(grid[k] for k in keys)):
        name = ",".join(f"{k}={'+'.join(map(str, v)) if isinstance(v, list) else v}"
                        for k, v in zip(keys, values, strict=True))
        runs.append((name, {**base, **dict(zip(keys, values, strict=True))}))
    _refuse_shared_names(runs, keys)
    return runs


def _refuse_shared_names(runs: Sequence[tuple[str, dict[str, Any]]],
                         keys: Sequence[str]) -> None:
    """``ValueError`` naming two runs of a grid that would share a name or a folder (list
    values are joined with ``+``; folders are compared as a case-blind file system would).

    Examples
    --------
    >>> expand_grid({"grid": {"models": [["a", "b"], ["a+b"]]}})
    Traceback (most recent call last):
    ...
    ValueError: grid: two runs would both be named 'models=a+b' and write one folder: models=['a', 'b'] and models=['a+b']; give values that differ once list items are joined with '+'
    """
    from .filenames import run_folder

    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, params in runs:
        folder = run_folder(name).casefold()
        if folder in seen:
            other_name, other = seen[folder]
            shown = [", ".join(f"{k}={p[k]!r}" for k in keys) for p in (other, params)]
            what = f"be named {name!r}" if name == other_name else \
                f"write one folder ({other_name!r} and {name!r})"
            raise ValueError(f"grid: two runs would both {what}"
                             f"{' and write one folder' if name == other_name else ''}: "
                             f"{shown[0]} and {shown[1]}; give values that differ once list "
                             "items are joined with '+'")
        seen[folder] = (name, params)


def wanted_notebooks(notebooks: Sequence[str] | None,
                     params: Mapping[str, Any]) -> list[NotebookSpec]:
    """The notebooks a run asks for (``--notebooks``, else a parameter file's ``notebooks``,
    else all); ``ValueError`` naming any the report does not have.

    Examples
    --------
    >>> [n.name for n in wanted_notebooks(["reliability"], {})]
    ['reliability']
    """
    wanted = list(notebooks or params.get("notebooks") or [n.name for n in NOTEBOOKS])
    unknown = set(wanted) - {n.name for n in NOTEBOOKS}
    if unknown:
        raise ValueError(f"unknown notebook(s) {sorted(unknown)}; "
                         f"known: {[n.name for n in NOTEBOOKS]}")
    return [n for n in NOTEBOOKS if n.name in wanted]


class StoreModesError(ValueError):
    """A report from a score store asks for scoring modes other than the store's."""


def store_modes_conflict(store_modes: Mapping[str, Any], params: Mapping[str, Any],
                         ) -> list[tuple[str, str, Any, Any]]:
    """``(run, mode, asked, stored)`` for each run of ``params`` (see :func:`expand_grid`)
    that sets a scoring mode other than the one the store was scored with.

    A mode the store does not name was :func:`accordkit.score`'s default.

    Examples
    --------
    >>> grid = {"grid": {"tcrr_mode": ["episode", "upstream"]}}
    >>> store_modes_conflict({"tcrr_mode": "episode"}, grid)
    [('tcrr_mode=upstream', 'tcrr_mode', 'upstream', 'episode')]
    >>> store_modes_conflict({"tcrr_mode": "episode"}, {"n_resamples": 500})
    []
    """
    import inspect

    from ..score import score

    defaults = {k: inspect.signature(score).parameters[k].default for k in SCORE_OPTIONS}
    out = []
    for name, run in expand_grid(params):
        for mode in SCORE_OPTIONS:
            stored = store_modes.get(mode, defaults[mode])
            if mode in run and not _same_mode(mode, run[mode], stored):
                out.append((name, mode, run[mode], stored))
    return out


def refuse_other_modes(store: Any, store_modes: Mapping[str, Any],
                       params: Mapping[str, Any]) -> None:
    """Raise :class:`StoreModesError` when ``params`` ask for modes other than the store's
    (its tables can only be the store's), saying how to score again."""
    conflicts = store_modes_conflict(store_modes, params)
    if not conflicts:
        return
    run, mode, asked, stored = conflicts[0]
    where = "" if run == "main" else f" (run {run})"
    flag = f"--{mode.replace('_', '-')}"
    how = (f"with {flag}" if asked is True else f"without {flag}") \
        if isinstance(asked, bool) else f"with {flag} {asked}"
    raise StoreModesError(
        f"the score store {store} was scored with {mode}={stored!r}, and the parameters "
        f"ask for {mode}={asked!r}{where}: its tables can only be the store's; score "
        f"again {how} (accordkit score SOURCE... --out DIR), or report from the sources "
        "(accordkit report --source ...)")


def _same_mode(mode: str, a: Any, b: Any) -> bool:
    """Whether two values of a scoring option score alike (``"upstream"`` is another name
    of a TCRR mode).

    Examples
    --------
    >>> _same_mode("tcrr_mode", "upstream", "upstream_a6a9157"), _same_mode("tcrr_mode", "x", "x")
    (True, True)
    """
    if a == b:
        return True
    if mode == "tcrr_mode":
        from ..metrics.tcrr import resolve_mode

        try:
            return resolve_mode(a) == resolve_mode(b)
        except (ValueError, TypeError):
            return False
    return False


def run_modes(params: Mapping[str, Any]) -> dict[str, Any]:
    """The scoring modes of a run's parameters.

    Examples
    --------
    >>> run_modes({"tcrr_mode": "upstream", "shop_type_gate": True})
    {'tcrr_mode': 'upstream', 'action_mode': 'best_match', 'shop_type_gate': True}
    """
    modes = {"tcrr_mode": params.get("tcrr_mode", "episode"),
             "action_mode": params.get("action_mode", "best_match")}
    if params.get("shop_type_gate"):
        modes["shop_type_gate"] = True
    return modes


def run_key(params: Mapping[str, Any], names: Sequence[str] = SCORING_PARAMETERS) -> str:
    """What of a run's parameters ``names`` hold, as one string (runs alike share it).

    Examples
    --------
    >>> run_key({"seed": 1, "split": "test"}, ["split"])
    '{"split": "test"}'
    """
    return json.dumps({k: params.get(k) for k in names}, sort_keys=True, default=str)
