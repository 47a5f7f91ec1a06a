"""``build_report``: run the notebooks with papermill in parallel and export them to HTML."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._internal.pool import stop_pool
from .._internal.redact import redact_sources
from .._internal.resources import sample_folder
from ..benchmarks import sample_parts
from ..names import SCORE_OPTIONS
from ..store import RepeatedEpisodesError, StoreChangedWarning
from .filenames import run_folder
from .notebooks import NOTEBOOKS, InputFacts, NotebookSpec, notebook_parameters, skip_reason
from .provenance import collect_provenance

__all__ = ["build_report", "RunResult", "ReportResults", "DEFAULT_PARAMETERS",
           "SAMPLE_SOURCES", "SAMPLE_VERDICTS", "SkippedRecordsError", "RepeatedEpisodesError",
           "StoreChangedWarning", "StoreModesError", "store_modes_conflict", "expand_grid",
           "skipped_summary", "store_skipped_summary", "MAX_REASONS"]

#: How many skip reasons per source the report lists.
MAX_REASONS = 5

#: The embedded sample (``data/sample`` of a clone, or the installed package's copy).
SAMPLE_SOURCES = tuple(str(sample_folder() / s.part) for s in sample_parts())
SAMPLE_VERDICTS = (str(sample_folder() / "verdicts" / "usersim_tests.parquet"),)

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


@dataclass
class RunResult:
    """Outcome of one notebook run."""

    notebook: str
    title: str
    run: str
    status: str  # "ok", "failed" or "skipped"
    reason: str = ""
    seconds: float = 0.0
    ipynb: str | None = None
    html: str | None = None
    outputs: list[str] = field(default_factory=list)


class ReportResults(list):
    """The :class:`RunResult` of every notebook run, plus what the loader skipped.

    ``skipped`` is :func:`skipped_summary` of the load (one entry per source).
    """

    def __init__(self, results: Sequence[RunResult] = (), *,
                 skipped: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(results)
        self.skipped = list(skipped)

    @property
    def n_skipped(self) -> int:
        """Records (or whole files) left out of the report as bad."""
        return sum(entry["skipped"] for entry in self.skipped)


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


class SkippedRecordsError(ValueError):
    """``strict=True`` and the loader skipped records; ``.skipped`` is the summary."""

    def __init__(self, skipped: Sequence[dict[str, Any]]) -> None:
        self.skipped = list(skipped)
        n = sum(e["skipped"] for e in self.skipped)
        lines = [f"  {e['source']}: {e['skipped']} skipped; first: {e['reasons'][0]}"
                 for e in self.skipped if e["skipped"]]
        super().__init__(f"strict report: {n} bad record(s) were skipped\n" + "\n".join(lines))


def _owner(record_source: str | None, sources: Sequence[str]) -> str | None:
    """The given source a skipped record's file belongs to (itself or a folder above it)."""
    if record_source is None:
        return None
    for src in sources:
        if record_source == src:
            return src
    path = Path(record_source).resolve() if Path(record_source).exists() else None
    for src in sources:
        base = Path(src)
        if path is not None and base.is_dir() and base.resolve() in path.parents:
            return src
    return None


def skipped_summary(sources: Sequence[str], counts: Mapping[str, int], skipped: Sequence[Any],
                    *, max_reasons: int = MAX_REASONS) -> list[dict[str, Any]]:
    """Per source: episodes loaded, records skipped and the first reasons.

    Parameters
    ----------
    sources : list of str
        The sources as given to the loader.
    counts : mapping
        Episodes loaded per source (``LoadReport.counts``).
    skipped : list of SkippedRecord
        ``LoadReport.skipped``.
    max_reasons : int
        Reasons listed per source (the count covers all).

    Returns
    -------
    list of dict
        ``source``, ``episodes``, ``skipped`` and ``reasons`` (up to ``max_reasons`` lines
        naming file, record and field), one per source; a skipped record outside every
        given source gets an entry of its own.
    """
    entries: dict[str, dict[str, Any]] = {
        src: {"source": src, "episodes": int(counts.get(src, 0)), "skipped": 0, "reasons": []}
        for src in sources}
    for rec in skipped:
        src = _owner(rec.source, sources) or str(rec.source)
        entry = entries.setdefault(src, {"source": src, "episodes": 0, "skipped": 0,
                                         "reasons": []})
        entry["skipped"] += 1
        if len(entry["reasons"]) < max_reasons:
            entry["reasons"].append(str(rec))
    return redact_sources(list(entries.values()))


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
    return runs


#: Thread-count variables of the BLAS libraries numpy may be built with (OpenBLAS, MKL,
#: OpenMP builds), set for each kernel unless the user set them.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def kernel_threads(jobs: int, cpus: int | None = None) -> int:
    """BLAS threads for each of ``jobs`` kernels running at once: the cores shared out.

    With as many kernels as cores, each gets one: a BLAS library otherwise starts a thread
    per core in every kernel, and the kernels' threads then fight for the same cores. Two
    notebooks on two cores made the report's largest table take 31 s instead of 15 s.

    Examples
    --------
    >>> kernel_threads(2, cpus=2), kernel_threads(1, cpus=2), kernel_threads(3, cpus=8)
    (1, 2, 2)
    """
    cpus = cpus if cpus is not None else os.cpu_count() or 1
    return max(1, cpus // max(1, jobs))


def _execute(spec_name: str, notebook: str, out_ipynb: str, out_html: str,
             parameters: dict[str, Any], cwd: str, show_code: bool,
             threads: int | None = None,
             page: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """Worker: run one notebook with papermill, then export it to HTML.

    ``threads`` caps the BLAS threads of the kernel (it inherits this process's
    environment); a value the user set is kept. ``page`` holds the keyword arguments of
    :func:`~accordkit.report.pages.finish_page` that place the page in its report (the
    other pages, the provenance line).
    """
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    from .pages import finish_page

    os.environ.setdefault("MPLBACKEND", "Agg")
    if threads is not None:
        for name in _BLAS_THREADS:
            os.environ.setdefault(name, str(threads))
    error = ""
    # The kernel and the libraries it loads talk to stderr (transport warnings, progress
    # bars): keep that in the notebook's log file, not on the user's terminal.
    with _stderr_to(Path(out_ipynb).with_suffix(".log")):
        try:
            pm.execute_notebook(notebook, out_ipynb, parameters=parameters,
                                kernel_name="python3", cwd=cwd, progress_bar=False,
                                log_output=False)
        except pm.PapermillExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue} (cell {exc.exec_count})"
        except Exception as exc:  # noqa: BLE001 - reported, never raised into the pool
            error = f"{type(exc).__name__}: {exc}"
    if Path(out_ipynb).exists():
        node = nbformat.read(out_ipynb, as_version=4)
        exporter = HTMLExporter(template_name="lab", exclude_input=not show_code,
                                exclude_input_prompt=True, exclude_output_prompt=True)
        body, _ = exporter.from_notebook_node(node)
        body, _ = finish_page(body, **dict(page or {}))
        from .outdir import write_text_checked

        write_text_checked(Path(out_html), body)
    return spec_name, error


@contextlib.contextmanager
def _stderr_to(path: Path):
    """Send this process's stderr (file descriptor 2, inherited by the kernel) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield path
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


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
        written) when the loader skipped a bad record.
    scores : str or Path, optional
        A score store (``accordkit score --out``): every table is built from the stored
        scores without loading transcripts; drill-down pages read only the episodes they
        show. ``sources`` default to the store's inputs. Without it, the sources are
        scored here once per run, batch by batch, into the run's ``scores/`` store (memory
        bounded by the batch, not the data; inputs holding one episode twice, such as two
        checkpoints of a run, are loaded at once instead, to merge them as
        :func:`accordkit.load` does), and the notebooks read that store.

    Returns
    -------
    ReportResults
        One :class:`RunResult` per (run, notebook); failures are listed with their error and
        do not stop the others. ``.skipped`` summarises the records left out as bad.

    Raises
    ------
    SkippedRecordsError
        With ``strict=True`` when records were skipped.
    accordkit.report.outdir.ReportBusyError
        When another report is writing into ``out``.
    accordkit.report.outdir.ReportIncompleteError
        When writing failed (e.g. a full disk); ``out`` is left as it was.
    """
    from ..store import read_manifest
    from .outdir import staged_output
    from .parameters import check_parameters, report_inputs

    final_out = Path(out).resolve()
    params = dict(params or {})
    check_parameters(params)   # papermill writes them into the notebooks as code
    # a parameter file may name the inputs (source, verdicts, scores_dir): they are honoured
    inputs = report_inputs(params, sources=sources, verdicts=verdicts, scores=scores)
    sources, verdicts, scores, params = (inputs.sources, inputs.verdicts, inputs.scores,
                                         inputs.params)
    if scores is not None:
        return _report_from_store(Path(scores).resolve(), out=final_out, params=params,
                                  verdicts=verdicts, notebooks=notebooks, jobs=jobs,
                                  show_code=show_code, progress=progress, strict=strict,
                                  sources=sources)
    default_sources = sources is None or len(sources) == 0
    sources = list(SAMPLE_SOURCES if default_sources else sources)
    if verdicts is None:
        verdicts = [v for v in SAMPLE_VERDICTS if Path(v).exists()] if default_sources else []
    verdicts = [str(Path(v).resolve()) for v in verdicts]
    # named as given (a link keeps its name; the manifest puts the file it leads to beside)
    sources = [os.path.abspath(s) if Path(s).exists() else s for s in sources]
    specs = wanted_notebooks(notebooks, params)
    runs = expand_grid(params)
    with staged_output(final_out, inputs=[*sources, *verdicts]) as stage:
        first_dir = stage if len(runs) == 1 else stage / run_folder(runs[0][0])
        first = {**DEFAULT_PARAMETERS, **runs[0][1]}
        scored = _stream_scores(sources, first_dir / "scores", params=first,
                                verdicts=verdicts, jobs=jobs)
        if scored is None:
            # the same episode in several inputs (checkpoints of one run): only a load of
            # everything at once can merge them, as ak.load does
            return _report_in_memory(stage, specs, sources=sources, verdicts=verdicts,
                                     params=params, first=first, jobs=jobs,
                                     show_code=show_code, progress=progress, strict=strict)
        store, ids = scored
        skipped = store_skipped_summary(read_manifest(store), sources)
        if strict and any(e["skipped"] or e["reasons"] for e in skipped):
            raise SkippedRecordsError(skipped)
        facts = InputFacts.from_frame(ids, verdicts)
        del ids
        stores = {_key(first, _SCORING_PARAMETERS): store}

        def store_for(run_dir: Path, merged: Mapping[str, Any]) -> Path:
            key = _key(merged, _SCORING_PARAMETERS)
            if key not in stores:
                scored = _stream_scores(sources, run_dir / "scores", params=merged,
                                        verdicts=verdicts, jobs=jobs)
                if scored is None:   # this run's revision / split repeats an episode
                    ds, _ = _load_sources(sources, merged)
                    stores[key] = _score_once(ds, run_dir / "scores", params=merged,
                                              verdicts=verdicts)
                else:
                    stores[key] = scored[0]
            return stores[key]

        return _run_notebooks(stage, specs, sources=sources, verdicts=verdicts, params=params,
                              facts=facts, skipped=skipped, jobs=jobs, show_code=show_code,
                              progress=progress, store_for=store_for,
                              hashes=_manifest_hashes(read_manifest(store)))


#: Run parameters that change what is loaded, and (with the modes) the stored scores: runs
#: that share them share one dataset, or one store.
_LOAD_PARAMETERS = ("revision", "split", "metadata")
_SCORING_PARAMETERS = ("tcrr_mode", "action_mode", *_LOAD_PARAMETERS)


def _manifest_hashes(manifest: Mapping[str, Any]) -> dict[str, str]:
    """file -> sha256 of a store's inputs, as scored (provenance reads no file again)."""
    return {r["source"]: r["sha256"] for r in manifest.get("inputs", [])
            if isinstance(r.get("source"), str) and isinstance(r.get("sha256"), str)}


def _key(params: Mapping[str, Any], names: Sequence[str]) -> str:
    return json.dumps({k: params.get(k) for k in names}, sort_keys=True, default=str)


def _run_modes(params: Mapping[str, Any]) -> dict[str, Any]:
    """The scoring modes of a run's parameters."""
    modes = {"tcrr_mode": params.get("tcrr_mode", "episode"),
             "action_mode": params.get("action_mode", "best_match")}
    if params.get("shop_type_gate"):
        modes["shop_type_gate"] = True
    return modes


def _stream_scores(sources: Sequence[str], store: Path, *, params: Mapping[str, Any],
                   verdicts: Sequence[str], jobs: int) -> tuple[Path, Any] | None:
    """Score the sources batch by batch into ``store`` (the run's modes and verdicts).

    Memory is bounded by the batch size, not by the data. Returns the store and its episode
    id columns, or None (removing the store) when an episode id occurs more than once
    (merging checkpoints needs every episode at once) or when an upstream TCRR mode pools a
    source file whose episodes lie in several inputs.
    """
    import shutil

    from ..engines import score_to_store
    from ..engines.plan import expand_sources
    from ..engines.run import SplitSourceError
    from ..store import read_scores

    files = [Path(f) for f in expand_sources(sources)]
    num_proc = max(1, jobs) if _worth_workers(files) else 1
    try:
        score_to_store(list(sources), out=store, num_proc=num_proc, modes=_run_modes(params),
                       errors="skip", progress=False, verdicts=verdicts,
                       metadata=params.get("metadata"), revision=params.get("revision"),
                       split=params.get("split"))
    except SplitSourceError:
        # an upstream TCRR mode, and a source file's episodes in several shards: only a
        # load of everything at once pools them right
        shutil.rmtree(store, ignore_errors=True)
        return None
    # just scored from the sources; the report lists the inputs that failed
    try:
        ids = read_scores(store, level="episode", columns=[], check_inputs=False)
    except RepeatedEpisodesError:
        shutil.rmtree(store)
        return None
    return store, ids


#: Inputs larger than this (bytes on disk, parquet files aside) are scored by ``jobs``
#: worker processes.
_PARALLEL_SCORING_BYTES = 64 * 2**20
#: ... and so are parquet inputs of more rows than this: parquet is compressed (300,000
#: episodes of the replicated sample take 8 MB), and one process scores about 15,000
#: episodes a second, so 50,000 rows are a few seconds of work, the start-up of a worker.
_PARALLEL_SCORING_ROWS = 50_000


def _worth_workers(files: Sequence[Path]) -> bool:
    """Whether scoring ``files`` pays for worker processes (about 3 s each to start)."""
    import pyarrow.parquet as pq

    size = rows = 0
    for f in files:
        if not f.is_file():
            continue
        if f.suffix == ".parquet":
            try:
                rows += pq.ParquetFile(f).metadata.num_rows
            except Exception:  # noqa: BLE001 - the scoring run reports an unreadable file
                continue
        else:
            size += f.stat().st_size
    return size > _PARALLEL_SCORING_BYTES or rows > _PARALLEL_SCORING_ROWS


def store_skipped_summary(manifest: Mapping[str, Any],
                          sources: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per source: episodes scored, records skipped and the first reasons, from a manifest.

    With ``sources`` (as given to the report), the store's inputs (files found in them) are
    counted under the source they came from; otherwise one entry per input. An input that
    could not be read at all (or a batch of it that could not be scored) counts as one
    skipped record with the reason ``file <input>, whole input: <error>``, as a file the
    loader cannot read does: the report lists it and ``strict`` refuses it.
    """
    inputs = manifest["inputs"]
    sources = list(sources) if sources else [r["source"] for r in inputs]
    entries: dict[str, dict[str, Any]] = {
        src: {"source": src, "episodes": 0, "skipped": 0, "reasons": []} for src in sources}
    for r in inputs:
        src = _owner(r["source"], sources) or str(r["source"])
        entry = entries.setdefault(src, {"source": src, "episodes": 0, "skipped": 0,
                                         "reasons": []})
        entry["episodes"] += int(r["episodes"])
        entry["skipped"] += int(r["skipped"]) + (1 if r["error"] else 0)
        reasons = list(r["problems"]) + (
            [f"file {r['source']}, whole input: {r['error']}"] if r["error"] else [])
        entry["reasons"] += reasons[:max(0, MAX_REASONS - len(entry["reasons"]))]
    return redact_sources(list(entries.values()))


def _load_sources(sources: Sequence[str], params: Mapping[str, Any]) -> tuple[Any, Any]:
    """All sources as one dataset (duplicates merged), with a run's load options."""
    from ..load import load_with_report

    return load_with_report(list(sources), revision=params.get("revision"),
                            split=params.get("split"), errors="skip",
                            metadata=params.get("metadata"))


def _report_in_memory(stage: Path, specs: Sequence[NotebookSpec], *, sources: list[str],
                      verdicts: list[str], params: dict[str, Any], first: Mapping[str, Any],
                      jobs: int, show_code: bool, progress: bool,
                      strict: bool) -> ReportResults:
    """The report of sources loaded as one dataset (duplicates across inputs merged);
    ``first`` holds the first run's parameters (a run with other load options loads
    again)."""
    loaded: dict[str, tuple[Any, Any]] = {}

    def dataset_for(run: Mapping[str, Any]) -> tuple[Any, Any]:
        key = _key(run, _LOAD_PARAMETERS)
        if key not in loaded:
            loaded[key] = _load_sources(sources, run)
        return loaded[key]

    ds, load_report = dataset_for(first)
    skipped = skipped_summary(sources, load_report.counts, load_report.skipped)
    if strict and load_report.skipped:
        raise SkippedRecordsError(skipped)
    facts = InputFacts.from_sources(ds, verdicts)

    def store_for(run_dir: Path, merged: Mapping[str, Any]) -> Path:
        return _score_once(dataset_for(merged)[0], run_dir / "scores", params=merged,
                           verdicts=verdicts)

    return _run_notebooks(stage, specs, sources=sources, verdicts=verdicts, params=params,
                          facts=facts, skipped=skipped, jobs=jobs, show_code=show_code,
                          progress=progress, store_for=store_for)


def _report_from_store(store: Path, *, out: Path, params: dict[str, Any],
                       verdicts: Sequence[str] | None, notebooks: Sequence[str] | None,
                       jobs: int, show_code: bool, progress: bool, strict: bool,
                       sources: Sequence[str] | None) -> ReportResults:
    """``build_report(scores=...)``: the facts, skipped records and modes from the store."""
    from ..store import read_manifest, read_scores, scored_inputs
    from .outdir import staged_output

    manifest = read_manifest(store)
    sources = list(sources) if sources else [r["source"] for r in manifest["inputs"]]
    verdicts = [str(Path(v).resolve()) for v in (verdicts or [])]
    specs = wanted_notebooks(notebooks, params)
    skipped = store_skipped_summary(manifest)
    if strict and any(e["skipped"] or e["reasons"] for e in skipped):
        raise SkippedRecordsError(skipped)
    # the report says what became of the inputs (its index page, the warning below); a
    # store holding an episode twice is refused here (RepeatedEpisodesError)
    episodes = read_scores(store, level="episode", columns=[], check_inputs=False)
    facts = InputFacts.from_frame(episodes, verdicts)
    del episodes
    # the modes the store was scored with (shop_type_gate too): the tables are theirs
    modes = {k: v for k, v in manifest.get("modes", {}).items() if k in SCORE_OPTIONS}
    conflicts = store_modes_conflict(modes, params)
    if conflicts:
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
    params = {**params, **modes, "scores_dir": str(store)}
    scored = scored_inputs(manifest)
    changed = [r["source"] for r in scored if r.get("changed")]
    if changed:
        warnings.warn(
            f"{len(changed)} input(s) changed since the score store was scored "
            f"({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}): the tables are "
            "those of the files as scored (their sha256 is in provenance.json, "
            "score_store.inputs), while drill-down pages read the files as they are now; "
            "score them again for tables of the files as they are", StoreChangedWarning,
            stacklevel=3)
    with staged_output(out, inputs=[store, *sources, *verdicts]) as stage:
        return _run_notebooks(stage, specs, sources=sources, verdicts=verdicts, params=params,
                              facts=facts, skipped=skipped, jobs=jobs, show_code=show_code,
                              progress=progress,
                              score_store={"path": str(store), "modes": dict(
                                  manifest.get("modes", {})), "inputs": scored},
                              hashes=_manifest_hashes(manifest))


def wanted_notebooks(notebooks: Sequence[str] | None,
                     params: Mapping[str, Any]) -> list[NotebookSpec]:
    """The notebooks a run asks for (``--notebooks``, else a parameter file's ``notebooks``,
    else all); ``ValueError`` naming any the report does not have."""
    wanted = list(notebooks or params.get("notebooks") or [n.name for n in NOTEBOOKS])
    unknown = set(wanted) - {n.name for n in NOTEBOOKS}
    if unknown:
        raise ValueError(f"unknown notebook(s) {sorted(unknown)}; "
                         f"known: {[n.name for n in NOTEBOOKS]}")
    return [n for n in NOTEBOOKS if n.name in wanted]


def _score_once(ds: Any, store: Path, *, params: Mapping[str, Any],
                verdicts: Sequence[str]) -> Path:
    """Score the loaded episodes once (the run's modes and stored verdicts) into a store."""
    from ..engines.run import verdict_table, write_scored
    from ..store import InputRecord, write_manifest

    modes = _run_modes(params)
    write_scored(ds, store, input_index=0, batch_index=0, modes=modes,
                 verdicts=verdict_table(list(verdicts)))
    write_manifest(store, [InputRecord(0, "(the report's sources, loaded as one dataset)",
                                       episodes=len(ds))], modes=modes, engine="report",
                   extra={"verdicts": list(verdicts)})
    return store


def _page_context(spec: NotebookSpec, specs: Sequence[NotebookSpec], run_dir: Path, *,
                  multi: bool) -> dict[str, Any]:
    """Where a notebook's page sits in its report: the index and the run's other pages
    (for its header), and the run's provenance line (see :func:`~.pages.finish_page`)."""
    from .provenance import provenance_line

    prov_path = run_dir / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.is_file() else {}
    index = "../index.html" if multi else "index.html"
    return {"pages": [(index, "Report index"), *[(f"{s.name}.html", s.nav_title) for s in specs]],
            "current": f"{spec.name}.html",
            "provenance": provenance_line(prov) if prov else None,
            "provenance_href": "provenance.json" if prov else None}


def _run_notebooks(out: Path, specs: Sequence[NotebookSpec], *, sources: list[str],
                   verdicts: list[str], params: dict[str, Any], facts: InputFacts,
                   skipped: list[dict[str, Any]], jobs: int, show_code: bool,
                   progress: bool, store_for: Any = None,
                   score_store: Mapping[str, Any] | None = None,
                   hashes: Mapping[str, str] | None = None) -> ReportResults:
    """Run every (run, notebook) into the (staging) folder ``out`` and write the index.

    ``store_for(run_dir, parameters)`` gives the score store a run's notebooks read (unless
    the parameters name one already: ``scores_dir``); ``hashes`` are the sources' file
    digests its manifest holds (taken for provenance, not computed again).
    """
    from tqdm.auto import tqdm

    from .index import write_index
    from .outdir import write_text_checked
    from .parameters import check_plain

    runs = expand_grid(params)
    sources = redact_sources(list(sources))   # as every file of the report names them
    results: list[RunResult] = []
    tasks: list[tuple[NotebookSpec, str, dict[str, Any], Path]] = []
    for run_name, run_params in runs:
        run_dir = out if len(runs) == 1 else out / run_folder(run_name)
        merged = {**DEFAULT_PARAMETERS, **run_params}
        prov = collect_provenance(sources=sources, parameters=merged,
                                  revision=merged.get("revision"), verdicts=verdicts,
                                  hashes=hashes)
        prov["skipped_records"] = skipped
        if score_store is not None:   # read from a store: its inputs as they were scored
            prov["score_store"] = dict(score_store)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_text_checked(run_dir / "provenance.json", json.dumps(prov, indent=1))
        if store_for is not None and not merged.get("scores_dir"):
            # scored once here; every notebook of the run reads the same stored scores
            merged = {**merged, "scores_dir": str(store_for(run_dir, merged))}
        for spec in specs:
            reason = skip_reason(spec, facts)
            if reason:
                results.append(RunResult(spec.name, spec.title, run_name, "skipped", reason))
                continue
            tasks.append((spec, run_name, merged, run_dir))
    futures = {}
    pool = ProcessPoolExecutor(max_workers=max(1, jobs))
    try:
        for spec, run_name, merged, run_dir in tasks:
            page = _page_context(spec, [t[0] for t in tasks if t[1] == run_name],
                                 run_dir, multi=len(runs) > 1)
            nb_dir = run_dir / "notebooks"
            nb_dir.mkdir(exist_ok=True)
            parameters = notebook_parameters(spec, {
                **merged, "source": sources, "verdicts": verdicts, "out_dir": str(run_dir),
                "provenance_path": str(run_dir / "provenance.json")})
            for name, value in parameters.items():   # they become code in the notebook
                check_plain(value, name)
            out_ipynb = nb_dir / f"{spec.name}.ipynb"
            out_html = run_dir / f"{spec.name}.html"
            fut = pool.submit(_execute, spec.name, str(spec.path), str(out_ipynb),
                              str(out_html), parameters, str(run_dir), show_code,
                              kernel_threads(jobs), page)
            futures[fut] = (spec, run_name, run_dir, out_ipynb, out_html, time.perf_counter())
        bar = tqdm(total=len(futures), desc="notebooks", unit="nb", disable=not progress)
        for fut in as_completed(futures):
            spec, run_name, run_dir, out_ipynb, out_html, started = futures[fut]
            try:
                _, error = fut.result()
            except Exception:  # noqa: BLE001 - a crashed worker is one failed notebook
                error = traceback.format_exc(limit=2)
            outputs = sorted(str(p.relative_to(run_dir)) for kind in ("tables", "figures")
                             for p in (run_dir / kind).glob(f"{spec.name}__*")
                             if p.suffix in (".csv", ".md", ".tex", ".png", ".svg"))
            results.append(RunResult(
                spec.name, spec.title, run_name, "failed" if error else "ok", error,
                round(time.perf_counter() - started, 1),
                str(out_ipynb.relative_to(run_dir)) if out_ipynb.exists() else None,
                str(out_html.relative_to(run_dir)) if out_html.exists() else None, outputs))
            bar.set_postfix_str(f"{spec.name}: {'FAILED' if error else 'ok'}")
            bar.update()
        bar.close()
    except BaseException:
        # interrupted (Ctrl-C, or SIGTERM, see accordkit.cli): stop the queued notebooks
        # and the running kernels now; the staged report is then discarded
        stop_pool(pool)
        raise
    pool.shutdown()
    order = {(r, n.name): i for i, (r, n) in
             enumerate(itertools.product([r for r, _ in runs], NOTEBOOKS))}
    results.sort(key=lambda r: order.get((r.run, r.notebook), 0))
    report = ReportResults(results, skipped=skipped)
    _, headline = write_index(out, results, runs=[r for r, _ in runs], sources=sources,
                              verdicts=verdicts, facts=facts, skipped=skipped)
    write_text_checked(out / "results.json", json.dumps(
        {"notebooks": [asdict(r) for r in results], "headline": headline,
         "skipped_records": skipped}, indent=1))
    return report

