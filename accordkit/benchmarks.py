"""The benchmark catalogue: one entry per benchmark accordkit knows, and all it says of it.

Each entry holds what used to be spelled out benchmark by benchmark across the package: its
display name, domains, the metric family that scores it, its tables, report notebooks,
readers, judges, reward range, comparison metrics and the few scoring conventions that set
it apart. The places that used to name benchmarks ask the catalogue instead (``ids(...)``,
:func:`scored_by`, :func:`judged_by`, :func:`shown_in`), so adding a benchmark is one entry
here, its id in :data:`accordkit.names.BENCHMARKS`, and the reader that writes it
(docs/adding-a-benchmark.md).

The catalogue sits at the bottom, beside :mod:`accordkit.names`: it imports nothing of
accordkit but ``names``. What it points at higher up (metric modules, table builders,
notebooks, readers, judges) it names by dotted path or by name, resolved only when asked
(:func:`resolve`); ``tests/test_benchmarks.py`` checks that each resolves.

Examples
--------
>>> from accordkit.benchmarks import CATALOG, ids
>>> CATALOG["taubench"].name
'τ-bench'
>>> ids(tau2_format=True)
('agentchangebench', 'tau2', 'taubench')
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from importlib import import_module
from typing import Any

from .names import BENCHMARKS, REWARD_RANGE

__all__ = ["Benchmark", "Sample", "CATALOG", "entry", "ids", "scored_by", "judged_by",
           "shown_in", "shown_in_table", "sample_parts", "resolve"]

#: A comparison metric: a column, or a (numerator, denominator) pair summed as a ratio.
CompareMetric = str | tuple[str, str]


@dataclass(frozen=True)
class Sample:
    """A part of the embedded sample (``accordkit synth``) that simulates a benchmark.

    Attributes
    ----------
    part : str
        The part's name: its folder under ``data/sample`` and its ``synth --only`` choice.
    generator : str
        ``module:function`` returning ``(records, ...)`` for a ``seed=`` keyword.
    title, description : str
        The dataset card's title and description.
    """

    part: str
    generator: str
    title: str
    description: str


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: what accordkit does with its episodes.

    Attributes
    ----------
    id : str
        The ``benchmark`` value of its episodes (one of :data:`accordkit.names.BENCHMARKS`).
    name : str
        What a reader calls it.
    upstream : str
        Where its released files come from.
    domains : tuple of str
        The domains of its released runs (other domains load as well).
    metrics : str
        The module of the metric family that scores it in :func:`accordkit.score`.
    tables : tuple of str
        ``module:function`` of the table builders made for it.
    notebooks : tuple of str
        The report notebooks (:data:`accordkit.report.notebooks.NOTEBOOKS`) that show it.
        Those shown for every benchmark (comparisons, reliability, errors) are not listed.
    readers : tuple of str
        Names of the built-in readers that turn its released files into episodes (the
        canonical readers read every benchmark and are not listed).
    judges : tuple of str
        The LLM judges (:mod:`accordkit.judges`) that score its episodes.
    reward_range : tuple of float, or None
        The range of its stored ``reward``; None when its episodes carry none.
    comparison_metrics : tuple
        Metrics the report's model comparisons use by default.
    paper_comparison_metrics : tuple
        Metrics of :data:`accordkit.tables.COMPARISON_METRICS` (accordkit's own scores
        only); empty when that table has no entry for it.
    binary_metric : str
        The pass/fail column of the reliability page.
    tau2_format : bool
        Its episodes come from tau2-format result files (the tau2 page, tau2's views).
    communicate_rule : {"conversation", "per_message"}
        How TSR's communicate channel finds a string: in the whole conversation, or message by
        message with commas removed (tau2's evaluator).
    premature_stop_reward : float or None
        The reward of an episode stopped early that stored none (tau2 scores it 0); None to
        leave it missing.
    mode_comparison : bool
        :func:`accordkit.metrics.compare_modes` sets its accordkit definitions beside the
        upstream ones.
    incomplete_is_failure : bool
        ``completed == False`` is a failure of the task (AcCoRD: no purchase), not a
        termination reason.
    sample : Sample or None
        Its part of the embedded sample, when accordkit simulates it.
    """

    id: str
    name: str
    upstream: str
    domains: tuple[str, ...]
    metrics: str
    tables: tuple[str, ...]
    notebooks: tuple[str, ...]
    readers: tuple[str, ...]
    judges: tuple[str, ...]
    reward_range: tuple[float, float] | None
    comparison_metrics: tuple[CompareMetric, ...]
    paper_comparison_metrics: tuple[CompareMetric, ...]
    binary_metric: str
    tau2_format: bool = False
    communicate_rule: str = "conversation"
    premature_stop_reward: float | None = None
    mode_comparison: bool = False
    incomplete_is_failure: bool = False
    sample: Sample | None = None


_TAU2_READERS = ("results-file", "results-folder", "results")
_GOALSHIFT_TABLES = ("accordkit.tables.goalshift:goalshift_main",
                     "accordkit.tables.goalshift:goalshift_gsrt")
_TAU2_TABLES = tuple(f"accordkit.tables.tau2:{f}" for f in (
    "reward_table", "check_table", "termination_table", "cost_table", "pass_k_table"))

#: Every benchmark, in the order of :data:`accordkit.names.BENCHMARKS`.
CATALOG: dict[str, Benchmark] = {b.id: b for b in (
    Benchmark(
        id="accord", name="AcCoRD", upstream="AcCoRD paper release",
        domains=("shop", "travel"),
        metrics="accordkit.metrics.accord",
        tables=("accordkit.tables.accord:accord_main",
                "accordkit.tables.accord:accord_dynamics",
                "accordkit.tables.accord:accord_cost",
                "accordkit.tables.paper:accord_table"),
        notebooks=("accord_results",),
        readers=(),
        judges=("outcome", "usersim_tests"),
        reward_range=None,
        comparison_metrics=("task_score", "outcome_score", "completed"),
        paper_comparison_metrics=("task_score", "outcome_score", "completed"),
        binary_metric="completed",
        incomplete_is_failure=True,
        sample=Sample(
            "accord", "accordkit.synth.accord:generate_accord", "accordkit sample: AcCoRD",
            "AcCoRD-style episodes (shop and travel) from accordkit's scripted simulator: a "
            "rule-based user with hard/soft-underspecified, unachievable and triggered "
            "preferences, and scripted agents of different quality."),
    ),
    Benchmark(
        id="agentchangebench", name="AgentChangeBench", upstream="AgentChangeBench (tau2 fork)",
        domains=("banking", "airline", "retail"),
        metrics="accordkit.metrics.goalshift",
        tables=(*_GOALSHIFT_TABLES, *_TAU2_TABLES),
        notebooks=("goalshift_results", "tau2_results"),
        readers=_TAU2_READERS,
        judges=("review", "nl_assertions", "gsrt"),
        reward_range=REWARD_RANGE,
        comparison_metrics=("tsr", ("n_recovered", "n_shifts"), "reward"),
        paper_comparison_metrics=("tsr", ("n_recovered", "n_shifts")),
        binary_metric="success",
        tau2_format=True,
        mode_comparison=True,
        sample=Sample(
            "goalshift", "accordkit.synth.goalshift:generate_goalshift",
            "accordkit sample: goal shifts",
            "AgentChangeBench-style episodes (banking, airline, retail) from accordkit's "
            "scripted simulator: goal sequences with mid-conversation shifts, five "
            "personas, repeated tool calls, transfers, and stored judge output."),
    ),
    Benchmark(
        id="tau2", name="tau2-bench", upstream="sierra-research/tau2-bench",
        domains=("airline", "retail", "telecom"),
        metrics="accordkit.metrics.goalshift",
        tables=_TAU2_TABLES,
        notebooks=("tau2_results",),
        # inspect: inspect_evals' tau2 tasks, from Inspect logs (accordkit[inspect])
        readers=(*_TAU2_READERS, "inspect"),
        judges=("review", "nl_assertions", "gsrt"),
        reward_range=REWARD_RANGE,
        comparison_metrics=("reward", "success"),
        paper_comparison_metrics=("success",),
        binary_metric="success",
        tau2_format=True,
        communicate_rule="per_message",
        premature_stop_reward=0.0,
        mode_comparison=True,
    ),
    Benchmark(
        id="taubench", name="τ-bench", upstream="sierra-research/tau-bench",
        domains=("airline", "retail"),
        metrics="accordkit.metrics.goalshift",
        tables=_TAU2_TABLES,
        notebooks=("tau2_results",),
        readers=("taubench",),
        judges=("review",),
        reward_range=REWARD_RANGE,
        comparison_metrics=("reward", "success"),
        paper_comparison_metrics=(),
        binary_metric="success",
        tau2_format=True,
        communicate_rule="per_message",
    ),
)}

if tuple(CATALOG) != BENCHMARKS:  # pragma: no cover - a catalogue edit without the names
    raise ImportError(f"the benchmark catalogue lists {tuple(CATALOG)}, accordkit.names "
                      f"{BENCHMARKS}: keep them the same, in the same order")

_FIELDS = frozenset(f.name for f in fields(Benchmark))


def entry(benchmark: str) -> Benchmark:
    """The catalogue entry of ``benchmark``.

    Raises
    ------
    ValueError
        For an id the catalogue does not hold.

    Examples
    --------
    >>> entry("tau2").upstream
    'sierra-research/tau2-bench'
    """
    try:
        return CATALOG[benchmark]
    except KeyError:
        raise ValueError(f"unknown benchmark {benchmark!r}; the catalogue holds "
                         f"{list(CATALOG)}") from None


def ids(**where: Any) -> tuple[str, ...]:
    """The ids of the benchmarks whose fields equal ``where``, in catalogue order.

    Examples
    --------
    >>> ids(communicate_rule="per_message")
    ('tau2', 'taubench')
    >>> ids()
    ('accord', 'agentchangebench', 'tau2', 'taubench')
    """
    unknown = set(where) - _FIELDS
    if unknown:
        raise ValueError(f"no catalogue field {sorted(unknown)}; fields: {sorted(_FIELDS)}")
    return tuple(b.id for b in CATALOG.values()
                 if all(getattr(b, k) == v for k, v in where.items()))


def scored_by(metrics: str) -> tuple[str, ...]:
    """The benchmarks scored by the metric module ``metrics`` (its dotted name).

    Examples
    --------
    >>> scored_by("accordkit.metrics.accord")
    ('accord',)
    """
    return ids(metrics=metrics)


def judged_by(judge: str) -> tuple[str, ...]:
    """The benchmarks whose episodes the judge ``judge`` scores.

    Examples
    --------
    >>> judged_by("gsrt")
    ('agentchangebench', 'tau2')
    """
    return tuple(b.id for b in CATALOG.values() if judge in b.judges)


def shown_in(notebook: str) -> tuple[str, ...]:
    """The benchmarks the report notebook ``notebook`` shows.

    Examples
    --------
    >>> shown_in("tau2_results")
    ('agentchangebench', 'tau2', 'taubench')
    """
    return tuple(b.id for b in CATALOG.values() if notebook in b.notebooks)


def shown_in_table(builder: str) -> tuple[str, ...]:
    """The benchmarks whose tables include ``builder`` (``module:function``).

    Examples
    --------
    >>> shown_in_table("accordkit.tables.paper:accord_table")
    ('accord',)
    """
    return tuple(b.id for b in CATALOG.values() if builder in b.tables)


def sample_parts() -> tuple[Sample, ...]:
    """The parts of the embedded sample that simulate a benchmark, in catalogue order.

    Examples
    --------
    >>> [s.part for s in sample_parts()]
    ['accord', 'goalshift']
    """
    return tuple(b.sample for b in CATALOG.values() if b.sample is not None)


def resolve(path: str) -> Any:
    """Import what a catalogue entry names: ``package.module`` or ``package.module:attr``.

    Examples
    --------
    >>> resolve("accordkit.tables.accord:accord_main").__name__
    'accord_main'
    """
    module, _, attr = path.partition(":")
    found = import_module(module)
    return getattr(found, attr) if attr else found
