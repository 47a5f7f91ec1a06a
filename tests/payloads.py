"""Hostile inputs for the security tests: result files whose every name is a script.

Each payload, if it ran, would push its id onto ``window.__akx`` in the page that shows
it; a test looks there (and at the DOM) to see that none did. The names are the places the
red team found unescaped (agent model, user implementation, domain, task ids, termination
reason, tool names), plus the agent method and a double quote that ends an attribute.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

#: The global a payload that runs fills.
MARK = "__akx"


def payload(tag: str) -> str:
    """A name that runs script ``tag`` three ways if it is rendered as markup: an image
    whose error handler runs, a script element, and an attribute broken out of by ``"``."""
    push = f"(window.{MARK}=window.{MARK}||[]).push('{tag}')"
    return (f'{tag}<img src=x onerror="{push}"><script>{push}</script>'
            f'"><svg onload="{push}">')


#: A domain name that is a script, and a path out of any folder, and has a dot that
#: ``Path.with_suffix`` would take for a suffix.
HOSTILE_DOMAIN = payload("domain") + "/../../escaped/air.line"


def tau2_payload_files(folder: Path, template: Path) -> list[Path]:
    """Two tau2 result files (two agent configurations on the same tasks) built from the
    real ``template`` file with payloads in every name a report shows."""
    data = json.loads(Path(template).read_text())
    ids = {t["id"]: payload(f"task{i}") for i, t in enumerate(data["tasks"])}
    for task in data["tasks"]:
        task["id"] = ids[task["id"]]
    for i, sim in enumerate(data["simulations"]):
        sim["task_id"] = ids[sim["task_id"]]
        if i % 3 == 0:
            sim["termination_reason"] = payload("termination")
        for msg in sim["messages"]:
            for call in msg.get("tool_calls") or ():
                call["name"] = payload("tool")
    data["info"]["environment_info"]["domain_name"] = HOSTILE_DOMAIN
    data["info"]["user_info"]["implementation"] = payload("userimpl")
    data["info"]["user_info"]["llm"] = payload("userllm")
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in (1, 2):
        run = copy.deepcopy(data)
        run["info"]["agent_info"]["llm"] = payload(f"agent{k}")
        run["info"]["agent_info"]["implementation"] = payload(f"method{k}")
        for sim in run["simulations"]:
            sim["id"] = f"{sim['id']}-run{k}"
        path = folder / f"payload_run{k}.json"
        path.write_text(json.dumps(run))
        paths.append(path)
    return paths


def accord_payload_file(folder: Path, sample: Path) -> Path:
    """The embedded AcCoRD sample's shop episodes as canonical JSONL, with payloads as the
    agent model and method."""
    import accordkit as ak

    ds = ak.load(sample / "accord", config="shop")
    ds = ds.map(lambda ep: {"agent_model": payload("accordmodel") + ep["agent_model"],
                            "method": payload("accordmethod") + str(ep["method"])})
    folder.mkdir(parents=True, exist_ok=True)
    return ak.save(ds, folder / "payload_accord.jsonl")


def hostile_report(folder: Path, *, template: Path, sample: Path) -> Path:
    """A whole report (every notebook that applies) built from the payload files."""
    from accordkit.report.runner import build_report

    inputs = folder / "inputs"
    sources = [*tau2_payload_files(inputs, template), accord_payload_file(inputs, sample)]
    out = folder / "work" / "report"
    out.parent.mkdir()
    build_report([str(p) for p in sources], out=out, params={"n_resamples": 200, "seed": 1},
                 jobs=2, progress=False)
    return out
