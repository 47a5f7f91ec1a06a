"""``build_report``: score the sources into a store (or take a store), run the notebooks on
it with papermill in parallel, and export them to HTML.

A report has one route: the notebooks always read a score store, and the only difference
between ``--scores S`` and ``--source X`` is who wrote the store (``accordkit score``, or the
report itself, :mod:`.scoring`). What the report says of its inputs (episodes, skipped
records, the files' sha256 in ``provenance.json``) is read from the store's manifest; no
source file is hashed by the report.

The jobs are in modules of their own: the runs and their parameters (:mod:`.grid`), the
scoring step (:mod:`.scoring`), what was skipped (:mod:`.skipped`), one notebook's execution
(:mod:`.execute`), every run's notebooks and the index (:mod:`.runs`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._internal.resources import sample_folder
from ..benchmarks import sample_parts
from ..names import SCORE_OPTIONS
from ..store import RepeatedEpisodesError, StoreChangedWarning
from .execute import BLAS_THREADS as _BLAS_THREADS
from .execute import execute_notebook as _execute
from .execute import kernel_threads
from .filenames import run_folder
from .grid import (
    DEFAULT_PARAMETERS,
    StoreModesError,
    expand_grid,
    refuse_other_modes,
    store_modes_conflict,
    wanted_notebooks,
)
from .notebooks import InputFacts, NotebookSpec
from .runs import ReportResults, RunResult, run_notebooks
from .scoring import RunStores, score_sources
from .skipped import (
    MAX_REASONS,
    SkippedRecordsError,
    left_out_summary,
    skipped_summary,
    store_skipped_summary,
)

__all__ = ["build_report", "RunResult", "ReportResults", "DEFAULT_PARAMETERS",
           "SAMPLE_SOURCES", "SAMPLE_VERDICTS", "SkippedRecordsError", "RepeatedEpisodesError",
           "StoreChangedWarning", "StoreModesError", "store_modes_conflict", "expand_grid",
           "skipped_summary", "store_skipped_summary", "left_out_summary", "MAX_REASONS",
           "wanted_notebooks",
           "kernel_threads", "_BLAS_THREADS", "_execute"]

#: The embedded sample (``data/sample`` of a clone, or the installed package's copy).
SAMPLE_SOURCES = tuple(str(sample_folder() / s.part) for s in sample_parts())
SAMPLE_VERDICTS = (str(sample_folder() / "verdicts" / "usersim_tests.parquet"),)


def build_report(
    sources: Sequence[str] | None = None,
    *,
    out: str | Path = "reports",
    params: Mapping[str, Any] | None = None,
    verdicts: Sequence[str] | None = None,
    notebooks: Sequence[str] | None = None,
    jobs: int = 2,
    show_code: bool = False,
    progress: bool = True,
    strict: bool = False,
    scores: str | Path | None = None,
) -> ReportResults:
    """Run the report notebooks over a parameter grid and write ``<out>/index.html``.

    The report is built in a staging folder beside ``out`` under a lock and swapped in
    when complete (see :mod:`accordkit.report.outdir`): two reports into one folder never
    mix, and a re-run leaves no stale page.

    Parameters
    ----------
    sources : list of str, optional
        Hub ids, folders or files, loaded as one dataset (or the ``source`` parameter of
        ``params``; ``verdicts`` and ``scores_dir`` likewise). Default: the embedded sample
        (``data/sample/accord``, ``data/sample/goalshift``) with its stored verdicts.
    out : str or Path
        Output folder (tables/, figures/, notebooks/, index.html, results.json,
        provenance.json). Its previous content is replaced.
    params : mapping, optional
        Notebook parameters, with an optional ``grid`` of values to expand and an optional
        ``notebooks`` list to restrict the run (see :func:`expand_grid`).
    verdicts : list of str, optional
        Stored judge verdict files (parquet).
    notebooks : list of str, optional
        Run only these notebooks.
    jobs : int
        Notebooks executed in parallel processes.
    show_code : bool
        Keep code cells in the HTML pages.
    progress : bool
        Show a progress bar.
    strict : bool
        Raise :class:`SkippedRecordsError` (before any notebook runs or any file is
        written) when the loader skipped a bad record or an input failed, or when scoring
        left an episode out of a level (the action diff of arguments nested too deep).
    scores : str or Path, optional
        A score store (``accordkit score --out``): every table is built from the stored
        scores without loading transcripts; drill-down pages read only the episodes they
        show. ``sources`` default to the store's inputs. Without it, the sources are
        scored here, batch by batch, into the run's ``scores/`` store
        (:mod:`accordkit.report.scoring`: memory bounded by the batch, not the data; inputs
        holding one episode twice, such as two checkpoints of a run, are read together and
        merged as :func:`accordkit.load` merges them). Either way the notebooks read a
        store, and the sources' file digests in ``provenance.json`` are its manifest's.

    Returns
    -------
    ReportResults
        One :class:`RunResult` per (run, notebook); failures are listed with their error and
        do not stop the others. ``.skipped`` summarises the records left out as bad,
        ``.left_out`` the episodes left out of a level at scoring (:func:`left_out_summary`).

    Raises
    ------
    SkippedRecordsError
        With ``strict=True`` when records were skipped or episodes left out at scoring.
    accordkit.report.outdir.ReportBusyError
        When another report is writing into ``out``.
    accordkit.report.outdir.ReportIncompleteError
        When writing failed (e.g. a full disk); ``out`` is left as it was.
    """
    from .outdir import staged_output
    from .parameters import check_parameters, report_inputs

    final_out = Path(out).resolve()
    params = dict(params or {})
    check_parameters(params)   # papermill writes them into the notebooks as code
    if params.get("labels"):   # the notebooks run elsewhere: the labels file by its full path
        params["labels"] = str(Path(params["labels"]).resolve())
    # a parameter file may name the inputs (source, verdicts, scores_dir): they are honoured
    inputs = report_inputs(params, sources=sources, verdicts=verdicts, scores=scores)
    sources, verdicts, scores, params = (inputs.sources, inputs.verdicts, inputs.scores,
                                         inputs.params)
    specs = wanted_notebooks(notebooks, params)
    options = {"specs": specs, "jobs": jobs, "show_code": show_code, "progress": progress}
    if scores is not None:
        # the store is given: what it holds is checked before anything is written
        store = _StoreFacts.read(Path(scores).resolve(), sources=sources, verdicts=verdicts,
                                 strict=strict, given=True)
        params = store.parameters(params)
        store.check_comparisons(params)
        with staged_output(final_out, inputs=[store.path, *store.sources,
                                              *store.verdicts]) as stage:
            return store.report(stage, params=params, store_for=lambda *_: store.path,
                                **options)
    default_sources = sources is None or len(sources) == 0
    sources = list(SAMPLE_SOURCES if default_sources else sources)
    if verdicts is None:
        verdicts = [v for v in SAMPLE_VERDICTS if Path(v).exists()] if default_sources else []
    verdicts = [str(Path(v).resolve()) for v in verdicts]
    # named as given (a link keeps its name; the manifest puts the file it leads to beside)
    sources = [os.path.abspath(s) if Path(s).exists() else s for s in sources]
    runs = expand_grid(params)
    with staged_output(final_out, inputs=[*sources, *verdicts]) as stage:
        first_dir = stage if len(runs) == 1 else stage / run_folder(runs[0][0])
        first = {**DEFAULT_PARAMETERS, **runs[0][1]}
        path = score_sources(sources, first_dir / "scores", params=first, verdicts=verdicts,
                             jobs=jobs)
        store = _StoreFacts.read(path, sources=sources, verdicts=verdicts, strict=strict,
                                 given=False)
        store.check_comparisons(params)
        stores = RunStores(sources, verdicts=verdicts, jobs=jobs, first=path, params=first)
        return store.report(stage, params=params, store_for=stores, **options)


@dataclass
class _StoreFacts:
    """What a report needs of the store its notebooks read: its manifest, the sources and
    verdicts, what was skipped (at load) and left out (at scoring), the facts that choose
    the notebooks; ``given`` when the report was given the store (``--scores``) rather
    than writing it."""

    path: Path
    manifest: dict[str, Any]
    sources: list[str]
    verdicts: list[str]
    skipped: list[dict[str, Any]]
    facts: InputFacts
    given: bool
    #: the distinct configurations of the episodes (a baseline must name one of them)
    configurations: Any = None
    #: the episodes scoring left out of a level, per source (:func:`left_out_summary`)
    left_out: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path, *, sources: Sequence[str] | None,
             verdicts: Sequence[str] | None, strict: bool, given: bool) -> _StoreFacts:
        """The facts of the store at ``path``.

        Raises
        ------
        SkippedRecordsError
            With ``strict``, when the store lacks records or inputs, or episodes of a
            level.
        RepeatedEpisodesError
            When the store holds an episode twice (a store written without merging).
        """
        from ..store import read_manifest, read_scores

        manifest = read_manifest(path)
        sources = list(sources) if sources else [r["source"] for r in manifest["inputs"]]
        verdicts = [str(Path(v).resolve()) for v in (verdicts or [])]
        # a store written here counts its inputs under the sources given; a store given,
        # per input (the sources named may not be its inputs)
        skipped = store_skipped_summary(manifest, None if given else sources)
        left_out = left_out_summary(manifest, None if given else sources)
        if strict and (any(e["skipped"] or e["reasons"] for e in skipped) or left_out):
            raise SkippedRecordsError(skipped, left_out)
        # the report says what became of the inputs (its index page, the warning below)
        episodes = read_scores(path, level="episode", columns=[], check_inputs=False)
        facts = InputFacts.from_frame(episodes, verdicts)
        config = [c for c in ("benchmark", "agent_model", "method", "user_model",
                              "user_implementation") if c in episodes]
        return cls(path, manifest, sources, verdicts, skipped, facts, given,
                   episodes[config].drop_duplicates(), left_out)

    def check_comparisons(self, params: Mapping[str, Any]) -> None:
        """Refuse a ``baseline`` or ``pairs`` (of any run of the grid) that names no
        configuration of the episodes, before any notebook runs
        (:class:`~accordkit.tables.comparisons.UnknownBaselineError`, with the choices)."""
        from ..tables.comparisons import check_names
        from ..tables.tau2 import with_configuration

        runs = [p for _, p in expand_grid(dict(params))]
        if self.configurations is None or not any(
                p.get("baseline") is not None or p.get("pairs") for p in runs):
            return
        frame = with_configuration(self.configurations)
        for run in runs:
            check_names(frame, baseline=run.get("baseline"), pairs=run.get("pairs"))

    def parameters(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with the store's modes (its tables are theirs), after refusing other
        modes (:class:`StoreModesError`) and warning of inputs changed since it was
        scored (:class:`StoreChangedWarning`)."""
        from ..store import scored_inputs

        # the modes the store was scored with (shop_type_gate too): the tables are theirs
        modes = {k: v for k, v in self.manifest.get("modes", {}).items() if k in SCORE_OPTIONS}
        refuse_other_modes(self.path, modes, params)
        changed = [r["source"] for r in scored_inputs(self.manifest) if r.get("changed")]
        if changed:
            warnings.warn(
                f"{len(changed)} input(s) changed since the score store was scored "
                f"({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}): the tables "
                "are those of the files as scored (their sha256 is in provenance.json, "
                "score_store.inputs), while drill-down pages read the files as they are now; "
                "score them again for tables of the files as they are", StoreChangedWarning,
                stacklevel=3)
        return {**params, **modes, "scores_dir": str(self.path)}

    def report(self, stage: Path, *, params: dict[str, Any], specs: Sequence[NotebookSpec],
               store_for: Any, jobs: int, show_code: bool, progress: bool) -> ReportResults:
        """Run the notebooks into ``stage``, their file digests the manifest's."""
        score_store = None
        if self.given:   # provenance says what the given store scored, and how
            from ..store import scored_inputs

            score_store = {"path": str(self.path), "modes": dict(self.manifest.get("modes", {})),
                           "inputs": scored_inputs(self.manifest)}
        return run_notebooks(stage, specs, sources=self.sources, verdicts=self.verdicts,
                             params=params, facts=self.facts, skipped=self.skipped,
                             left_out=self.left_out, jobs=jobs,
                             show_code=show_code, progress=progress, store_for=store_for,
                             hashes=manifest_hashes(self.manifest), score_store=score_store)


def manifest_hashes(manifest: Mapping[str, Any]) -> dict[str, str]:
    """file -> sha256 of a store's inputs, as scored (provenance reads no file again).

    Examples
    --------
    >>> manifest_hashes({"inputs": [{"source": "/a.json", "sha256": "ab"},
    ...                             {"source": "org/x", "sha256": None}]})
    {'/a.json': 'ab'}
    """
    return {r["source"]: r["sha256"] for r in manifest.get("inputs", [])
            if isinstance(r.get("source"), str) and isinstance(r.get("sha256"), str)}
