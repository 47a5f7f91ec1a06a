"""``index.html``: the report's front page, which answers before it lists.

From top to bottom: the headline number of each benchmark per agent configuration (with its
interval, each linking to the table it comes from), thumbnails of the main figures, the
notebooks with their status (and the reason for any skipped or failed one), records skipped
while loading, episodes left out of a level while scoring, the inputs as the user named them
(sha256 folded away) and the provenance.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..plots.labels import shared_part, short_labels
from .filenames import run_folder
from .headline import headline_numbers
from .notebooks import NOTEBOOKS, InputFacts
from .outdir import write_text_checked
from .pages import content_security_policy, seal_page
from .provenance import provenance_line

__all__ = ["write_index", "display_path"]

#: Figures shown as thumbnails per notebook (the first ones each notebook drew).
THUMBNAILS_PER_NOTEBOOK = 2

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:64rem;
margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem} .sub{color:#666;margin-top:0}
table{border-collapse:collapse;width:100%;margin:.6rem 0 1.2rem 0}
td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
thead th{background:#f5f5f5;position:sticky;top:0}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{color:#176f2c;font-weight:600} .failed{color:#b00020;font-weight:600}
.skipped{color:#8a6d00;font-weight:600} code{background:#f3f3f3;padding:0 .2rem}
.files a{margin-right:.6rem;white-space:nowrap} details{margin:.3rem 0}
.what{color:#555;font-size:13px;margin:.1rem 0 .3rem 0}
.thumbs{display:flex;flex-wrap:wrap;gap:.8rem;margin:.6rem 0 1.2rem 0}
.thumbs figure{margin:0;width:30rem;max-width:100%;border:1px solid #ddd;border-radius:6px;
padding:.4rem}
.thumbs img{width:100%;height:auto;max-height:22rem;object-fit:contain;background:#fff}
.thumbs figcaption{font-size:12px;color:#444}
.small{color:#8a6d00} .warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;
padding:.4rem .8rem}
.ak-pages{display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:13px;padding:.4rem 0;
border-bottom:1px solid #ddd;margin-bottom:1rem}
.ak-pages a{text-decoration:none} .ak-pages a[aria-current=page]{color:inherit;font-weight:600}
@media (prefers-color-scheme: dark){
:root{color-scheme:dark} body{background:#0d1117;color:#e6edf3} a{color:#58a6ff}
.sub,.what{color:#9da7b3} td,th{border-color:#30363d} thead th{background:#161b22}
code{background:#161b22} .ok{color:#3fb950} .failed{color:#f85149} .skipped,.small{color:#d29922}
.warn{background:#2b2111;border-color:#9e6a03} .thumbs figure{border-color:#30363d}
.thumbs figcaption{color:#9da7b3} .ak-pages{border-color:#30363d}
.ak-pages a[aria-current=page]{color:#e6edf3}
}
"""


def _pages_nav(results: Sequence, *, multi: bool) -> str:
    """The header every page of the report has: the index, then each page written."""
    titles = {n.name: n.nav_title for n in NOTEBOOKS}
    links = ["<a href='index.html' aria-current='page'>Report index</a>"]
    seen = set()
    for r in results:
        if not r.html or (r.notebook in seen and not multi):
            continue
        seen.add(r.notebook)
        prefix = f"{run_folder(r.run)}/" if multi else ""
        title = titles.get(r.notebook, r.title)
        links.append(_link(prefix + r.html, f"{title} ({r.run})" if multi else title))
    return f"<nav class='ak-pages' aria-label='report pages'>{''.join(links)}</nav>"


def _fill_drilldown_headers(out: Path, results: Sequence, *, runs: Sequence[str],
                            multi: bool) -> None:
    """The drill-down pages of each run get the header of its notebook pages (the index,
    then each page written), now that every notebook has run."""
    from .drilldown import fill_headers

    titles = {n.name: n.nav_title for n in NOTEBOOKS}
    for run in runs:
        run_dir = out / run_folder(run) if multi else out
        pages = [("../index.html" if multi else "index.html", "Report index")]
        pages += [(r.html, titles.get(r.notebook, r.title)) for r in results
                  if r.run == run and r.html and r.status != "skipped"]
        fill_headers(run_dir, pages)


def _link(href: str, text: str) -> str:
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def display_path(source: str, *, cwd: str | Path | None = None) -> str:
    """A source as the user would name it: relative to the working folder when inside it.

    Examples
    --------
    >>> display_path("/home/me/proj/data/x.json", cwd="/home/me/proj")
    'data/x.json'
    >>> display_path("/elsewhere/x.json", cwd="/home/me/proj")
    '/elsewhere/x.json'
    >>> display_path("org/dataset", cwd="/home/me/proj")
    'org/dataset'
    """
    path = Path(source)
    if not path.is_absolute():
        return source
    base = Path(cwd) if cwd is not None else Path.cwd()
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return source


def _number(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _headline_section(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ("<h2 id='headline'>Headline numbers</h2><p>No headline table was produced "
                "(see the notebooks below).</p>")
    parts = ["<h2 id='headline'>Headline numbers</h2>"]
    for bench in dict.fromkeys(r["benchmark"] for r in rows):
        group = [r for r in rows if r["benchmark"] == bench]
        conf = group[0].get("confidence")
        level = f"{conf:.0%}" if conf else "95%"
        keys = list(group[0]["group"])
        head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
        # configuration labels cut to what tells the rows apart, in full on hover
        short = short_labels([str(v) for r in group for v in r["group"].values() if v])
        shared = shared_part([str(v) for r in group for v in r["group"].values() if v])
        body = []
        for r in group:
            cells = "".join(
                f"<td><span title='{html.escape(v)}'>{html.escape(short[v])}</span></td>"
                if v and short.get(v, v) != v else f"<td>{html.escape(v or '–')}</td>"
                for v in r["group"].values())
            mark = " <span class=small title='fewer than 10 clusters or events'>†</span>" \
                if r.get("small_cell") else ""
            body.append(
                f"<tr class='headline-row' data-benchmark='{html.escape(bench)}'>{cells}"
                f"<td class='num'><a href='{html.escape(r['href'])}' class='headline-value' "
                f"data-estimate='{r['estimate']}'>{_number(r['estimate'])}</a>{mark}</td>"
                f"<td class='num'>[{_number(r['ci_low'])}, {_number(r['ci_high'])}]</td>"
                f"<td class='num'>{'' if r.get('n_clusters') is None else r['n_clusters']}</td>"
                "</tr>")
        parts.append(
            f"<h3>{html.escape(bench)}: {html.escape(group[0]['metric'])}</h3>"
            f"<p class='what'>{html.escape(group[0]['what'])}; {level} interval from the "
            "cluster bootstrap over tasks; † = small cell"
            + (f"; every configuration here: {html.escape(shared)} (hover a label for it "
               "in full)" if shared else "") + ".</p>"
            f"<table class='headline'><thead><tr>{head}<th>{html.escape(group[0]['metric'])}"
            f"</th><th>{level} interval</th><th>tasks</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")
    return "".join(parts)


def _thumbnails(out: Path, results: Sequence, *, multi: bool) -> str:
    figs = []
    for r in results:
        if r.status != "ok" or not r.html:
            continue
        prefix = f"{run_folder(r.run)}/" if multi else ""
        pngs = [f for f in r.outputs if f.endswith(".png")][:THUMBNAILS_PER_NOTEBOOK]
        for png in pngs:
            name = Path(png).stem
            href = f"{prefix}{r.html}#fig-{name}"
            label = name.split("__", 1)[-1].replace("_", " ")
            try:   # embedded: the page's policy loads no image from a file (security.md)
                data = base64.b64encode((out / (prefix + png)).read_bytes()).decode("ascii")
            except OSError:
                continue
            figs.append(
                f"<figure><a href='{html.escape(href)}'><img "
                f"src='data:image/png;base64,{data}' "
                f"alt='{html.escape(r.title + ': ' + label)}'>"
                f"</a><figcaption>{html.escape(r.title)} · {html.escape(label)}</figcaption>"
                "</figure>")
    if not figs:
        return ""
    return f"<h2 id='figures'>Main figures</h2><div class='thumbs'>{''.join(figs)}</div>"


def _notebook_rows(results: Sequence, *, multi: bool) -> str:
    descriptions = {n.name: n.description for n in NOTEBOOKS}
    rows = []
    for r in results:
        prefix = f"{run_folder(r.run)}/" if multi else ""
        name = _link(prefix + r.html, r.title) if r.html else html.escape(r.title)
        files = " ".join(_link(prefix + f, Path(f).name) for f in r.outputs)
        if r.ipynb:
            files = _link(prefix + r.ipynb, "notebook (.ipynb)") + " " + files
        detail = html.escape(r.reason) if r.reason else ""
        folded = ("" if not files else
                  f"<details><summary>{len(r.outputs)} files</summary>"
                  f"<div class=files>{files}</div></details>")
        run_cell = f"<td>{html.escape(r.run)}</td>" if multi else ""
        rows.append(
            f"<tr><td>{name}<br><small>{html.escape(descriptions.get(r.notebook, ''))}"
            f"</small></td>{run_cell}<td class='{r.status}'>{r.status}</td>"
            f"<td>{detail}{folded}</td><td class='num'>{r.seconds:.0f} s</td></tr>")
    return "".join(rows)


def _skipped_section(skipped: Sequence[Mapping[str, Any]] | None) -> str:
    """Per source: episodes loaded, records skipped and the first reasons."""
    entries = list(skipped or ())
    total = sum(int(e.get("skipped", 0)) for e in entries)
    if not total:
        return ("<h2 id='skipped-records'>Skipped records</h2>"
                "<p>None: every record of every input was loaded.</p>")
    rows = []
    for entry in entries:
        reasons = "".join(f"<li><code>{html.escape(str(r))}</code></li>"
                          for r in entry.get("reasons", []))
        more = int(entry.get("skipped", 0)) - len(entry.get("reasons", []))
        if more > 0:
            reasons += f"<li>… and {more} more</li>"
        rows.append(f"<tr><td><code>{html.escape(display_path(entry['source']))}</code></td>"
                    f"<td class='num'>{entry.get('episodes', '')}</td>"
                    f"<td class='num {'failed' if entry.get('skipped') else 'ok'}'>"
                    f"{entry.get('skipped', 0)}</td>"
                    f"<td>{'<ul style=margin:0>' + reasons + '</ul>' if reasons else ''}</td></tr>")
    return (f"<h2 id='skipped-records'>Skipped records</h2><p class='warn'>{total} bad "
            "record(s) were left out of every number in this report (run <code>accordkit "
            "validate</code> on the source for all reasons, or <code>accordkit report "
            "--strict</code> to refuse such inputs).</p>"
            "<table><thead><tr><th>source</th><th>episodes loaded</th><th>records skipped</th>"
            f"<th>first reasons</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _left_out_section(left_out: Sequence[Mapping[str, Any]] | None) -> str:
    """Per source: the episodes an analysis left out of one level while scoring, each named
    by file, record and field with the reason (every name escaped: they come from the
    transcripts)."""
    entries = list(left_out or ())
    total = sum(int(e.get("left_out", 0)) for e in entries)
    head = "<h2 id='left-out-at-scoring'>Left out at scoring</h2>"
    if not total:
        return head + "<p>None: every episode loaded was scored at every level.</p>"
    rows = []
    for entry in entries:
        named = list(entry.get("episodes", []))
        for e in named:
            rows.append(
                f"<tr><td><code>{html.escape(display_path(str(entry['source'])))}</code></td>"
                f"<td>{html.escape(str(e.get('level', '')))}</td>"
                f"<td><code>{html.escape(str(e.get('record', '')))}</code></td>"
                f"<td><code>{html.escape(str(e.get('field') or '–'))}</code></td>"
                f"<td>{html.escape(str(e.get('reason', '')))}</td></tr>")
        more = int(entry.get("left_out", 0)) - len(named)
        if more > 0:
            rows.append(f"<tr><td><code>{html.escape(display_path(str(entry['source'])))}"
                        f"</code></td><td colspan=4>… and {more} more (named in the score "
                        "store's <code>manifest.json</code> up to 20 per input)</td></tr>")
    return (f"{head}<p class='warn'>{total} episode(s) were loaded and scored, but one "
            "analysis could not be made for them: each is missing from the level named "
            "below (its tables count the others) while its other scores stand. "
            "<code>accordkit report --strict</code> refuses such inputs.</p>"
            "<table><thead><tr><th>source</th><th>level</th><th>record</th><th>field</th>"
            f"<th>reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _inputs_section(prov: Mapping[str, Any], sources: Sequence[str],
                    verdicts: Sequence[str]) -> str:
    by_source = {s.get("source"): s for s in prov.get("sources", [])}
    items = []
    for source in sources:
        fp = by_source.get(source, {})
        if fp.get("kind") == "file":
            detail = f"<code>{html.escape(fp.get('sha256', ''))}</code>"
        elif fp.get("kind") == "folder":
            detail = "<br>".join(f"<code>{html.escape(k)}</code>: <code>{html.escape(v)}</code>"
                                 for k, v in fp.get("files", {}).items())
        elif fp.get("kind") == "hub":
            detail = f"revision <code>{html.escape(str(fp.get('revision')))}</code>"
        else:
            detail = ""
        fold = f"<details><summary>sha256</summary>{detail}</details>" if detail else ""
        items.append(f"<li><code>{html.escape(display_path(source))}</code>{fold}</li>")
    verdict_items = "".join(f"<li><code>{html.escape(display_path(v))}</code></li>"
                            for v in verdicts) or "<li>none</li>"
    return (f"<h2 id='inputs'>Inputs</h2><ul>{''.join(items)}</ul>"
            f"<h3>Stored judge verdicts</h3><ul>{verdict_items}</ul>")


def write_index(out: Path, results: Sequence, *, runs: Sequence[str], sources: Sequence[str],
                verdicts: Sequence[str], facts: InputFacts,
                skipped: Sequence[Mapping[str, Any]] | None = None,
                left_out: Sequence[Mapping[str, Any]] | None = None,
                ) -> tuple[Path, list[dict[str, Any]]]:
    """Write ``out/index.html`` for a finished report.

    Parameters
    ----------
    out : Path
        The report folder.
    results : sequence of RunResult
        One per (run, notebook).
    runs : sequence of str
        Run names (one unless a parameter grid was given).
    sources, verdicts : sequence of str
        Inputs as passed to the report.
    facts : InputFacts
        What the sources hold.
    skipped : list of dict, optional
        Per source ``source``, ``episodes``, ``skipped`` and ``reasons`` (the runner's
        ``skipped_summary``).
    left_out : list of dict, optional
        Per source ``source``, ``left_out`` and ``episodes`` (the runner's
        ``left_out_summary``): episodes left out of a level at scoring.

    Returns
    -------
    path : Path
        The index page.
    headline : list of dict
        The headline numbers it shows (see :func:`accordkit.report.headline.headline_numbers`),
        also stored in ``results.json``.
    """
    multi = len(runs) > 1
    _fill_drilldown_headers(out, results, runs=runs, multi=multi)
    prov_path = out / ("provenance.json" if not multi else f"{run_folder(runs[0])}/provenance.json")
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    headline: list[dict[str, Any]] = []
    for run in runs:
        folder = run_folder(run)
        rows = headline_numbers(out / folder if multi else out,
                                prefix=f"{folder}/" if multi else "")
        for row in rows:
            row["run"] = run
        headline += rows
    counts = ", ".join(f"{b}: {n} agent configuration(s)" for b, n in
                       sorted(facts.n_agent_configs.items()))
    n_ok = sum(r.status == "ok" for r in results)
    n_failed = sum(r.status == "failed" for r in results)
    n_skipped = sum(r.status == "skipped" for r in results)
    params = prov.get("parameters", {})
    failed_note = (f"<p class='warn'>{n_failed} notebook(s) failed: see the reasons below.</p>"
                   if n_failed else "")
    n_bad = sum(int(e.get("skipped", 0)) for e in (skipped or ()))
    n_left = sum(int(e.get("left_out", 0)) for e in (left_out or ()))
    left_note = f" · {n_left} episode(s) left out at scoring" if n_left else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{html.escape(content_security_policy())}">
<title>accordkit report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_CSS}</style></head><body>
{_pages_nav(results, multi=multi)}
<h1>accordkit report</h1>
<p class="sub">{n_ok} notebook(s) ran, {n_failed} failed, {n_skipped} skipped ·
{facts.n_episodes} episodes · {n_bad} bad record(s) skipped{left_note} · {html.escape(counts)}</p>
{failed_note}
{_headline_section(headline)}
{_thumbnails(out, results, multi=multi)}
<h2 id='notebooks'>Notebooks</h2>
<p>Each page was produced by a parameterized notebook run with papermill. Tables show point
estimates with {html.escape(str(params.get("confidence", 0.95)))} confidence intervals from a
cluster bootstrap over scenarios ({html.escape(str(params.get("ci_method", "bca")))},
{html.escape(str(params.get("n_resamples", "")))} resamples); cells marked † rest on fewer than
10 scenarios or 10 events. Every table is also written as CSV, Markdown and LaTeX, every
figure as PNG and SVG.</p>
<table><thead><tr><th>notebook</th>{'<th>run</th>' if multi else ''}<th>status</th>
<th>details and files</th><th>time</th></tr></thead>
<tbody>{_notebook_rows(results, multi=multi)}</tbody>
</table>
{_skipped_section(skipped)}
{_left_out_section(left_out)}
{_inputs_section(prov, sources, verdicts)}
<h2 id='provenance'>Provenance</h2>
<p><code>{html.escape(provenance_line(prov)) if prov else ''}</code> —
full record: {_link(os.path.relpath(prov_path, out).replace(os.sep, "/"), "provenance.json")}
(package versions, parameters, sha256 of every input file, judge models and prompt
versions).</p>
</body></html>
"""
    path = out / "index.html"
    write_text_checked(path, seal_page(page))
    return path, headline
