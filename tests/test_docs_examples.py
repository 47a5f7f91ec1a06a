"""Every fenced example of README.md and docs/ runs (issue 36, item 6).

Each fenced block says its language. ``bash`` and ``console`` blocks (the lines after
``$ ``) run in a shell, ``python`` blocks in a fresh interpreter; ``text``, ``yaml`` and
``json`` blocks are shown, not run. The blocks of one document share a working folder that
looks like a clone in use (``data/sample``, ``.venv``, ``notebooks/``), with the result
files the examples name (``runs/``, ``run.json``, ``path/to/simulations/`` ...) copied
from the released fixtures; they run in the order of the document.

An HTML comment right before a block says how it runs, and a reader of the rendered page
does not see it:

``<!-- example: skip REASON -->``
    not run, with the reason (an example that needs the network: a hub id, an LLM
    provider, a Ray cluster), reported as a skip;
``<!-- example: file NAME -->``
    the block is the content of the file NAME in the working folder (a parameter file);
``<!-- example: cwd DIR -->``
    run in DIR of the working folder (``notebooks``: where ``make lab`` starts);
``<!-- example: in-repo -->``
    run in the clone itself (``make``), its report written to the working folder (OUT);
``<!-- example: replace OLD => NEW -->``
    run with OLD replaced by NEW: a million episodes become a few thousand, ``/data/``
    a folder of the working folder, a report gets 200 resamples instead of 10,000
    (``accordkit report => accordkit report --set n_resamples=200``).

The examples that run start a shell or an interpreter: tests/conftest.py marks them ``cli``
(``make test-all``); the checks of the directives run in the fast default.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import FIXTURES, REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN = ("bash", "console", "python")
SHOWN = ("text", "yaml", "json")
_FENCE = re.compile(r"^\s*```(\S*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!-- example: (\S+)\s*(.*?)\s*-->\s*$")

#: The result files the examples name, in the working folder -> the fixture they copy.
NAMED_FILES = {
    "path/to/results_a.json": "agentchangebench/banking_gpt-4.1_13sims_tasks-trimmed.json",
    "path/to/results_b.json": "agentchangebench/banking_gpt-4.1_legacy-reward_meta-tags_7sims.json",
    "path/to/simulations/airline.json": "tau2/airline_grok-3_4tasks_4trials.json",
    "path/to/simulations/telecom.json": "tau2/telecom_grok-3_5tasks_1trial.json",
    "path/to/tau2/simulations/airline.json": "tau2/airline_grok-3_4tasks_4trials.json",
    "path/to/tau2/simulations/telecom.json": "tau2/telecom_grok-3_5tasks_1trial.json",
    "runs/airline.json": "tau2/airline_grok-3_4tasks_4trials.json",
    "runs/telecom.json": "tau2/telecom_grok-3_5tasks_1trial.json",
    "run.json": "agentchangebench/banking_gpt-4.1_13sims_tasks-trimmed.json",
    "run_checkpoint.json": "agentchangebench/banking_gpt-4.1_13sims_tasks-trimmed.json",
    "results.json": "taubench/airline_gpt-4o_3tasks_4trials.json",
    "gpt-4o-airline.json": "taubench/airline_gpt-4o_3tasks_4trials.json",
    "tool-calling-gpt-4o-0.0_range_0-50_user-gpt-4o-llm_0614120102.json":
        "taubench/airline_gpt-4o_3tasks_4trials.json",
}


#: Result files of two agent configurations on the same tasks, made from one real run:
#: working-folder name -> (fixture, agent model written into it).
TWO_CONFIGURATIONS = {
    "results/airline_gpt-4.1.json": ("tau2/airline_grok-3_4tasks_4trials.json", "gpt-4.1"),
    "results/airline_claude.json": ("tau2/airline_grok-3_4tasks_4trials.json", "claude"),
}


def _as_configuration(source: Path, target: Path, agent: str) -> None:
    """``source`` run again by ``agent``: its agent model and simulation ids changed."""
    import json

    data = json.loads(source.read_text("utf-8"))
    data["info"]["agent_info"]["llm"] = agent
    for sim in data["simulations"]:
        sim["id"] = f"{sim['id']}-{agent}"
    target.write_text(json.dumps(data), encoding="utf-8")


@dataclass
class Example:
    """One fenced block of a document and how it runs."""

    doc: Path
    line: int
    lang: str
    code: str
    directives: dict[str, list[str]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}"

    def runnable_code(self) -> str:
        code = self.code
        for rule in self.directives.get("replace", []):
            old, _, new = rule.partition(" => ")
            code = code.replace(old, new)
        return code


def examples(doc: Path) -> list[Example]:
    """The fenced blocks of ``doc``, with the directives right before each."""
    out, lines = [], doc.read_text("utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        directives: dict[str, list[str]] = {}
        j = i - 1
        while j >= 0 and _DIRECTIVE.match(lines[j]):
            name, value = _DIRECTIVE.match(lines[j]).groups()
            directives.setdefault(name, []).insert(0, value)
            j -= 1
        end = i + 1
        while end < len(lines) and not lines[end].lstrip().startswith("```"):
            end += 1
        code = textwrap.dedent("\n".join(lines[i + 1:end]))   # a block inside a list item
        out.append(Example(doc, i + 1, match.group(1), code + "\n", directives))
        i = end + 1
    return out


ALL = [ex for doc in DOCS for ex in examples(doc)]


def test_the_docs_have_examples_and_each_says_its_language():
    assert len([ex for ex in ALL if ex.lang in RUN]) >= 20
    unnamed = [ex.id for ex in ALL if ex.lang not in (*RUN, *SHOWN)]
    assert unnamed == [], f"fenced blocks without a known language: {unnamed}"


def test_every_report_example_runs_with_few_resamples():
    """A report an example builds uses 200 resamples, not the default 10,000 (issue 42)."""
    slow = [ex.id for ex in ALL if ex.lang in RUN and not ex.directives.get("skip")
            and ("accordkit report" in ex.code or "make report" in ex.code)
            and "n_resamples=200" not in ex.runnable_code()]
    assert slow == []


def test_every_skip_says_why_and_every_directive_is_known():
    known = {"skip", "file", "cwd", "in-repo", "replace"}
    for ex in ALL:
        assert set(ex.directives) <= known, (ex.id, ex.directives)
        for reason in ex.directives.get("skip", []):
            assert len(reason.split()) >= 3, f"{ex.id}: say why it is skipped"
        for rule in ex.directives.get("replace", []):
            assert " => " in rule, f"{ex.id}: replace OLD => NEW"


def _console_commands(code: str) -> str:
    """The commands of a console block: each ``$ `` line and its continuation lines."""
    commands, taking = [], False
    for line in code.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
            taking = line.endswith("\\")
        elif taking:
            commands.append(line)
            taking = line.endswith("\\")
    return "\n".join(commands) + "\n"


_WORKSPACES: dict[Path, Path] = {}


def _workspace(doc: Path, tmp_path_factory) -> Path:
    """The working folder the blocks of ``doc`` share (made once per document)."""
    if doc in _WORKSPACES:
        return _WORKSPACES[doc]
    work = tmp_path_factory.mktemp(f"docs_{doc.stem}")
    (work / "data").mkdir()
    (work / "data" / "sample").symlink_to(REPO / "data" / "sample")
    (work / ".venv").symlink_to(REPO / ".venv")
    (work / "notebooks").mkdir()
    for name, fixture in NAMED_FILES.items():
        if (FIXTURES / fixture).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(FIXTURES / fixture, work / name)
    for name, (fixture, agent) in TWO_CONFIGURATIONS.items():
        if (FIXTURES / fixture).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            _as_configuration(FIXTURES / fixture, work / name, agent)
    for ex in examples(doc):
        for name in ex.directives.get("file", []):
            (work / name).write_text(ex.code, encoding="utf-8")
    _WORKSPACES[doc] = work
    return work


def _missing_fixtures(code: str, work: Path) -> list[str]:
    names = {name.split("/")[0] if name.startswith(("runs/", "path/")) else name
             for name in [*NAMED_FILES, *TWO_CONFIGURATIONS]}
    return sorted(n for n in names if n in code and not (work / n).exists())


@pytest.mark.parametrize("ex", [ex for ex in ALL if ex.lang in RUN], ids=lambda ex: ex.id)
def test_example_runs(ex, tmp_path_factory):
    if ex.directives.get("skip"):
        pytest.skip(ex.directives["skip"][0])
    if ex.directives.get("file"):
        pytest.skip("a file the other examples read")
    work = _workspace(ex.doc, tmp_path_factory)
    code = ex.runnable_code()
    missing = _missing_fixtures(code, work)
    if missing:
        pytest.skip(f"released fixture files not found at {FIXTURES} for {missing} "
                    "(set ACCORDKIT_SHARED to the folder holding fixtures/)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"PATH": f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                "HF_HUB_OFFLINE": "1", "HF_HOME": str(work / ".cache" / "huggingface"),
                "ACCORDKIT_CACHE_DIR": str(work / ".cache" / "accordkit"),
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MPLBACKEND": "Agg",
                "OUT": str(work / "reports")})
    cwd = REPO if "in-repo" in ex.directives else work / ex.directives.get("cwd", ["."])[0]
    if ex.lang == "python":
        script = work / f"_example_{ex.line}.py"
        script.write_text(code, encoding="utf-8")
        args = [str(REPO / ".venv" / "bin" / "python"), str(script)]
    else:
        body = _console_commands(code) if ex.lang == "console" else code
        args = ["bash", "-e", "-o", "pipefail", "-c", body]
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, (f"{ex.id} ({ex.lang}) exited {done.returncode}\n--- code\n"
                                  f"{code}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n"
                                  f"{done.stderr[-3000:]}")
