"""Drill-down pages of the error analysis: each table cell links to the episodes behind it,
each episode to its rendered conversation.

:class:`DrillDown` writes, under ``<out_dir>/<notebook>_pages/``,

* ``episodes/<cell>.html``: the episodes of one cell of a taxonomy or flips table that show
  the failure (id, task, outcome, first divergence, review errors), each linking to
* ``conversations/<episode>.html``: the conversation rendered by
  :func:`~accordkit.report.conversation.render_conversation`, with the first divergence, the
  action diff's findings and every review error marked
  (:func:`accordkit.analysis.marks.conversation_marks`),

and returns the tables for the notebook page with their cells as links. Every name and value
from the data is escaped, every file name is a :func:`safe_file_name` slug checked to stay in
its folder, and each page declares the report's Content-Security-Policy and holds no script.
Conversations are written for the first :attr:`DrillDown.max_conversations` episodes of each
cell; the others are listed by id (``ak.show(episode_id, episodes=ds)`` shows any of them).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..metrics.reviews import review_status
from .filenames import UnsafeOutputPathError, safe_file_name
from .pages import content_security_policy, seal_page

__all__ = ["DrillDown", "PAGE_STYLE"]

#: Style of the drill-down pages (inline: the policy lets no other style in).
PAGE_STYLE = """
body{font-family:system-ui,sans-serif;font-size:14px;margin:1.5rem;max-width:70rem}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #d0d7de;padding:3px 7px;
text-align:left;vertical-align:top} th{background:#f6f8fa}
.ak-small{color:#9a6700} .ak-muted{color:#57606a;font-size:12px}
a.ak-cell{text-decoration:none} a.ak-cell:hover{text-decoration:underline}
"""


def _page(title: str, body: str, *, back: str | None = None) -> str:
    esc = html.escape
    nav = f'<p class="ak-muted"><a href="{esc(back)}">back</a></p>' if back else ""
    return seal_page("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" '
            f'content="{esc(content_security_policy())}">'
            f"<title>{esc(title)}</title><style>{PAGE_STYLE}</style></head>"
            f"<body>{nav}<h1>{esc(title)}</h1>{body}</body></html>")


def _number(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and pd.isna(x)) or x is pd.NA:
        return "–"
    return f"{float(x):.{digits}f}"


def _label(value: Any) -> str:
    """A cell's value as a label (missing as –)."""
    return "–" if value is None or value is pd.NA or (isinstance(value, float)
                                                      and pd.isna(value)) else str(value)


class _Shown:
    """A displayed HTML fragment (notebooks call ``_repr_html_``)."""

    def __init__(self, text: str) -> None:
        self.html = text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "<linked table: rendered as HTML in notebooks>"


@dataclass
class DrillDown:
    """Writes the episode-list and conversation pages of one notebook.

    Parameters
    ----------
    out_dir : str or Path
        The report folder (the notebook's page is ``<out_dir>/<notebook>.html``).
    notebook : str
        The notebook's name.
    fetch : callable
        ``fetch(episode_ids) -> datasets.Dataset``: the transcripts of those episodes
        (:meth:`~accordkit.report.context.NotebookContext.episodes_by_id`).
    episodes : pandas.DataFrame
        Episode scores (``episode_id``, ``scenario_id``, ``success``/``reward``...).
    actions : pandas.DataFrame, optional
        The action diff.
    reviews : ReviewTables, optional
        Stored or judged reviews.
    max_conversations : int, default 20
        Conversation pages written per cell.
    max_listed : int, default 500
        Episodes listed on one cell's page (the count says how many there are).
    """

    out_dir: str | Path
    notebook: str
    fetch: Callable[[Sequence[str]], Any]
    episodes: pd.DataFrame
    actions: pd.DataFrame | None = None
    reviews: Any = None
    max_conversations: int = 20
    max_listed: int = 500
    written: list[Path] = field(default_factory=list)
    _done: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.root = self.out_dir / f"{safe_file_name(self.notebook)}_pages"

    # ------------------------------------------------------------------ files
    def _path(self, kind: str, name: str) -> Path:
        folder = self.root / kind
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{safe_file_name(name)}.html"
        if path.resolve().parent != folder.resolve():
            raise UnsafeOutputPathError(f"page {name!r} would be written outside {folder}")
        return path

    def _write(self, path: Path, text: str) -> None:
        from .outdir import write_text_checked

        write_text_checked(path, text)
        self.written.append(path)

    def _href(self, path: Path, start: Path) -> str:
        return os.path.relpath(path, start).replace(os.sep, "/")

    # ------------------------------------------------------------------ pages
    def conversations(self, episode_ids: Sequence[str]) -> dict[str, str]:
        """Write the conversation pages of these episodes (once each); their paths."""
        from ..analysis.marks import conversation_marks
        from .conversation import render_conversation

        todo = [e for e in dict.fromkeys(map(str, episode_ids)) if e not in self._done]
        if todo:
            ds = self.fetch(todo)
            for episode in ds:
                eid = str(episode["episode_id"])
                marks = conversation_marks(eid, actions=self.actions, reviews=self.reviews)
                path = self._path("conversations", eid)
                body = render_conversation(episode, marks=marks).html
                self._write(path, _page(f"Conversation {eid}", body,
                                        back=self._href(self.out_dir /
                                                        f"{safe_file_name(self.notebook)}.html",
                                                        path.parent)))
                self._done[eid] = str(path)
        return {e: self._done[e] for e in map(str, episode_ids) if e in self._done}

    def episode_list(self, name: str, title: str, episode_ids: Sequence[str]) -> Path:
        """Write the page listing these episodes; its path."""
        esc = html.escape
        ids = list(dict.fromkeys(map(str, episode_ids)))
        path = self._path("episodes", name)
        pages = self.conversations(ids[:self.max_conversations])
        info = self.episodes.drop_duplicates("episode_id").set_index("episode_id")
        first = None
        if self.actions is not None and len(self.actions):
            first = self.actions.drop_duplicates("episode_id").set_index("episode_id")
        # a count only where a review covers the episode: "not reviewed" is no "0 errors"
        status = review_status(self.reviews, ids[:self.max_listed])
        rows = []
        for eid in ids[:self.max_listed]:
            link = esc(eid)
            if eid in pages:
                link = f'<a href="{esc(self._href(Path(pages[eid]), path.parent))}">{link}</a>'
            row = info.loc[eid] if eid in info.index else None
            task = esc(str(row["scenario_id"])) if row is not None and "scenario_id" in row \
                else ""
            outcome = ""
            if row is not None and "reward" in row and pd.notna(row["reward"]):
                outcome = _number(row["reward"])
            div = ""
            if first is not None and eid in first.index and \
                    pd.notna(first.loc[eid, "divergence_reason"]):
                div = (f"{esc(str(first.loc[eid, 'divergence_reason']))} at turn "
                       f"{esc(str(first.loc[eid, 'first_divergence_turn']))}")
            rows.append(f"<tr><td>{link}</td><td>{task}</td><td>{outcome}</td><td>{div}</td>"
                        f"<td>{esc(status[eid])}</td></tr>")
        note = ""
        if len(ids) > self.max_listed:
            note += (f'<p class="ak-muted">The first {self.max_listed} of {len(ids)} episodes '
                     "are listed.</p>")
        if len(ids) > self.max_conversations:
            note += (f'<p class="ak-muted">Conversations are linked for the first '
                    f"{self.max_conversations} of {len(ids)} episodes; show any other with "
                    "<code>ak.show(episode_id, episodes=ds)</code>.</p>")
        body = (f'<p class="ak-muted">{len(ids)} episode(s).</p>{note}'
                "<table><thead><tr><th>episode</th><th>task</th><th>reward</th>"
                "<th>first divergence</th><th>review errors</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")
        back = self._href(self.out_dir / f"{safe_file_name(self.notebook)}.html", path.parent)
        self._write(path, _page(title, body, back=back))
        return path

    # ------------------------------------------------------------------ tables
    def linked_table(self, summary: pd.DataFrame, indicators: pd.DataFrame, *,
                     rows: Sequence[str], name: str, caption: str = "",
                     digits: int = 3) -> _Shown:
        """A taxonomy table (:func:`accordkit.failure_taxonomy`) as HTML whose every cell
        links to the page of its episodes that show the failure.

        ``indicators`` is the per-episode frame the table was computed from
        (``summary.attrs["indicators"]``). Cells read ``estimate [ci_low, ci_high]``, with
        ``†`` for a small cell, as the report's other tables.
        """
        from ..analysis.failures import cell_episodes
        from .headline import table_anchor

        esc = html.escape
        rows = list(rows)
        metrics = list(pd.unique(summary["metric"]))
        cells = summary[rows].drop_duplicates() if rows else pd.DataFrame(index=[0])
        page = self.out_dir
        head = "".join(f"<th>{esc(str(c))}</th>" for c in [*rows, *metrics])
        body = []
        for _, cell in cells.iterrows():
            values = {c: cell[c] for c in rows}
            mask = pd.Series(True, index=summary.index)
            for c, v in values.items():
                mask &= summary[c].isna() if pd.isna(v) else summary[c] == v
            part = summary[mask].set_index("metric")
            tds = [f"<th>{esc(_label(values[c]))}</th>" for c in rows]
            for metric in metrics:
                if metric not in part.index:
                    tds.append("<td></td>")
                    continue
                r = part.loc[metric]
                text = (f"{_number(r['estimate'], digits)} [{_number(r['ci_low'], digits)}, "
                        f"{_number(r['ci_high'], digits)}]")
                if bool(r.get("small_cell", False)):
                    text += ' <span class="ak-small">†</span>'
                ids = cell_episodes(indicators, metric, {c: v for c, v in values.items()})
                if ids:
                    label = " · ".join(_label(v) for v in values.values())
                    target = self.episode_list(f"{name}__{label}__{metric}",
                                               f"{metric} — {label} ({len(ids)} episodes)", ids)
                    text = (f'<a class="ak-cell" href="{esc(self._href(target, page))}">'
                            f"{text}</a>")
                tds.append(f"<td>{text}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        caption_text = esc(caption) + (" Each cell links to its episodes; † fewer than 10 "
                                       "tasks or events." if caption else "")
        table = (f"<table><caption>{caption_text}</caption><thead><tr>{head}</tr></thead>"
                 f"<tbody>{''.join(body)}</tbody></table>")
        anchor = table_anchor(self.notebook, safe_file_name(name) + "_linked")
        return _Shown(f'<div class="ak-table" id="{esc(anchor)}">{table}</div>')

    def linked_frame(self, frame: pd.DataFrame, *, name: str, link: str,
                     episodes_of: Callable[[pd.Series], Sequence[str]], caption: str = "",
                     digits: int = 3) -> _Shown:
        """A plain frame (e.g. :func:`accordkit.flips`) as HTML, the ``link`` column of each
        row linking to the page of ``episodes_of(row)``."""
        from .headline import table_anchor

        esc = html.escape
        head = "".join(f"<th>{esc(str(c))}</th>" for c in frame.columns)
        body = []
        for _, row in frame.iterrows():
            tds = []
            for c in frame.columns:
                v = row[c]
                text = _number(v, digits) if isinstance(v, float) else \
                    ("–" if v is None or v is pd.NA else esc(str(v)))
                if c == link:
                    ids = list(episodes_of(row))
                    if ids:
                        target = self.episode_list(f"{name}__{v}", f"{v} ({len(ids)} episodes)",
                                                   ids)
                        text = f'<a class="ak-cell" href="{esc(self._href(target, self.out_dir))}">' \
                               f"{text}</a>"
                tds.append(f"<td>{text}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        table = (f"<table><caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead>"
                 f"<tbody>{''.join(body)}</tbody></table>")
        anchor = table_anchor(self.notebook, safe_file_name(name) + "_linked")
        return _Shown(f'<div class="ak-table" id="{esc(anchor)}">{table}</div>')
