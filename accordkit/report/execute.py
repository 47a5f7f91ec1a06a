"""One notebook of a report: run with papermill in a worker process, exported to HTML."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["execute_notebook", "kernel_threads", "BLAS_THREADS"]

#: Thread-count variables of the BLAS libraries numpy may be built with (OpenBLAS, MKL,
#: OpenMP builds), set for each kernel unless the user set them.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


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


def execute_notebook(spec_name: str, notebook: str, out_ipynb: str, out_html: str,
                     parameters: dict[str, Any], cwd: str, show_code: bool,
                     threads: int | None = None,
                     page: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """Worker: run one notebook with papermill, then export it to HTML; ``(name, error)``.

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
        for name in BLAS_THREADS:
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
