"""One notebook of a report, executed in a worker process."""

from __future__ import annotations

import os


def test_each_kernel_gets_its_share_of_the_cores_for_blas(tmp_path, monkeypatch):
    """The kernel inherits the worker's environment: the BLAS thread caps are set there,
    before papermill starts it, and a cap the user chose is kept."""
    import papermill as pm

    from accordkit.report import execute

    seen = {}

    def fake_execute(notebook, out_ipynb, **kwargs):
        seen.update({name: os.environ.get(name) for name in execute.BLAS_THREADS})

    monkeypatch.setattr(pm, "execute_notebook", fake_execute)
    for name in execute.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    out = tmp_path / "nb.ipynb"
    execute.execute_notebook("x", "x.ipynb", str(out), str(tmp_path / "x.html"), {},
                             str(tmp_path), False, execute.kernel_threads(2, cpus=2))
    assert seen == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "3", "OMP_NUM_THREADS": "1"}
    assert execute.kernel_threads(4, cpus=2) == 1 and execute.kernel_threads(1, cpus=8) == 8
