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
    # every cell's output in the DOM at once (JupyterLab 4 renders only cells near the
    # viewport), so a test sees all a notebook shows
    settings = root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
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


_HOSTILE_CELLS = [
    "import accordkit as ak\n"
    "from accordkit.report.outputs import ReportOutputs\n"
    "ds = ak.load(['../hostile/payload_run1.json', '../hostile/payload_run2.json'])\n"
    "episodes = ak.score(ds)\n"
    "out = ReportOutputs('../hostile_out', 'hostile')",
    "out.frame(episodes.head(20), 'episodes', caption=episodes['agent_model'].iloc[0])",
    "summary = ak.summarize(episodes, ['reward'], by=['agent_model', 'domain'],\n"
    "                       n_resamples=100, seed=0)\n"
    "out.table(summary, 'reward', rows=['agent_model', 'domain'], columns='metric')",
    "ak.show(summary, rows=['agent_model', 'domain'])",
    "ak.show(ds[0])",
    "episodes.head(5)",
]


def test_outputs_of_hostile_names_run_nothing_in_the_lab(lab, visit, tau2_dir):
    """The red team's route to the kernel: names that are scripts, shown live in JupyterLab
    (where a notebook's own outputs are trusted). Every output is run, and no payload ran."""
    import nbformat

    from tests.payloads import MARK, tau2_payload_files

    base, token, root = lab
    tau2_payload_files(root / "hostile", tau2_dir / "airline_grok-3_4tasks_4trials.json")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in _HOSTILE_CELLS]
    nbformat.write(nb, root / "notebooks" / "hostile.ipynb")
    # a workspace of its own: the lab would otherwise restore the notebook an earlier test
    # left open, and make it the current one
    v = visit(f"{base}/lab/workspaces/hostile/tree/hostile.ipynb?token={token}&reset",
              viewport=(1400, 900))
    page = v.page
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.context"
        " && window.jupyterapp.shell.currentWidget.context.path.endsWith('hostile.ipynb')"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
        timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """() => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            return nb.widgets.every(c => c.model.executionCount !== null)
                && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
                     .status === 'idle';
        }""", timeout=420_000, polling=1000)
    page.wait_for_timeout(1000)
    errors = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
              .flatMap(c => c.model.outputs.toJSON())
              .filter(o => o.output_type === 'error')
              .map(o => o.ename + ': ' + o.evalue)""")
    assert errors == []
    # bring every cell into view once (JupyterLab renders cells near the viewport only)
    page.evaluate("""async () => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        for (let i = 0; i < nb.widgets.length; i++) {
            await nb.scrollToItem(i);
            await new Promise(r => setTimeout(r, 300));
        }
    }""")
    n_tables = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
              .map(c => c.node.querySelectorAll('.jp-OutputArea-output table').length)
              .reduce((a, b) => a + b, 0)""")
    assert n_tables >= 4
    assert page.evaluate(f"() => window.{MARK} === undefined")
    handlers = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
              .flatMap(c => Array.from(c.node.querySelectorAll('.jp-OutputArea-output *')))
              .flatMap(e => Array.from(e.attributes).filter(a => a.name.startsWith('on'))
              .map(a => e.tagName + ' ' + a.name))""")
    assert handlers == []
    shown = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
              .flatMap(c => Array.from(c.node.querySelectorAll('.jp-OutputArea-output')))
              .map(o => o.textContent).join(' ')""")
    assert "onerror=" in shown          # the names are there, as text
