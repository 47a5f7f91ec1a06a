"""The report's parameters: what each means, and the check of a parameter file or ``--set``.

One table (:data:`PARAMETERS`) names every parameter a report run takes, whether the
notebooks read it (their ``parameters`` cell) or the runner does (``metadata``, ``grid``,
``notebooks``). ``accordkit report --help`` lists it, and :func:`check_parameters` refuses
a name it does not hold, so a typo is a usage error rather than a setting silently ignored.

Parameters reach the notebooks as code: papermill writes each value into the notebook's
first cell. So every value is checked before any notebook runs: only plain values (text,
finite numbers, true/false, null, lists and mappings of them: what JSON holds) of the type
the parameter takes are accepted. A YAML tag such as ``!!binary`` or ``!!set``, a date, or
a folder the report sets itself (``out_dir``) is a usage error naming the parameter.

The work parameters can ask for is bounded (each bound a usage error naming it): a
parameter file holds at most :data:`MAX_PARAMS_BYTES` bytes, nests at most
:data:`MAX_PARAMS_DEPTH` levels and expands (YAML aliases counted each time they are used) to
at most :data:`MAX_PARAMS_VALUES` values — so an alias bomb, a self-referencing alias or a
5,000-deep list is refused at once; ``n_resamples`` is at most :data:`MAX_RESAMPLES` and a
grid at most :data:`MAX_GRID_RUNS` runs.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PARAMETERS", "check_parameters", "check_plain", "parameters_help",
           "load_parameter_text", "MAX_PARAMS_BYTES", "MAX_PARAMS_DEPTH", "MAX_PARAMS_VALUES",
           "MAX_RESAMPLES", "MAX_GRID_RUNS",
           "SET_BY_REPORT", "INPUT_PARAMETERS", "ReportInputs", "report_inputs"]

#: Largest parameter file read (bytes).
MAX_PARAMS_BYTES = 1 << 20
#: Deepest nesting of lists and mappings in parameters.
MAX_PARAMS_DEPTH = 32
#: Most values parameters may hold once YAML aliases are expanded.
MAX_PARAMS_VALUES = 100_000
#: Most bootstrap resamples a report may ask for (the default is 10,000).
MAX_RESAMPLES = 1_000_000
#: Most runs a ``grid`` may expand to (each run executes every notebook asked for).
MAX_GRID_RUNS = 1_000

#: Parameters the report sets for each notebook; a parameter file may not set them.
SET_BY_REPORT = ("out_dir", "figures_dir", "provenance_path")

#: Parameters naming the report's inputs: a parameter file may set them instead of the
#: options (``source`` for ``--source``, ``verdicts`` for ``--verdicts``, ``scores_dir`` for
#: ``--scores``); they are one per report, never a grid.
INPUT_PARAMETERS = ("source", "verdicts", "scores_dir")

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
    "baseline": "compare_models / tau2_results / reliability / error_analysis: the "
                "configuration others are compared with, as its agent model (gpt-4.1) or "
                "full label (default: every pair that shares tasks); one naming nothing is "
                "refused with the choices",
    "pairs": "compare_models / reliability / error_analysis: only these pairs, a list of "
             "[baseline, other] (agent models or full labels)",
    "shared_tasks": "kept for old parameter files: every pair of configurations is compared "
                    "on the tasks it shares (the comparison plan says how many)",
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
    "labels": "reliability / accord_results / usersim_unit_tests / goalshift_results: a CSV "
              "of human labels of judged items (episode_id, judge, item, label): the judge's "
              "calibration, and judged rates corrected beside the raw ones (default none: "
              "pages as without)",
    "out_dir": "where a notebook writes its tables (set by the report)",
    "figures_dir": "where a notebook writes its figures (set by the report)",
    "provenance_path": "where a notebook writes its provenance (set by the report)",
    "grid": "a mapping of lists: each combination is one run of the report (parameter file)",
    "notebooks": "only these notebooks (as --notebooks)",
}


def check_plain(value: Any, where: str) -> None:
    """Refuse a value that is not plain data: text, a finite number, true/false, null, or
    a list or string-keyed mapping of those (what JSON holds).

    Raises
    ------
    ValueError
        Naming ``where`` (and the position inside it) and the type found.

    Examples
    --------
    >>> check_plain({"domain": ["retail", 1, None]}, "metadata")
    >>> check_plain({b"x"}, "seed")
    Traceback (most recent call last):
    ...
    ValueError: seed: a set is not a plain value; report parameters are text, numbers, true/false, null, and lists or mappings of them
    """
    tail = ("report parameters are text, numbers, true/false, null, and lists or mappings "
            "of them")
    if value is None or isinstance(value, bool | str):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: the key {key!r} is not text; {tail}")
            check_plain(item, f"{where}.{key}")
        return
    import datetime

    kind = {bytes: "a !!binary value (bytes)", set: "a set", tuple: "a tuple"}.get(
        type(value), f"a {type(value).__name__}")
    if isinstance(value, datetime.date):
        kind = f"a date ({value}: quote it to pass it as text)"
    raise ValueError(f"{where}: {kind} is not a plain value; {tail}")


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _names(value: Any) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _resamples(value: Any) -> bool:
    return _count(value) and value <= MAX_RESAMPLES


def _natural(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _mapping(value: Any) -> bool:
    return value is None or isinstance(value, dict)


def _fraction(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1


def _pairs(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(v, str) for v in p)
        for p in value))


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


def _ci_method(value: Any) -> bool:
    return value in ("bca", "percentile", "basic", "t")


#: The type each parameter takes: (check, what the error says it expects).
_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "source": (_names, "a path or hub id, or a list of them"),
    "verdicts": (_names, "a path or a list of paths"),
    "scores_dir": (_text_or_none, "a path"),
    "revision": (_text_or_none, "text (a branch, tag or commit) or null"),
    "split": (_text_or_none, "a split name or null"),
    "metadata": (_mapping, "a mapping of field names to values"),
    "models": (_names, "a name or a list of names"),
    "domains": (_names, "a name or a list of names"),
    "metrics": (_names, "a name or a list of names"),
    "by": (_names, "a column name or a list of them"),
    "baseline": (_text_or_none, "an agent model, a configuration label or null"),
    "pairs": (_pairs, "a list of [baseline, other] pairs or null"),
    "shared_tasks": (_flag, "true or false"),
    "cluster": (_text_or_none, "a column name or null"),
    "ci_method": (_ci_method, "one of bca, percentile, basic, t"),
    "confidence": (_fraction, "a number between 0 and 1"),
    "n_resamples": (_resamples, f"a whole number from 1 to {MAX_RESAMPLES:,}"),
    "seed": (_natural, "a whole number of at least 0"),
    "tcrr_mode": (_text, "a mode name"),
    "action_mode": (_text, "a mode name"),
    "shop_type_gate": (_flag, "true or false"),
    "failure": (_text_or_none, "a failure type name"),
    "cell": (_mapping, "a mapping of column names to values"),
    "show": (_natural, "a whole number of at least 0"),
    "labels": (_text_or_none, "the path of a CSV file or null"),
    "notebooks": (_names, "a notebook name or a list of them"),
}


def _check_value(name: str, value: Any, where: str) -> None:
    check_plain(value, where)
    if name in SET_BY_REPORT:
        raise ValueError(f"{where}: set by the report for each notebook (use --out), not by "
                         "a parameter")
    check, expected = _TYPES.get(name, (lambda v: True, ""))
    if not check(value):
        raise ValueError(f"{where}: expected {expected}, got {value!r}")


def check_parameters(params: Mapping[str, Any]) -> None:
    """Refuse parameters the report does not take (a typo would be ignored otherwise), and
    values that are not plain data of the parameter's type (see the module docstring).

    Raises
    ------
    ValueError
        Naming the first unknown parameter, with the closest known name, a value of the
        wrong type, or a ``grid`` that is not a mapping of lists.

    Examples
    --------
    >>> check_parameters({"n_resamples": 2000, "grid": {"seed": [0, 1]}})
    >>> check_parameters({"n_resample": 2000})
    Traceback (most recent call last):
    ...
    ValueError: unknown report parameter 'n_resample' (did you mean 'n_resamples'?); accordkit report --help lists them
    """
    check_size(params)
    grid = params.get("grid") or {}
    if not isinstance(grid, Mapping):
        raise ValueError("grid must be a mapping of parameter names to lists of values, got "
                         f"{type(grid).__name__}")
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid: {name} must be a non-empty list of values, e.g. "
                             f"{name}: [a, b]")
    check_grid_size(grid)
    for name in [*params, *grid]:
        if name not in PARAMETERS:
            close = difflib.get_close_matches(str(name), list(PARAMETERS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown report parameter {name!r}{hint}; accordkit report "
                             "--help lists them")
    for name, value in params.items():
        if name != "grid":
            _check_value(name, value, name)
    for name, values in grid.items():
        if name == "grid":
            raise ValueError("grid: a grid cannot hold another grid")
        for i, value in enumerate(values):
            _check_value(name, value, f"grid.{name}[{i}]")


def check_size(value: Any, where: str = "parameters") -> None:
    """Refuse parameters nested deeper than :data:`MAX_PARAMS_DEPTH` levels (a value that
    holds itself is infinitely deep) or holding more than :data:`MAX_PARAMS_VALUES` values
    once shared values (YAML aliases) are counted at each use. The walk stops at the bound,
    so it is quick whatever the value.

    Raises
    ------
    ValueError
        Naming the bound passed.

    Examples
    --------
    >>> loop = []
    >>> loop.append(loop)
    >>> check_size({"models": loop})
    Traceback (most recent call last):
    ...
    ValueError: parameters: nested more than 32 levels deep (models[0][0][0]...); a value that holds itself (a YAML alias to its own anchor) is infinitely deep
    """
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    seen = 0
    while stack:
        item, depth, path = stack.pop()
        seen += 1
        if seen > MAX_PARAMS_VALUES:
            raise ValueError(f"{where}: more than {MAX_PARAMS_VALUES:,} values (YAML aliases "
                             "counted at each use); a parameter file is a few settings")
        if depth > MAX_PARAMS_DEPTH:
            shown = path[:40] + ("..." if len(path) > 40 else "")
            raise ValueError(f"{where}: nested more than {MAX_PARAMS_DEPTH} levels deep "
                             f"({shown}); a value that holds itself (a YAML alias to its "
                             "own anchor) is infinitely deep")
        if isinstance(item, dict):
            stack.extend((v, depth + 1, f"{path}.{k}" if path else str(k))
                         for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(item))


def check_grid_size(grid: Mapping[str, Any]) -> None:
    """Refuse a grid of more than :data:`MAX_GRID_RUNS` runs (the product of its lists'
    lengths), before any run is built.

    Examples
    --------
    >>> check_grid_size({"seed": list(range(1600)), "n_resamples": list(range(1600))})
    Traceback (most recent call last):
    ...
    ValueError: grid: 2,560,000 runs (seed 1600 x n_resamples 1600); at most 1,000 runs per report
    """
    sizes = {name: len(values) for name, values in grid.items() if isinstance(values, list)}
    runs = math.prod(sizes.values())
    if runs > MAX_GRID_RUNS:
        shown = " x ".join(f"{name} {n}" for name, n in sizes.items())
        raise ValueError(f"grid: {runs:,} runs ({shown}); at most {MAX_GRID_RUNS:,} runs "
                         "per report")


def load_parameter_text(text: str | bytes, where: str) -> Any:
    """Parse a parameter file (or a ``--set`` value) as YAML, within bounds.

    At most :data:`MAX_PARAMS_BYTES` bytes; nesting deeper than :data:`MAX_PARAMS_DEPTH`
    is refused while parsing (before the parser's own recursion could fail), and the value
    is then checked by :func:`check_size` (aliases counted at each use).

    Raises
    ------
    ValueError
        Not YAML, or past a bound; naming ``where``.

    Examples
    --------
    >>> load_parameter_text("{seed: 1, models: &m [a, b], domains: *m}", "--params p.yaml")
    {'seed': 1, 'models': ['a', 'b'], 'domains': ['a', 'b']}
    >>> load_parameter_text("a: &a [*a, *a]", "--params p.yaml")
    Traceback (most recent call last):
    ...
    ValueError: --params p.yaml: nested more than 32 levels deep (a[1][1][1][1][1][1][1][1][1][1][1][1][1]...); a value that holds itself (a YAML alias to its own anchor) is infinitely deep
    """
    import yaml

    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_PARAMS_BYTES:
        raise ValueError(f"{where}: larger than {MAX_PARAMS_BYTES:,} bytes; a parameter file "
                         "is a few settings")

    class BoundedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            try:
                if self.depth > MAX_PARAMS_DEPTH + 1:
                    raise ValueError(f"{where}: nested more than {MAX_PARAMS_DEPTH} levels "
                                     "deep")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    try:
        value = yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: not valid YAML ({exc})") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deep to read") from None
    check_size(value, where)
    return value


def parameters_help() -> str:
    """The parameter list of ``accordkit report --help``: one line per parameter."""
    import textwrap

    width = max(map(len, PARAMETERS))
    return "\n".join(textwrap.fill(text, 79, initial_indent=f"  {name:<{width}}  ",
                                    subsequent_indent=" " * (width + 4))
                      for name, text in PARAMETERS.items())


@dataclass(frozen=True)
class ReportInputs:
    """What a report reads: sources, verdict files and a score store (each None when not
    given), and the remaining parameters (the inputs taken out)."""

    sources: list[str] | None
    verdicts: list[str] | None
    scores: str | None
    params: dict[str, Any]


def _as_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else [str(v) for v in value]


def report_inputs(params: Mapping[str, Any], *, sources: Sequence[str] | None = None,
                  verdicts: Sequence[str] | None = None,
                  scores: str | None = None) -> ReportInputs:
    """The report's inputs from its options and its parameters (``--set`` or a
    ``--params`` file), which may name them too: ``source``, ``verdicts``, ``scores_dir``.

    A parameter is honoured as the option it stands for. Naming an input both ways with
    different values, or in a ``grid``, is refused: one report reads one set of inputs.
    Relative paths are relative to the working folder, as on the command line.

    Raises
    ------
    ValueError
        Naming the parameter and the option it disagrees with.

    Examples
    --------
    >>> got = report_inputs({"source": "runs/a.json", "seed": 1})
    >>> got.sources, got.params
    (['runs/a.json'], {'seed': 1})
    >>> report_inputs({"source": ["a.json"]}, sources=["b.json"])
    Traceback (most recent call last):
    ...
    ValueError: source ['a.json'] and --source ['b.json'] name different inputs; give them one way
    """
    params = dict(params)
    grid = params.get("grid") or {}
    for name in INPUT_PARAMETERS:
        if isinstance(grid, Mapping) and name in grid:
            raise ValueError(f"grid: {name} cannot vary within one report (one report reads "
                             f"one set of inputs); run the report once per {name}")
    given = {"source": (_as_list(sources) if sources else None, "--source"),
             "verdicts": (_as_list(verdicts) if verdicts is not None else None, "--verdicts"),
             "scores_dir": (str(scores) if scores is not None else None, "--scores")}
    chosen: dict[str, Any] = {}
    for name, (option_value, flag) in given.items():
        value = params.pop(name, None)
        value = _as_list(value) if name != "scores_dir" else value
        if value is not None and option_value is not None and value != option_value:
            raise ValueError(f"{name} {value!r} and {flag} {option_value!r} name different "
                             "inputs; give them one way")
        chosen[name] = option_value if option_value is not None else value
    return ReportInputs(chosen["source"] or None, chosen["verdicts"], chosen["scores_dir"],
                        params)
