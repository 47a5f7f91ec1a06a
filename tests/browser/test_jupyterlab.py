"""`make lab` as a researcher uses it: the server starts, the notebooks are in the file
browser, and a notebook opened in JupyterLab runs top to bottom with its defaults.

The notebooks and the sample data are copied to a temporary folder first, so JupyterLab's
autosave can never touch the files in the repository.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "usersim_unit_tests.ipynb"     # the quickest notebook with figures and tables


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sample_dir):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (REPO / ".venv" / "bin" / "jupyter").exists():
        pytest.skip("no .venv with JupyterLab in the checkout (run `make setup`)")
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    shutil.copytree(sample_dir, root / "data" / "sample")
    port, token = _free_port(), secrets.token_hex(16)
    args = (f"--port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token} "
            "--LabApp.expose_app_in_browser=True --ServerApp.open_browser=False")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
           "JUPYTER_RUNTIME_DIR": str(root / ".runtime")}
    log = open(root / "lab.log", "wb")  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(REPO), "lab",
         f"LAB_DIR={root / 'notebooks'}", f"LAB_ARGS={args}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("JupyterLab did not start:\n"
                            + (root / "lab.log").read_text(errors="replace")[-3000:])
            time.sleep(0.5)
        yield base, token, root
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    assert proc.poll() is not None, "the JupyterLab server is still running"


def test_lab_lists_the_notebooks_and_runs_one_top_to_bottom(lab, visit, tmp_path):
    base, token, root = lab
    v = visit(f"{base}/lab/tree/{NOTEBOOK}?token={token}", viewport=(1400, 900))
    page = v.page
    page.wait_for_selector(".jp-DirListing-itemText", timeout=60_000)
    listed = set(page.locator(".jp-DirListing-itemText").all_inner_texts())
    expected = {p.name for p in (root / "notebooks").glob("*.ipynb")}
    assert expected and expected <= listed
    # the notebook is open with a kernel; run every cell as a user would (Run > Run All)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
        timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """() => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            const code = nb.widgets.filter(c => c.model.type === 'code');
            return code.length > 0 && code.every(c => c.model.executionCount !== null)
                && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
                     .status === 'idle';
        }""", timeout=240_000, polling=1000)
    errors = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
              .filter(c => c.model.type === 'code')
              .flatMap(c => c.model.outputs.toJSON())
              .filter(o => o.output_type === 'error')
              .map(o => o.ename + ': ' + o.evalue)""")
    assert errors == []
    n_tables = page.locator(".jp-OutputArea-output table").count()
    assert n_tables >= 2, "the notebook shows its tables in the lab"
    assert v.screenshot(tmp_path / "jupyterlab.png").stat().st_size > 0
