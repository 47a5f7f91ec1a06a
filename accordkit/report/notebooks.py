"""The report's notebooks and what each needs to run.

A notebook whose inputs are absent is skipped with the reason (a skip is not a failure).
Which benchmarks a notebook shows is the benchmark catalogue's to say
(:func:`accordkit.benchmarks.shown_in`): a notebook that needs ``"benchmarks"`` runs when
the sources hold an episode of one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.resources import notebook_folder
from ..benchmarks import shown_in

__all__ = ["NotebookSpec", "NOTEBOOKS", "InputFacts", "NOTEBOOK_DIR", "skip_reason",
           "declared_parameters", "notebook_parameters"]

#: The notebooks' folder: ``notebooks/`` of a clone, or the installed package's copy.
NOTEBOOK_DIR = notebook_folder()

#: Requirement -> human-readable reason used when it is not met (``"benchmarks"``: the
#: notebook's own ``absent``).
_REASONS = {
    "usersim_verdicts": "no stored usersim_tests verdicts (pass --verdicts FILE)",
    "two_models": "fewer than two agent configurations of one benchmark to compare",
    "episodes": "no episodes in the sources",
}


@dataclass(frozen=True)
class NotebookSpec:
    """One report notebook: file name, title, one-line description and requirements.

    ``absent`` is the reason it is skipped when it needs ``"benchmarks"`` (the benchmarks
    the catalogue shows in it) and the sources hold none of them.
    """

    name: str
    title: str
    description: str
    needs: tuple[str, ...]
    absent: str = ""

    @property
    def path(self) -> Path:
        return NOTEBOOK_DIR / f"{self.name}.ipynb"

    @property
    def nav_title(self) -> str:
        """The title without its explanation, for the pages header (``tau2 results``)."""
        return self.title.split(" (", 1)[0].split(":", 1)[0]


NOTEBOOKS: tuple[NotebookSpec, ...] = (
    NotebookSpec("accord_results", "AcCoRD results",
                 "Table 3 (completion, outcome, perfect outcome, task score) and Table 4 "
                 "(per-dynamic preference scores, interaction cost) with clustered intervals.",
                 ("benchmarks",), "no AcCoRD episodes in the sources"),
    NotebookSpec("goalshift_results", "Goal-shift results (AgentChangeBench)",
                 "TSR and its channels, TUE, TCRR, recovery and GSRT, pass^k, by domain, model "
                 "and persona, and accordkit's definitions next to the upstream ones, for the "
                 "runs with goal shifts.",
                 ("benchmarks",),
                 "no AgentChangeBench episodes (the runs with goal shifts) in the sources; "
                 "plain tau2 runs are on the tau2 page"),
    NotebookSpec("tau2_results", "tau2 results (stored reward, pass^k, checks, cost)",
                 "tau2's own headline per domain and configuration: mean stored reward with "
                 "task-clustered intervals, pass^k and pass@k curves, the stored reward "
                 "checks, termination reasons, agent and user cost per task, and paired "
                 "comparisons within a domain and task set.",
                 ("benchmarks",),
                 "no tau2-format episodes (tau2-bench, AgentChangeBench, τ-bench) in the sources"),
    NotebookSpec("usersim_unit_tests", "User-simulator unit tests",
                 "AcCoRD Table 6 analog: pass rates per unit test and judge model, and the "
                 "agreement between judge models, from stored verdicts.",
                 ("usersim_verdicts",)),
    NotebookSpec("compare_models", "Paired model comparisons",
                 "Differences against a baseline within each benchmark and domain, only "
                 "between configurations that ran the same tasks, with adjusted p-values, "
                 "probability of improvement and tie groups.",
                 ("two_models",)),
    NotebookSpec("reliability", "Reliability: noise floor, planning, recovery times",
                 "Variance components and minimum detectable differences per configuration, "
                 "trial planning, Kaplan–Meier recovery curves, task discrimination, and "
                 "which paired differences exceed the noise floor.",
                 ("episodes",)),
    NotebookSpec("error_analysis", "Error analysis",
                 "Why it failed: failure shares with intervals and the tasks that flipped "
                 "between configurations, every episode listed and searchable, each "
                 "conversation with its first divergence marked (a flip's two sides "
                 "side by side).",
                 ("episodes",)),
)


@dataclass(frozen=True)
class InputFacts:
    """What the sources of a report contain."""

    n_episodes: int
    benchmarks: frozenset[str]
    n_agent_configs: Mapping[str, int]
    verdict_judges: frozenset[str]
    #: ``(agent_model, domain)`` of the episodes: what ``models``/``domains`` can select.
    model_domains: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def from_sources(cls, ds: Any, verdicts: list[str]) -> InputFacts:
        import pandas as pd

        from ..frame import to_frame
        from ..names import CONFIG_COLUMNS

        frame = to_frame(ds) if len(ds) else pd.DataFrame(
            columns=["benchmark", *CONFIG_COLUMNS])
        return cls.from_frame(frame, verdicts)

    @classmethod
    def from_frame(cls, frame: Any, verdicts: list[str]) -> InputFacts:
        """From any per-episode frame with the id columns (episodes or their scores)."""
        import pandas as pd

        from ..names import CONFIG_COLUMNS

        configs = {}
        for bench, part in frame.groupby("benchmark"):
            configs[str(bench)] = int(part[list(CONFIG_COLUMNS)].astype(str)
                                      .drop_duplicates().shape[0])
        judges: set[str] = set()
        for path in verdicts:
            judges |= set(pd.read_parquet(path, columns=["judge"])["judge"].astype(str))
        pairs: frozenset[tuple[str, str]] = frozenset()
        if {"agent_model", "domain"} <= set(frame):
            both = frame[["agent_model", "domain"]].drop_duplicates().astype(str)
            pairs = frozenset(map(tuple, both.values.tolist()))
        return cls(len(frame), frozenset(frame["benchmark"].astype(str)), configs,
                   frozenset(judges), pairs)

    def has(self, need: str, *, notebook: str | None = None) -> bool:
        """Whether the sources meet ``need``; ``"benchmarks"`` asks for an episode of a
        benchmark the catalogue shows in ``notebook``."""
        if need == "benchmarks":   # e.g. plain tau2 runs have no goal shifts: the tau2 page
            if notebook is None:
                raise ValueError("the requirement 'benchmarks' needs the notebook's name")
            return bool(self.benchmarks & set(shown_in(notebook)))
        if need == "usersim_verdicts":
            return "usersim_tests" in self.verdict_judges
        if need == "two_models":
            return any(n >= 2 for n in self.n_agent_configs.values())
        if need == "episodes":
            return self.n_episodes > 0
        raise ValueError(f"unknown notebook requirement {need!r}")


def skip_reason(spec: NotebookSpec, facts: InputFacts) -> str | None:
    """Why ``spec`` cannot run on these inputs, or None when it can."""
    missing = [spec.absent if n == "benchmarks" else _REASONS[n]
               for n in spec.needs if not facts.has(n, notebook=spec.name)]
    return "; ".join(missing) or None


def declared_parameters(notebook: str | Path) -> tuple[str, ...]:
    """Names assigned in a notebook's ``parameters`` cell, in order.

    Raises
    ------
    ValueError
        When the notebook has no cell tagged ``parameters``.
    """
    import ast

    import nbformat

    node = nbformat.read(str(notebook), as_version=4)
    for cell in node.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            names = []
            for stmt in ast.parse(cell.source).body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                    [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                names += [t.id for t in targets if isinstance(t, ast.Name)]
            return tuple(dict.fromkeys(names))
    raise ValueError(f"{notebook}: no cell tagged 'parameters'")


def notebook_parameters(spec: NotebookSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``values`` that ``spec``'s notebook declares in its parameters cell."""
    declared = declared_parameters(spec.path)
    return {k: v for k, v in values.items() if k in declared}
