"""Every (run, notebook) of a report executed into its folder, then its index and results."""

from __future__ import annotations

import itertools
import json
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._internal.pool import stop_pool
from .._internal.redact import redact_sources
from .execute import execute_notebook, kernel_threads
from .filenames import run_folder
from .grid import DEFAULT_PARAMETERS, expand_grid
from .notebooks import NOTEBOOKS, InputFacts, NotebookSpec, notebook_parameters, skip_reason
from .provenance import collect_provenance, judges_of

__all__ = ["RunResult", "ReportResults", "run_notebooks", "empty_selection"]


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
    """The :class:`RunResult` of every notebook run, plus what the loader skipped and what
    scoring left out.

    ``skipped`` is :func:`~accordkit.report.skipped.store_skipped_summary` of the store
    (one entry per source); ``left_out`` is :func:`~accordkit.report.skipped.
    left_out_summary` (one entry per source with an episode left out of a level).
    """

    def __init__(self, results: Sequence[RunResult] = (), *,
                 skipped: Sequence[dict[str, Any]] = (),
                 left_out: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(results)
        self.skipped = list(skipped)
        self.left_out = list(left_out)

    @property
    def n_left_out(self) -> int:
        """Episodes left out of a level at scoring (their other scores stand)."""
        return sum(entry["left_out"] for entry in self.left_out)

    @property
    def n_skipped(self) -> int:
        """Records (or whole files) left out of the report as bad."""
        return sum(entry["skipped"] for entry in self.skipped)


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def _shown(values: set[str], limit: int = 20) -> str:
    names = sorted(values)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(repr(n) for n in names[:limit]) + more


def empty_selection(params: Mapping[str, Any], facts: InputFacts) -> str | None:
    """Why a run's ``models``/``domains`` filter selects no episode (naming the values
    that exist), or None when it selects some or there is no filter.

    Examples
    --------
    >>> facts = InputFacts(2, frozenset({"tau2"}), {"tau2": 1}, frozenset(),
    ...                    frozenset({("gpt-4o", "airline"), ("gpt-4o", "retail")}))
    >>> empty_selection({"models": ["gpt-4o"], "domains": ["retail"]}, facts) is None
    True
    >>> print(empty_selection({"models": ["gpt4o"]}, facts))
    models ['gpt4o'] select no episode; the episodes' agent models are 'gpt-4o' (domains: 'airline', 'retail')
    """
    models, domains = _listed(params.get("models")), _listed(params.get("domains"))
    if not (models or domains) or not facts.model_domains:
        return None
    if any((not models or m in models) and (not domains or d in domains)
           for m, d in facts.model_domains):
        return None
    asked = " and ".join(f"{what} {values!r}" for what, values in
                         (("models", models), ("domains", domains)) if values)
    return (f"{asked} select no episode; the episodes' agent models are "
            f"{_shown({m for m, _ in facts.model_domains})} (domains: "
            f"{_shown({d for _, d in facts.model_domains})})")


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


def run_notebooks(out: Path, specs: Sequence[NotebookSpec], *, sources: list[str],
                  verdicts: list[str], params: dict[str, Any], facts: InputFacts,
                  skipped: list[dict[str, Any]], jobs: int, show_code: bool,
                  progress: bool, store_for: Callable[[Path, Mapping[str, Any]], Path],
                  hashes: Mapping[str, str],
                  score_store: Mapping[str, Any] | None = None,
                  left_out: Sequence[dict[str, Any]] = ()) -> ReportResults:
    """Run every (run, notebook) into the (staging) folder ``out`` and write the index.

    ``store_for(run_dir, parameters)`` gives the score store a run's notebooks read;
    ``hashes`` are the sources' file digests its manifest holds (provenance reads no source
    file); ``score_store`` describes a store the report was given (its inputs as scored);
    ``skipped`` and ``left_out`` say what was left out at load and at scoring (the index,
    ``results.json`` and every ``provenance.json`` list both).
    """
    from .index import write_index
    from .outdir import write_text_checked

    runs = expand_grid(params)
    sources = redact_sources(list(sources))   # as every file of the report names them
    judges = judges_of(verdicts)              # each verdict file hashed once
    results: list[RunResult] = []
    tasks: list[tuple[NotebookSpec, str, dict[str, Any], Path]] = []
    for run_name, run_params in runs:
        run_dir = out if len(runs) == 1 else out / run_folder(run_name)
        merged = {**DEFAULT_PARAMETERS, **run_params}
        prov = collect_provenance(sources=sources, parameters=merged,
                                  revision=merged.get("revision"), verdicts=verdicts,
                                  hashes=hashes, hash_files=False, judges=judges)
        prov["skipped_records"] = skipped
        prov["left_out_at_scoring"] = list(left_out)
        if score_store is not None:   # read from a store: its inputs as they were scored
            prov["score_store"] = dict(score_store)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_text_checked(run_dir / "provenance.json", json.dumps(prov, indent=1))
        # every notebook of the run reads the same stored scores
        merged = {**merged, "scores_dir": str(store_for(run_dir, merged))}
        empty = empty_selection(merged, facts)
        for spec in specs:
            reason = skip_reason(spec, facts)
            if empty and not reason:     # a filter that selects nothing is an error
                results.append(RunResult(spec.name, spec.title, run_name, "failed", empty))
                continue
            if reason:
                results.append(RunResult(spec.name, spec.title, run_name, "skipped", reason))
                continue
            tasks.append((spec, run_name, merged, run_dir))
    results += _execute_all(tasks, sources=sources, verdicts=verdicts, jobs=jobs,
                            show_code=show_code, progress=progress, multi=len(runs) > 1)
    order = {(r, n.name): i for i, (r, n) in
             enumerate(itertools.product([r for r, _ in runs], NOTEBOOKS))}
    results.sort(key=lambda r: order.get((r.run, r.notebook), 0))
    report = ReportResults(results, skipped=skipped, left_out=left_out)
    _, headline = write_index(out, results, runs=[r for r, _ in runs], sources=sources,
                              verdicts=verdicts, facts=facts, skipped=skipped,
                              left_out=left_out)
    write_text_checked(out / "results.json", json.dumps(
        {"notebooks": [asdict(r) for r in results], "headline": headline,
         "skipped_records": skipped, "left_out_at_scoring": list(left_out)}, indent=1))
    return report


def _execute_all(tasks: Sequence[tuple[NotebookSpec, str, dict[str, Any], Path]], *,
                 sources: list[str], verdicts: list[str], jobs: int, show_code: bool,
                 progress: bool, multi: bool) -> list[RunResult]:
    """Execute the notebooks of ``tasks`` in ``jobs`` worker processes; one result each."""
    from tqdm.auto import tqdm

    from .parameters import check_plain

    results: list[RunResult] = []
    futures = {}
    pool = ProcessPoolExecutor(max_workers=max(1, jobs))
    try:
        for spec, run_name, merged, run_dir in tasks:
            page = _page_context(spec, [t[0] for t in tasks if t[1] == run_name],
                                 run_dir, multi=multi)
            nb_dir = run_dir / "notebooks"
            nb_dir.mkdir(exist_ok=True)
            parameters = notebook_parameters(spec, {
                **merged, "source": sources, "verdicts": verdicts, "out_dir": str(run_dir),
                "provenance_path": str(run_dir / "provenance.json")})
            for name, value in parameters.items():   # they become code in the notebook
                check_plain(value, name)
            out_ipynb = nb_dir / f"{spec.name}.ipynb"
            out_html = run_dir / f"{spec.name}.html"
            fut = pool.submit(execute_notebook, spec.name, str(spec.path), str(out_ipynb),
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
    return results
