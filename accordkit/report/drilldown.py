"""Drill-down pages of the error analysis: each table cell links to the episodes behind it,
each episode to its rendered conversation.

:class:`DrillDown` writes, under ``<out_dir>/<notebook>_pages/``,

* ``episodes/<cell>.html``: the episodes of one cell of a taxonomy or flips table that show
  the failure (id, task, outcome, first divergence, review errors), each linking to
* ``conversations/<episode>.html``: the conversation rendered by
  :func:`~accordkit.report.conversation.render_conversation`, with the first divergence, the
  action diff's findings (a call with wrong arguments says the expected value beside the
  one called) and every review error marked
  (:func:`accordkit.analysis.marks.conversation_marks`),
* ``episodes.html`` (:meth:`DrillDown.episodes_page`): every episode, sortable and
  filterable, with a search across the transcripts (:mod:`.episodes`); it writes every
  episode's conversation page,
* ``flips/<task>.html``: a flip's two conversations side by side, labelled with their
  configuration and aligned at the first divergence (a cell's page over one task and two
  configurations links to it),

and returns the tables for the notebook page with their cells as links. Every page has the
report's header, breadcrumbs (a conversation's "back" returns to the list it was opened
from), both colour schemes and sortable lists. Every name and value from the data is
escaped, every file name is a :func:`safe_file_name` slug checked to stay in its folder,
and each page declares the report's Content-Security-Policy, its scripts named by sha256.
Without :meth:`DrillDown.episodes_page`, conversations are written for the first
:attr:`DrillDown.max_conversations` episodes of each cell; the others are listed by id
(``ak.show(episode_id, episodes=ds)`` shows any of them).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .filenames import UnsafeOutputPathError, safe_file_name
from .pages import DARK_CSS, PAGE_CSS, content_security_policy, own_script, seal_page

__all__ = ["DrillDown", "PAGE_STYLE", "BACK_SCRIPT", "expected_marks", "fill_headers"]

#: Style of the drill-down pages, in the page's one hashed stylesheet with the report's
#: header and both colour schemes (the policy lets no other style in). The scoring panel
#: stays in view beside a long conversation (sticky), and a flip's two sides share rows, so
#: that their first divergences line up.
PAGE_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:14px;margin:0;
color:#1f2328;background:#fff}
main{margin:1rem 1.5rem;max-width:96rem}
h1{font-size:1.4rem;margin:.6rem 0}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #d0d7de;padding:3px 7px;
text-align:left;vertical-align:top} th{background:#f6f8fa}
thead th{position:sticky;top:0;z-index:1}
.ak-small{color:#9a6700} .ak-muted{color:#57606a;font-size:12px}
a.ak-cell{text-decoration:none} a.ak-cell:hover{text-decoration:underline}
.ak-crumbs{font-size:13px;margin:.6rem 0 0 0;color:#57606a}
.ak-crumbs a{color:#0969da;text-decoration:none} .ak-crumbs a:hover{text-decoration:underline}
.ak-sort th{cursor:pointer;white-space:nowrap}
.ak-sort th[data-sort=asc]::after{content:" \\25B2";font-size:9px}
.ak-sort th[data-sort=desc]::after{content:" \\25BC";font-size:9px}
.ak-list{max-height:75vh;overflow:auto;max-width:100%}
#ak-episodes{table-layout:fixed;width:100%} #ak-episodes td{overflow-wrap:anywhere}
#ak-episodes th:nth-child(1),#ak-episodes th:nth-child(4){width:17%}
#ak-episodes th:nth-child(2){width:19%} #ak-episodes th:nth-child(3){width:7%}
#ak-episodes th:nth-child(5),#ak-episodes th:nth-child(9){width:4%}
#ak-episodes th:nth-child(6){width:5%} #ak-episodes th:nth-child(7){width:6%}
#ak-episodes th:nth-child(8){width:10%} #ak-episodes th:nth-child(10){width:8%}
.ak-pass{color:#1a7f37;font-weight:600} .ak-fail{color:#cf222e;font-weight:600}
.ak-controls fieldset{display:inline-block;border:1px solid #d0d7de;border-radius:6px;
margin:0 .6rem .4rem 0;padding:.2rem .6rem .4rem .6rem;font-size:12px}
.ak-controls input,.ak-controls select,.ak-controls button{font-size:12px;margin-right:.4rem}
.ak-hits{max-height:30vh;overflow:auto;font-size:12px}
.ak-hitlist{margin:.2rem 0 .6rem 0;padding-left:1.6rem} .ak-hitlist li{margin:.1rem 0}
.ak-why{position:sticky;top:.5rem;max-height:calc(100vh - 1rem);overflow:auto}
.ak-flip{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.4rem 1rem;
align-items:start}
.ak-flip>.ak-side-head{border-bottom:2px solid #d0d7de;padding:.2rem 0}
.ak-flip>.ak-divergence{grid-column:1 / span 2;border-top:2px dashed #cf222e;color:#cf222e;
font-size:12px;font-weight:600;padding:.2rem 0}
.ak-flip ul{margin:.2rem 0;padding-left:1.2rem;font-size:12px}
.ak-side-link{font-size:12px}
@media (prefers-color-scheme: dark){
:root{color-scheme:dark} body{background:#0d1117;color:#e6edf3}
a,.ak-crumbs a{color:#58a6ff} .ak-muted,.ak-crumbs{color:#9da7b3}
th,td{border-color:#30363d} th{background:#161b22}
.ak-small{color:#d29922} .ak-pass{color:#3fb950} .ak-fail{color:#f85149}
.ak-controls fieldset{border-color:#30363d}
.ak-flip>.ak-side-head{border-color:#30363d}
.ak-flip>.ak-divergence{border-color:#f85149;color:#f85149}
}
"""


#: A conversation page's "back": the list the reader came from. The link names the
#: episodes page unless the address says another list of this report (``?from=``: the
#: episodes page, a cell's page or a flip's, by its file name, which holds only letters,
#: digits, ``-`` and ``_``); a click goes back in the browser's history when there is one,
#: which returns to the list as it was left (its filters and search).
BACK_SCRIPT = own_script("""
(function(){
var back=document.getElementById('ak-back'); if(!back){return;}
var from=new URLSearchParams(location.search).get('from')||'';
var m=/^(episodes|list|flip)(?::([A-Za-z0-9_-]{1,160}))?$/.exec(from);
if(m&&(m[1]==='episodes')===!m[2]){
  var target={episodes:'../episodes.html',list:'../episodes/'+m[2]+'.html',
    flip:'../flips/'+m[2]+'.html'}[m[1]];
  back.setAttribute('href',target);
  back.textContent={episodes:'All episodes',list:'Episodes of a cell',
    flip:'Flip side by side'}[m[1]];
} else {m=null;}
back.addEventListener('click',function(e){
  if(m&&history.length>1){e.preventDefault(); history.back();}
});
})();
""")


def _page(title: str, body: str, *, nav: Sequence[tuple[str, str]] = (),
          crumbs: Sequence[tuple[str | None, str]] = (), scripts: Sequence[str] = (),
          back: str | None = None) -> str:
    """A whole drill-down page, sealed (:func:`~.pages.seal_page`): the report's header
    (``nav``: (href, title), the first the index), breadcrumbs ((href or None, label), the
    one with id ``ak-back`` when its label is ``back``), the body and its scripts."""
    from bs4 import BeautifulSoup

    from .pages import pages_header

    esc = html.escape
    header = "".join(str(part) for part in pages_header(BeautifulSoup("", "html.parser"),
                                                        list(nav)))
    trail = []
    for href, label in crumbs:
        if href is None:
            trail.append(f'<span aria-current="page">{esc(label)}</span>')
        else:
            extra = ' id="ak-back"' if href == back else ""
            trail.append(f'<a href="{esc(href)}"{extra}>{esc(label)}</a>')
    crumb = (f'<nav class="ak-crumbs" aria-label="breadcrumbs">{" › ".join(trail)}</nav>'
             if trail else "")
    code = "".join(f"<script>{text}</script>" for text in scripts)
    return seal_page("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
                     f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                     f'<meta http-equiv="Content-Security-Policy" '
                     f'content="{esc(content_security_policy())}">'
                     f"<title>{esc(title)}</title><style>{PAGE_CSS}{DARK_CSS}"
                     f"{PAGE_STYLE}{CONVERSATION_DARK_CSS}</style></head>"
                     f"<body>{header}<main>{crumb}<h1>{esc(title)}</h1>{body}</main>{code}"
                     "</body></html>")


#: Conversations in the dark colour scheme. Their looks are classes of the page's
#: generated stylesheet (``!important``, from the renderer's inline styles); these rules
#: name two classes, so that they win.
CONVERSATION_DARK_CSS = """
@media (prefers-color-scheme: dark){
.ak-conv.ak-conv,.ak-conv .ak-head td{background:#0d1117!important;color:#e6edf3!important}
.ak-conv .ak-msg{border-left-color:#6e7681!important}
.ak-conv .ak-msg.ak-user{background:#0c2d4a!important;border-left-color:#58a6ff!important}
.ak-conv .ak-msg.ak-assistant{background:#12261e!important;border-left-color:#3fb950!important}
.ak-conv .ak-msg.ak-tool{background:#161b22!important;border-left-color:#8b949e!important}
.ak-conv .ak-msg.ak-system{background:#2b2111!important;border-left-color:#d29922!important}
.ak-conv .ak-idx,.ak-conv summary{color:#9da7b3!important}
.ak-conv .ak-call{color:#d2a8ff!important}
.ak-conv .ak-mark{background:#5a1e1e!important;color:#ffdcd7!important}
.ak-conv .ak-event,.ak-conv .ak-shift{background:#3d2e00!important;color:#f0e0a0!important}
.ak-conv .ak-err{color:#f85149!important}
.ak-why.ak-why,.ak-why *{background:#161b22!important;color:#e6edf3!important;
border-color:#30363d!important}
}
"""


def _number(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and pd.isna(x)) or x is pd.NA:
        return "–"
    return f"{float(x):.{digits}f}"


def _label(value: Any) -> str:
    """A cell's value as a label (missing as –)."""
    return "–" if value is None or value is pd.NA or (isinstance(value, float)
                                                      and pd.isna(value)) else str(value)


def _value(text: Any) -> str:
    """An argument's value as JSON, short."""
    out = json.dumps(text, ensure_ascii=False, default=str)
    return out if len(out) <= 80 else out[:80] + "…"


def expected_marks(rows: pd.DataFrame) -> dict[str, str]:
    """For an episode's action-diff rows, the label of each call with wrong arguments
    (as :func:`~accordkit.analysis.marks.conversation_marks` writes it) with the expected
    value beside the one called, by label.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"status": ["wrong_arguments"], "name": ["send_certificate"],
    ...                      "diff_args": ["amount"], "expected_json": ['{"amount": 50}'],
    ...                      "actual_json": ['{"amount": 100, "user": "u1"}']})
    >>> expected_marks(rows)
    {'wrong arguments: send_certificate (amount)': 'wrong arguments: send_certificate (amount): expected 50, called with 100'}
    """
    out = {}
    if not len(rows) or "expected_json" not in rows:
        return out
    for _, row in rows[rows["status"] == "wrong_arguments"].iterrows():
        label = f"wrong arguments: {row['name']} ({row['diff_args']})"
        try:
            expected = json.loads(row["expected_json"] or "{}")
            actual = json.loads(row["actual_json"] or "{}")
        except (TypeError, ValueError):
            continue
        if not isinstance(expected, dict) or not isinstance(actual, dict):
            continue
        keys = [k.strip() for k in str(row["diff_args"]).split(",") if k.strip()] \
            or sorted(set(expected) | set(actual))
        parts = []
        for key in keys:
            want = _value(expected[key]) if key in expected else "(none)"
            got = _value(actual[key]) if key in actual else "(none)"
            parts.append(f"{key} expected {want}, called with {got}" if len(keys) > 1
                         else f"expected {want}, called with {got}")
        out[label] = f"{label}: " + "; ".join(parts)
    return out


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
        Conversation pages written per cell (all, once :meth:`episodes_page` ran).
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
        self._table = None
        self._by_episode = None
        self._listing = False

    # ------------------------------------------------------------------ files
    def _path(self, kind: str, name: str) -> Path:
        folder = self.root / kind if kind else self.root
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

    @property
    def notebook_page(self) -> Path:
        """The notebook's own page."""
        return self.out_dir / f"{safe_file_name(self.notebook)}.html"

    @property
    def episodes_path(self) -> Path:
        """The episodes page (:meth:`episodes_page`)."""
        return self.root / "episodes.html"

    @property
    def table(self) -> pd.DataFrame:
        """:func:`~.episodes.episode_table` of the episodes (built once)."""
        if self._table is None:
            from .episodes import episode_table

            self._table = episode_table(self.episodes, actions=self.actions,
                                        reviews=self.reviews)
        return self._table

    def _title(self) -> str:
        from .notebooks import NOTEBOOKS

        return next((n.nav_title for n in NOTEBOOKS if n.name == self.notebook),
                    self.notebook.replace("_", " "))

    def _nav(self, path: Path) -> list[tuple[str, str]]:
        """The header of a page at ``path``: the report's index, the notebook's page and
        the episodes page (when written)."""
        start = path.parent
        nav = [(self._href(self.out_dir / "index.html", start), "Report index"),
               (self._href(self.notebook_page, start), self._title())]
        if self._listing or path == self.episodes_path:
            nav.append((self._href(self.episodes_path, start), "All episodes"))
        return nav

    def _crumbs(self, path: Path, *middle: tuple[str | None, str]) -> list:
        start = path.parent
        return [(self._href(self.out_dir / "index.html", start), "Report"),
                (self._href(self.notebook_page, start), self._title()), *middle]

    # ------------------------------------------------------------------ pages
    def _marks(self, eid: str) -> dict[int, list[str]]:
        """The marks of one episode, a wrong argument's expected value beside its own."""
        from ..analysis.marks import conversation_marks

        rows = self._actions_of(eid)
        marks = conversation_marks(eid, actions=rows, reviews=self.reviews)
        if rows is not None and len(rows):
            better = expected_marks(rows)
            marks = {turn: [better.get(label, label) for label in labels]
                     for turn, labels in marks.items()}
        return marks

    def _actions_of(self, eid: str) -> pd.DataFrame | None:
        """One episode's action-diff rows (the frame split by episode once)."""
        if self.actions is None or not len(self.actions):
            return None
        if getattr(self, "_by_episode", None) is None:
            self._by_episode = {str(k): g for k, g in self.actions.groupby(
                self.actions["episode_id"].astype(str), sort=False)}
        return self._by_episode.get(eid, self.actions.iloc[:0])

    def _conversation_page(self, episode: Any) -> None:
        from .conversation import render_conversation

        eid = str(episode["episode_id"])
        path = self._path("conversations", eid)
        body = render_conversation(episode, marks=self._marks(eid), anchors=True).html
        back = self._href(self.episodes_path, path.parent)
        self._write(path, _page(f"Conversation {eid}", body, nav=self._nav(path),
                                crumbs=self._crumbs(path, (back, "All episodes"),
                                                    (None, eid)),
                                scripts=[BACK_SCRIPT], back=back))
        self._done[eid] = str(path)

    def conversations(self, episode_ids: Sequence[str], *,
                      records: list | None = None) -> dict[str, str]:
        """Write the conversation pages of these episodes (once each); their paths.

        ``records``, when given, receives each transcript read (the episodes page's
        search reads them without a second fetch).
        """
        todo = [e for e in dict.fromkeys(map(str, episode_ids)) if e not in self._done]
        if todo:
            for episode in self.fetch(todo):
                self._conversation_page(episode)
                if records is not None:
                    records.append(episode)
        return {e: self._done[e] for e in map(str, episode_ids) if e in self._done}

    def episodes_page(self, *, chunk: int = 200, max_episodes: int = 2_000) -> _Shown:
        """Write every episode's conversation page and the episodes page
        (:mod:`.episodes`): every episode, sortable and filterable, and a search across
        the transcripts. Returns a link to it for the notebook's page.

        Transcripts are read ``chunk`` episodes at a time. A report of more than
        ``max_episodes`` episodes (a page and a conversation each take ~0.1 s to write,
        and the page carries the transcripts' text) lists that many, the same number of
        each configuration (the first in the scores' order), and says so;
        ``ak.find`` and ``ak.show`` in a notebook reach every episode.
        """
        from .episodes import episodes_page, search_index

        table, total = self.table, len(self.table)
        if total > max_episodes:
            per = -(-max_episodes // max(table["configuration"].nunique(), 1))
            table = table.groupby("configuration", sort=False).head(per).head(max_episodes)
        ids = table["episode_id"].tolist()
        self._listing = True   # every page written from now on links to it
        index: dict[str, list] = {}
        for start in range(0, len(ids), chunk):
            part = ids[start:start + chunk]
            records: list = []
            self.conversations(part, records=records)
            index.update(search_index(records))
            todo = [e for e in part if e not in index and e in self._done]
            if todo:   # written before (a cell's page): read again for the search
                index.update(search_index(self.fetch(todo)))
        path = self.episodes_path
        path.parent.mkdir(parents=True, exist_ok=True)
        hrefs = {e: self._href(Path(self._done[e]), path.parent) + "?from=episodes"
                 for e in ids if e in self._done}
        missing = len(ids) - len(hrefs)
        body = episodes_page(table, hrefs, index, self.actions)
        if missing:
            body = (f'<p class="ak-muted">{missing} episode(s) have no transcript in the '
                    "sources read: listed without a conversation.</p>") + body
        title = f"All episodes ({len(ids)})"
        if total > len(ids):
            title = f"Episodes ({len(ids):,} of {total:,})"
            body = (f'<p class="ak-muted">{len(ids):,} of the report\'s {total:,} episodes '
                    "are listed, as many of each configuration (the first in the scores' "
                    "order): <code>ak.find</code> and <code>ak.show</code> in a notebook "
                    "reach every one.</p>") + body
        self._write(path, _page(title, body, nav=self._nav(path),
                                crumbs=self._crumbs(path, (None, "All episodes"))))
        link = self._href(path, self.out_dir)
        what = f"All {len(ids)} episodes" if total == len(ids) else \
            f"{len(ids):,} of the {total:,} episodes"
        return _Shown(f'<p class="ak-episodes-link"><a href="{html.escape(link)}">{what}'
                      "</a>: sortable and filterable, with a search "
                      "across the transcripts (text, tool, role, action-diff status) and "
                      "every conversation.</p>")

    def episode_list(self, name: str, title: str, episode_ids: Sequence[str]) -> Path:
        """Write the page listing these episodes; its path.

        When they are one task's episodes under exactly two configurations (a flip), the
        page opens with a link to the two conversations side by side (:meth:`flip_page`).
        """
        from .pages import PAGE_SCRIPT

        esc = html.escape
        ids = list(dict.fromkeys(map(str, episode_ids)))
        path = self._path("episodes", name)
        pages = self.conversations(ids[:self.max_conversations])
        pages.update({e: self._done[e] for e in ids if e in self._done})   # written before
        table = self.table.set_index("episode_id")
        came = f"?from=list:{path.stem}"
        rows = []
        for eid in ids[:self.max_listed]:
            link = esc(eid)
            if eid in pages:
                href = self._href(Path(pages[eid]), path.parent) + came
                link = f'<a href="{esc(href)}">{link}</a>'
            if eid in table.index:
                row = table.loc[eid]
                div = (f"{esc(row['first_divergence'])} at turn {row['divergence_turn']}"
                       if row["first_divergence"] else "")
                cells = [esc(row["configuration"]), esc(row["task"]), _label(row["trial"]),
                         _number(row["reward"]), row["outcome"], div,
                         esc(str(row["review_errors"]))]
            else:
                cells = ["", "", "", "–", "–", "", "not reviewed"]
            rows.append(f"<tr><td>{link}</td>" + "".join(f"<td>{c}</td>" for c in cells)
                        + "</tr>")
        note = ""
        if len(ids) > self.max_listed:
            note += (f'<p class="ak-muted">The first {self.max_listed} of {len(ids)} episodes '
                     "are listed.</p>")
        linked = sum(e in pages for e in ids)
        if linked < len(ids):
            note += (f'<p class="ak-muted">Conversations are linked for {linked} '
                     f"of {len(ids)} episodes; show any other with "
                     "<code>ak.show(episode_id, episodes=ds)</code>.</p>")
        flip = self._flip_for(name, ids, path)
        body = (f'{flip}<p class="ak-muted">{len(ids)} episode(s).</p>{note}'
                '<div class="ak-sortable"><table><thead><tr><th>episode</th>'
                "<th>configuration</th><th>task</th><th>trial</th><th>reward</th>"
                "<th>outcome</th><th>first divergence</th><th>review errors</th></tr></thead>"
                "<tbody>" + "".join(rows) + "</tbody></table></div>")
        self._write(path, _page(title, body, nav=self._nav(path),
                                crumbs=self._crumbs(path, (None, title)),
                                scripts=[PAGE_SCRIPT]))
        return path

    # ------------------------------------------------------------------ flips
    def _flip_for(self, name: str, ids: Sequence[str], list_path: Path) -> str:
        """A link to the flip page of these episodes, when they are one task under two
        configurations (else empty)."""
        table = self.table.set_index("episode_id")
        known = table.reindex([e for e in ids if e in table.index])
        if not len(known) or known["task"].nunique() != 1 \
                or known["configuration"].nunique() != 2:
            return ""
        target = self.flip_page(name, ids)
        if target is None:
            return ""
        href = self._href(target, list_path.parent) + f"?from=list:{list_path.stem}"
        return (f'<p class="ak-flip-link"><a href="{html.escape(href)}">The two '
                "configurations side by side</a>, aligned at the first divergence.</p>")

    def _side(self, rows: pd.DataFrame) -> str:
        """The episode that shows its configuration's outcome on the task: a pass where
        most passed, a fail where most failed (the first trial of those)."""
        passed = rows["outcome"].eq("pass")
        want = "pass" if passed.mean() >= 0.5 else "fail"
        pick = rows[rows["outcome"] == want]
        pick = pick if len(pick) else rows
        return str(pick.sort_values(["trial"]).index[0])

    def flip_page(self, name: str, episode_ids: Sequence[str]) -> Path | None:
        """Write the page showing one task's episodes under two configurations side by
        side: one episode of each (its configuration's usual outcome on the task), each
        labelled with its configuration, reward and outcome, with its action diff, the
        conversations aligned at the first divergence. Its path (None without both
        transcripts)."""
        from .conversation import render_messages

        esc = html.escape
        table = self.table.set_index("episode_id")
        known = table.reindex([e for e in dict.fromkeys(map(str, episode_ids))
                               if e in table.index])
        configs = list(dict.fromkeys(known["configuration"]))
        chosen = [self._side(known[known["configuration"] == c]) for c in configs]
        records = {str(ep["episode_id"]): ep for ep in self.fetch(chosen)}
        if len(records) != 2:
            return None
        self.conversations(chosen)
        path = self._path("flips", name)
        turns = [known.loc[e, "divergence_turn"] for e in chosen]
        found = [int(t) for t in turns if t is not pd.NA and pd.notna(t)]
        align = min(found) if found else None
        heads, diffs, before, after = [], [], [], []
        for eid in chosen:
            row = known.loc[eid]
            conv = self._href(Path(self._done[eid]), path.parent) + f"?from=flip:{path.stem}"
            heads.append(
                f'<div class="ak-side-head"><b>{esc(row["configuration"])}</b><br>'
                f'<span class="ak-muted">{esc(eid)} · trial {_label(row["trial"])}</span><br>'
                f'reward {_number(row["reward"])} · <span class="ak-{esc(row["outcome"])}">'
                f'{esc(row["outcome"])}</span> · <a class="ak-side-link" href="{esc(conv)}">'
                "whole conversation</a></div>")
            diffs.append(self._diff_list(eid))
            messages = list(records[eid].get("messages") or ())
            turn = row["divergence_turn"]
            cut = int(turn) if turn is not pd.NA and pd.notna(turn) else align
            first = [m for m in messages if cut is None or (m.get("turn_idx") is not None
                                                            and m["turn_idx"] < cut)]
            rest = [m for m in messages if m not in first]
            marks = self._marks(eid)
            before.append("".join(render_messages(first, marks=marks)))
            after.append("".join(render_messages(rest, marks=marks)))
        what = []
        for eid in chosen:
            row = known.loc[eid]
            what.append(f"{row['first_divergence']} at turn {row['divergence_turn']}"
                        if row["first_divergence"] else "no divergence from the expected "
                        "actions" + (f" (shown from turn {align} on, as the other side)"
                                     if align is not None else ""))
        line = ("first divergence — left: " + what[0] + "; right: " + what[1])
        task = known["task"].iloc[0]
        body = (f'<p class="ak-muted">Task {esc(str(task))}: one episode of each '
                "configuration (its usual outcome on the task), the messages before each "
                "side's first divergence in the first row, from it on in the second.</p>"
                '<div class="ak-flip">' + "".join(heads) + "".join(
                    f'<div class="ak-side-diff">{d}</div>' for d in diffs)
                + "".join(f'<div class="ak-conv ak-side">{b}</div>' for b in before)
                + f'<div class="ak-divergence">{esc(line)}</div>'
                + "".join(f'<div class="ak-conv ak-side">{a}</div>' for a in after)
                + "</div>")
        list_path = self._path("episodes", name)
        back = self._href(list_path, path.parent)
        title = f"Flip on {task}: side by side"
        self._write(path, _page(title, body, nav=self._nav(path),
                                crumbs=self._crumbs(path, (back, "Episodes of the flip"),
                                                    (None, title)),
                                scripts=[BACK_SCRIPT], back=back))
        return path

    def _diff_list(self, eid: str) -> str:
        """One episode's action diff as a list (status, tool, turn, expected and actual)."""
        esc = html.escape
        if self.actions is None or not len(self.actions):
            return '<p class="ak-muted">no action diff</p>'
        rows = self._actions_of(eid)
        if not len(rows):
            return '<p class="ak-muted">no expected actions</p>'
        better = expected_marks(rows)
        items = []
        for _, r in rows.iterrows():
            status = str(r["status"]).replace("_", " ")
            turn = "" if pd.isna(r["turn_idx"]) else f" (turn {int(r['turn_idx'])})"
            text = f"{status}: {r['name']}{turn}"
            if r["status"] == "wrong_arguments":
                label = f"wrong arguments: {r['name']} ({r['diff_args']})"
                text = better.get(label, label) + turn
            items.append(f"<li>{esc(text)}</li>")
        return "<b>action diff</b><ul>" + "".join(items) + "</ul>"

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
        head = "".join(f"<th>{esc(str(c)).replace('_', '_<wbr>')}</th>"
                       for c in [*rows, *metrics])
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
                # the interval on a line of its own: a wide taxonomy fits a window
                text = (f"{_number(r['estimate'], digits)}<br><span class=\"ak-ci\">"
                        f"[{_number(r['ci_low'], digits)}, {_number(r['ci_high'], digits)}]"
                        "</span>")
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
        return _Shown(f'<div class="ak-table ak-wrap" id="{esc(anchor)}">{table}</div>')

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
        return _Shown(f'<div class="ak-table ak-wrap" id="{esc(anchor)}">{table}</div>')


#: The header of a drill-down page as :func:`~.pages.pages_header` writes it.
_HEADER = re.compile(r'<nav aria-label="report pages" class="ak-pages">.*?</nav>', re.DOTALL)


def fill_headers(run_dir: str | Path, pages: Sequence[tuple[str, str]]) -> int:
    """Give every drill-down page under ``run_dir`` the report's whole header, once every
    notebook has run (a notebook writes its pages before it knows which others will
    have one).

    ``pages`` are (href from ``run_dir``, title) of the report's pages, the index first, as
    the notebook pages' header lists them; each page keeps its link to its own episodes
    page. Only the header changes: it holds no script or style, so each page's policy
    (the sha256 of its scripts and stylesheet) stays true. Returns the pages rewritten.
    """
    from bs4 import BeautifulSoup

    from .pages import pages_header

    run_dir = Path(run_dir)
    done = 0
    for folder in sorted(run_dir.glob("*_pages")):
        if folder.is_symlink() or not folder.is_dir():
            continue
        own = folder / "episodes.html"
        notebook = folder.name[:-len("_pages")] + ".html"
        for path in sorted(folder.rglob("*.html")):
            if path.is_symlink():
                continue
            up = "../" * (len(path.relative_to(run_dir).parts) - 1)
            links = [(up + href, title) for href, title in pages]
            if own.is_file():
                links.append((os.path.relpath(own, path.parent).replace(os.sep, "/"),
                              "All episodes"))
            current = next((up + h for h, _ in pages if h == notebook), None) \
                if path == own else None
            nav = "".join(str(p) for p in pages_header(BeautifulSoup("", "html.parser"),
                                                        links, current=current))
            text = path.read_text("utf-8")
            new, n = _HEADER.subn(lambda _m, nav=nav: nav, text, count=1)
            if n and new != text:
                from .outdir import write_text_checked

                write_text_checked(path, new)
                done += 1
    return done
