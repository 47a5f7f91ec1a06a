"""``index.html``: one page linking every notebook, table and figure of a report."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from .notebooks import NOTEBOOKS, InputFacts
from .outdir import write_text_checked
from .provenance import provenance_line

__all__ = ["write_index"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:60rem;
margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem} .sub{color:#666;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1rem 0} td,th{border-bottom:1px solid #ddd;
padding:.4rem .5rem;text-align:left;vertical-align:top} th{background:#f5f5f5}
.ok{color:#176f2c;font-weight:600} .failed{color:#b00020;font-weight:600}
.skipped{color:#8a6d00;font-weight:600} code{background:#f3f3f3;padding:0 .2rem}
.files a{margin-right:.6rem;white-space:nowrap} details{margin:.3rem 0}
"""


def _link(href: str, text: str) -> str:
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def write_index(out: Path, results: Sequence, *, runs: Sequence[str], sources: Sequence[str],
                verdicts: Sequence[str], facts: InputFacts,
                skipped: Sequence[dict] = ()) -> Path:
    """Write ``out/index.html`` for a finished report and return its path."""
    descriptions = {n.name: n.description for n in NOTEBOOKS}
    multi = len(runs) > 1
    rows = []
    for r in results:
        prefix = f"{r.run}/" if multi else ""
        name = _link(prefix + r.html, r.title) if r.html else html.escape(r.title)
        files = " ".join(_link(prefix + f, Path(f).name) for f in r.outputs)
        if r.ipynb:
            files = _link(prefix + r.ipynb, "notebook (.ipynb)") + " " + files
        detail = html.escape(r.reason) if r.reason else ""
        rows.append(
            f"<tr><td>{name}<br><small>{html.escape(descriptions.get(r.notebook, ''))}"
            f"</small></td>{'<td>' + html.escape(r.run) + '</td>' if multi else ''}"
            f'<td class="{r.status}">{r.status}</td><td>{detail}'
            f'{"" if not files else "<details><summary>" + str(len(r.outputs)) + " files</summary><div class=files>" + files + "</div></details>"}'
            f"</td><td>{r.seconds:.0f} s</td></tr>")
    prov_path = out / ("provenance.json" if not multi else f"{runs[0]}/provenance.json")
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    counts = ", ".join(f"{b}: {n} agent configuration(s)" for b, n in
                       sorted(facts.n_agent_configs.items()))
    n_ok = sum(r.status == "ok" for r in results)
    n_failed = sum(r.status == "failed" for r in results)
    n_skipped = sum(r.status == "skipped" for r in results)
    source_items = "".join(f"<li><code>{html.escape(s)}</code></li>" for s in sources)
    skipped_html = _skipped_section(skipped)
    n_bad = sum(e["skipped"] for e in skipped)
    verdict_items = "".join(f"<li><code>{html.escape(v)}</code></li>" for v in verdicts) \
        or "<li>none</li>"
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>accordkit report</title>
<style>{_CSS}</style></head><body>
<h1>accordkit report</h1>
<p class="sub">{n_ok} notebook(s) ran, {n_failed} failed, {n_skipped} skipped ·
{facts.n_episodes} episodes · {n_bad} bad record(s) skipped · {html.escape(counts)}</p>
<p>Each page below was produced by a parameterized notebook run with papermill. Tables show
point estimates with {html.escape(str(prov.get("parameters", {}).get("confidence", 0.95)))}
confidence intervals from a cluster bootstrap over scenarios
({html.escape(str(prov.get("parameters", {}).get("ci_method", "bca")))},
{html.escape(str(prov.get("parameters", {}).get("n_resamples", "")))} resamples); cells marked
† rest on fewer than 10 scenarios or 10 events. Every table is also written as CSV, Markdown
and LaTeX, every figure as PNG and SVG.</p>
<table><tr><th>notebook</th>{'<th>run</th>' if multi else ''}<th>status</th>
<th>details and files</th><th>time</th></tr>
{''.join(rows)}
</table>
<h2>Inputs</h2><ul>{source_items}</ul>
{skipped_html}
<h3>Stored judge verdicts</h3><ul>{verdict_items}</ul>
<h2>Provenance</h2>
<p><code>{html.escape(provenance_line(prov)) if prov else ''}</code> —
full record: {_link(prov_path.relative_to(out).as_posix(), "provenance.json")}
(package versions, parameters, sha256 of every input file, judge models and prompt
versions).</p>
</body></html>
"""
    path = out / "index.html"
    write_text_checked(path, page)
    return path


def _skipped_section(skipped: Sequence[dict]) -> str:
    """The "Skipped records" section: per source, the count and the first reasons."""
    rows = []
    for entry in skipped:
        reasons = "".join(f"<li><code>{html.escape(r)}</code></li>" for r in entry["reasons"])
        more = entry["skipped"] - len(entry["reasons"])
        if more > 0:
            reasons += f"<li>… and {more} more</li>"
        rows.append(f"<tr><td><code>{html.escape(entry['source'])}</code></td>"
                    f"<td>{entry['episodes']}</td>"
                    f'<td class="{"failed" if entry["skipped"] else "ok"}">{entry["skipped"]}'
                    f"</td><td>{'<ul>' + reasons + '</ul>' if reasons else ''}</td></tr>")
    total = sum(e["skipped"] for e in skipped)
    note = ("No record was skipped." if not total else
            f"{total} bad record(s) were left out of every number in this report "
            "(run <code>accordkit validate</code> on the source for all reasons, or "
            "<code>accordkit report --strict</code> to refuse such inputs).")
    return (f'<h3 id="skipped">Skipped records</h3><p>{note}</p>'
            "<table><tr><th>source</th><th>episodes loaded</th><th>records skipped</th>"
            f"<th>first reasons</th></tr>{''.join(rows)}</table>")
