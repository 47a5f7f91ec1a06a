"""Screenshots of the sample report for the README and docs/images (headless Chromium).

Run:  HF_HUB_OFFLINE=1 .venv/bin/python docs/make_screenshots.py [--report reports]
Builds the sample report into a temporary folder unless ``--report`` names a built one,
then writes the top of the index and of each notebook page (1280 x 900) as PNG, and of the
error analysis's drill-down pages: the episodes behind one taxonomy cell and one
conversation with its first divergence marked.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", help="a built report folder (default: build the sample)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = None
    report = Path(args.report) if args.report else None
    if report is None:
        from accordkit.report.runner import build_report

        tmp = Path(tempfile.mkdtemp(prefix="accordkit-shots-"))
        report = tmp / "report"
        build_report(out=report, params={"n_resamples": 2000}, progress=False)
    OUT.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for html in sorted(report.glob("*.html")):
            page.goto(html.as_uri(), wait_until="load")
            target = OUT / f"report_{html.stem}.png"
            page.screenshot(path=str(target))
            print(f"wrote {target.relative_to(REPO)}")
        for name, html in drilldown_pages(report):
            page.goto(html.as_uri(), wait_until="load")
            target = OUT / f"report_error_analysis_{name}.png"
            page.screenshot(path=str(target))
            print(f"wrote {target.relative_to(REPO)}")
        browser.close()
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


def drilldown_pages(report: Path) -> list[tuple[str, Path]]:
    """The error analysis's first "failed" cell page and the first conversation it links
    to that is marked with a first divergence."""
    import re

    root = report / "error_analysis_pages"
    cells = sorted((root / "episodes").glob("failure_taxonomy_by_configuration__*failed*.html"))
    if not cells:
        return []
    out = [("episodes", cells[0])]
    for href in re.findall(r'href="(\.\./conversations/[^"]+)"', cells[0].read_text()):
        conversation = (cells[0].parent / href).resolve()
        if "first divergence" in conversation.read_text():
            out.append(("conversation", conversation))
            break
    return out


if __name__ == "__main__":
    main()
