"""Screenshots of the sample report for the README and docs/images (headless Chromium).

Run:  HF_HUB_OFFLINE=1 .venv/bin/python docs/make_screenshots.py [--report reports]
Builds the sample report into a temporary folder unless ``--report`` names a built one
(relative to the folder you run in), then writes the top of the index and of each notebook
page (1280 x 900) as PNG into ``--out`` (default: docs/images), and of the error
analysis's drill-down pages: all episodes searched for "refund", the episodes behind one
taxonomy cell, one conversation with its first divergence marked, and a flip's two
conversations side by side.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", help="a built report folder (default: build the sample)")
    ap.add_argument("--out", default=str(OUT), help="where the PNGs go (default: docs/images)")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    tmp = None
    # a browser opens file URIs, which are absolute: a relative --report is resolved here
    report = Path(args.report).resolve() if args.report else None
    if report is not None and not (report / "index.html").is_file():
        ap.error(f"--report {args.report}: no index.html there (not a built report)")
    out = Path(args.out).resolve()
    if report is None:
        from accordkit.report.runner import build_report

        tmp = Path(tempfile.mkdtemp(prefix="accordkit-shots-"))
        report = tmp / "report"
        build_report(out=report, params={"n_resamples": 2000}, progress=False)
    out.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for html in sorted(report.glob("*.html")):
            page.goto(html.as_uri(), wait_until="load")
            target = out / f"report_{html.stem}.png"
            page.screenshot(path=str(target))
            print(f"wrote {target}")
        shares = report / "figures" / "error_analysis__failure_shares.png"
        if shares.is_file():   # a figure the docs show as it is
            shutil.copyfile(shares, out / "report_error_analysis_failure_shares.png")
            print(f"wrote {out / 'report_error_analysis_failure_shares.png'}")
        for name, html in drilldown_pages(report):
            page.goto(html.as_uri(), wait_until="load")
            if name == "all_episodes":   # the search at work
                page.fill("#ak-text", "refund")
            if name == "conversation":   # the marked turn, beside the panel that stays
                page.evaluate("(Array.from(document.querySelectorAll('.ak-mark')).find("
                              "m => m.textContent.includes('called with')) || document."
                              "querySelector('.ak-mark') || document.body)"
                              ".scrollIntoView({block: 'center'})")
            target = out / f"report_error_analysis_{name}.png"
            page.screenshot(path=str(target))
            print(f"wrote {target}")
        browser.close()
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


def drilldown_pages(report: Path) -> list[tuple[str, Path]]:
    """The error analysis's first "failed" cell page and the first conversation it links
    to that is marked with a first divergence (one with a wrong argument when there is)."""
    import re

    root = report / "error_analysis_pages"
    out = [("all_episodes", root / "episodes.html")] if (root / "episodes.html").is_file() \
        else []
    cells = sorted((root / "episodes").glob("failure_taxonomy_by_configuration__*failed*.html"))
    if cells:
        out.append(("episodes", cells[0]))
        marked = [c for c in ((cells[0].parent / h).resolve() for h in re.findall(
            r'href="(\.\./conversations/[^"?]+)', cells[0].read_text()))
            if "first divergence" in c.read_text()]
        # a wrong argument shows the expected value beside the one called
        chosen = next((c for c in [*marked, *sorted((root / "conversations").glob("*.html"))]
                       if "called with" in c.read_text()), None)
        if chosen or marked:
            out.append(("conversation", chosen or marked[0]))
    # a flip of the flips table whose one side passed and the other failed
    flips = sorted((root / "flips").glob("*.html"), key=lambda f: (
        not f.name.startswith("flips_"), f.name))
    chosen = next((f for f in flips if 'class="ak-pass"' in f.read_text()
                   and 'class="ak-fail"' in f.read_text()), None)
    if chosen is not None or flips:
        out.append(("flip", chosen or flips[0]))
    return out


if __name__ == "__main__":
    main()
