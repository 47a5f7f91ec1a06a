"""What notebooks call to write their tables and figures with provenance attached.

A notebook creates one :class:`ReportOutputs` and hands it every table and figure it shows:
tables are written as CSV (with a ``.provenance.json`` sidecar), Markdown and LaTeX, and
returned as HTML for display; figures are written as PNG and SVG with the provenance line
in their metadata.

Everything here treats names and values from the data (models, domains, task ids, tool
names) as hostile: every cell, header, caption and attribute of the HTML it returns is
escaped, and file names are :func:`safe_file_name` slugs, checked to stay inside their
folder. In every CSV, a text cell or header that a spreadsheet would run as a formula
(starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written with a
leading ``'``, as spreadsheet tools expect (:func:`spreadsheet_safe`); numbers, also
negative ones, stay numbers.
"""

from __future__ import annotations

import html as _html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from numpy import bool_ as np_bool

from ..tables import format_table, interval_caption
from .filenames import UnsafeOutputPathError, safe_file_name
from .provenance import provenance_line
from .spreadsheet import FORMULA_STARTS, _safe_cell  # noqa: F401  (FORMULA_STARTS: public here too)

__all__ = ["ReportOutputs", "escaped_frame_html", "KEY_COLUMNS", "key_columns_first",
           "display_values", "spreadsheet_safe", "write_csv"]

#: Columns that say what a row is: a displayed table shows them first, in this order.
KEY_COLUMNS = ("benchmark", "domain", "task_set", "configuration", "agent_model", "method",
               "user_model", "user_implementation", "persona", "judge", "judge_model",
               "metric", "item", "between_value", "baseline", "k", "effect")
#: Long identifying text, shown after everything else.
TRAILING_COLUMNS = ("source", "upstream_mode")

_COUNT = re.compile(r"^(n_|#|num_)|_(count|episodes|tasks|calls|trials|shifts|turns|rows)$"
                    r"|^(episodes|tasks|trials|count|k|total_trials|trials_per_task|rollout|"
                    r"turns|shifts|calls)$")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell and header that a spreadsheet would run as a formula
    prefixed with ``'`` (numbers, and text that is a plain number, are left as they are).

    Examples
    --------
    >>> f = pd.DataFrame({"agent_model": ["=SUM(A1:A9)", "-rf", "gpt"],
    ...                   "estimate": [-0.5, 0.25, 1.0], "delta": ["-0.5", "+1", "@x"]})
    >>> spreadsheet_safe(f).to_dict("list")
    {'agent_model': ["'=SUM(A1:A9)", "'-rf", 'gpt'], 'estimate': [-0.5, 0.25, 1.0], 'delta': ['-0.5', '+1', "'@x"]}
    """
    out = frame.copy()
    for i in range(frame.shape[1]):
        col = frame.iloc[:, i]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        values = col.astype(object)
        safe = values.map(_safe_cell)
        if not safe.equals(values):
            out.isetitem(i, safe)
    if not isinstance(frame.columns, pd.MultiIndex):
        out.columns = [_safe_cell(c) for c in frame.columns]
    return out


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` as CSV (no index) with formula-like cells made safe
    (:func:`spreadsheet_safe`).

    A text holding a carriage return would end its row for a CSV reader (pandas quotes
    only fields with ``\n``): such a table is written with every text field quoted.
    """
    import csv

    safe = spreadsheet_safe(frame)
    texts = [safe.iloc[:, i] for i in range(safe.shape[1])
             if not pd.api.types.is_numeric_dtype(safe.iloc[:, i].dtype)]
    has_cr = any(isinstance(c, str) and "\r" in c for c in safe.columns) or any(
        col.astype(object).map(lambda v: isinstance(v, str) and "\r" in v).any()
        for col in texts)
    safe.to_csv(path, index=False,
                quoting=csv.QUOTE_NONNUMERIC if has_cr else csv.QUOTE_MINIMAL)


def key_columns_first(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``frame`` reordered for reading: :data:`KEY_COLUMNS` first, then the
    values, then :data:`TRAILING_COLUMNS`.

    Examples
    --------
    >>> import pandas as pd
    >>> list(key_columns_first(pd.DataFrame(columns=["source", "x", "metric", "domain"])))
    ['domain', 'metric', 'x', 'source']
    """
    cols = list(frame.columns)
    keys = [c for c in KEY_COLUMNS if c in cols]
    tail = [c for c in TRAILING_COLUMNS if c in cols and c not in keys]
    rest = [c for c in cols if c not in keys and c not in tail]
    return frame[keys + rest + tail]


def _is_count(name: Any) -> bool:
    return isinstance(name, str) and bool(_COUNT.search(name))


def display_values(frame: pd.DataFrame, *, precision: int = 3,
                   na_rep: str = "–") -> pd.DataFrame:
    """Every cell of ``frame`` as the text a table shows: counts as whole numbers with
    thousands separators (``239``, not ``239.000``), other numbers with ``precision``
    decimals, missing values as ``na_rep``.

    A number is a count when it is whole and its column is one (integer typed, or named
    like ``n_*``, ``episodes``, ``trials_per_task``), or when its row's ``metric`` is one
    (``n_tool_calls`` in a long table of metrics).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"metric": ["tsr", "n_tool_calls"], "default": [0.91, 1239.0],
    ...                       "n_episodes": [36.0, None]})
    >>> display_values(frame).values.tolist()
    [['tsr', '0.910', '36'], ['n_tool_calls', '1,239', '–']]
    """
    import numbers

    row_counts = (frame["metric"].map(_is_count) if "metric" in frame
                  else pd.Series(False, index=frame.index))
    out = {}
    for col in frame.columns:
        values = frame[col]
        is_int = pd.api.types.is_integer_dtype(values) and not \
            pd.api.types.is_bool_dtype(values)
        count_col = is_int or _is_count(col)
        cells = []
        for value, row_count in zip(values, row_counts, strict=True):
            if value is None or (isinstance(value, float) and value != value) or \
                    value is pd.NA:
                cells.append(na_rep)
            elif isinstance(value, bool | np_bool):
                cells.append(str(bool(value)))
            elif isinstance(value, numbers.Integral):
                cells.append(f"{int(value):,}" if count_col or row_count else str(value))
            elif isinstance(value, numbers.Real):
                whole = float(value).is_integer()
                cells.append(f"{int(value):,}" if whole and (count_col or row_count)
                             else f"{float(value):.{precision}f}")
            else:
                cells.append(str(value))
        out[col] = cells
    return pd.DataFrame(out, index=frame.index, columns=frame.columns)


def escaped_frame_html(frame: pd.DataFrame, *, caption: str = "", precision: int = 3,
                       na_rep: str = "–") -> str:
    """A frame as an HTML table whose every cell, header, index label and caption is
    escaped (values from the data are text, never markup), key columns first
    (:func:`key_columns_first`) and counts as whole numbers (:func:`display_values`).

    Examples
    --------
    >>> import pandas as pd
    >>> page = escaped_frame_html(pd.DataFrame({"<b>m</b>": ["<img src=x onerror=alert(1)>"]}))
    >>> "<img" in page, "&lt;img src=x onerror=alert(1)&gt;" in page, "&lt;b&gt;m" in page
    (False, True, True)
    """
    frame = display_values(key_columns_first(frame), precision=precision, na_rep=na_rep)
    styler = frame.style.format(escape="html")
    styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
    styler = styler.hide(axis="index").set_caption(_html.escape(caption))
    return styler.to_html()


class _HTML:
    """Minimal rich-display wrapper (avoids importing IPython in library code)."""

    def __init__(self, html: str) -> None:
        self.html = html

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "<table: rendered as HTML in notebooks>"


@dataclass
class ReportOutputs:
    """Writes one notebook's tables and figures under ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Report folder; tables go to ``tables/`` and figures to ``figures/`` inside it.
    notebook : str
        Prefix for every file name.
    provenance : mapping, optional
        From :func:`accordkit.report.provenance.collect_provenance`; or a path to its JSON.
    figures_dir : str or Path, optional
        Where figures go instead of ``<out_dir>/figures`` (interactive runs use the
        project's ``figures/`` folder).
    """

    out_dir: str | Path
    notebook: str
    provenance: Mapping[str, Any] | str | Path | None = None
    figures_dir: str | Path | None = None
    written: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.figures_dir = Path(self.figures_dir) if self.figures_dir else self.out_dir / "figures"
        if isinstance(self.provenance, str | Path):
            path = Path(self.provenance)
            self.provenance = json.loads(path.read_text()) if path.is_file() else None
        self.provenance = dict(self.provenance or {})

    @property
    def line(self) -> str:
        """One-line provenance for captions."""
        return provenance_line(self.provenance) if self.provenance else ""

    def _stem(self, kind: str, name: str) -> Path:
        """Where the files of output ``name`` go, without their suffix (see
        :func:`safe_file_name`); ``UnsafeOutputPathError`` if that left the folder."""
        folder = self.figures_dir if kind == "figures" else self.out_dir / kind
        path = folder / f"{safe_file_name(self.notebook)}__{safe_file_name(name)}"
        folder.mkdir(parents=True, exist_ok=True)
        if path.resolve().parent != folder.resolve():
            raise UnsafeOutputPathError(f"output {name!r} would be written outside {folder}")
        return path

    def table(self, summary: pd.DataFrame, name: str, *, rows: str | Sequence[str],
              columns: str | Sequence[str] | None = "metric", caption: str | None = None,
              digits: int = 3, value: str = "estimate") -> _HTML:
        """Write a summary table (CSV, Markdown, LaTeX) and return it as HTML for display."""
        stem = self._stem("tables", name)
        write_csv(summary, stem.with_suffix(".csv"))
        meta = {"caption": caption, "provenance": self.provenance,
                "interval_settings": summary.attrs.get("provenance")}
        stem.with_suffix(".provenance.json").write_text(
            json.dumps(meta, indent=1, default=str), encoding="utf-8")
        kwargs = dict(rows=rows, columns=columns, digits=digits, value=value)
        parts = (caption, interval_caption(summary, value=value))
        shown = " ".join(p for p in parts if p)
        # the exported files stand alone and carry the provenance line; a page says it once,
        # under its header (accordkit.report.pages.finish_page)
        text = " ".join(p for p in (shown, f"[{self.line}]" if self.line else "") if p)
        md = format_table(summary, fmt="markdown", caption=text, **kwargs)
        tex = format_table(summary, fmt="latex", caption=text, **kwargs)
        html = format_table(summary, fmt="html", caption=shown, **kwargs)
        stem.with_suffix(".md").write_text(md.rstrip("\n") + "\n", encoding="utf-8")
        # a comment line: a line break in a source name must not end it
        comment = " ".join(self.line.splitlines())
        stem.with_suffix(".tex").write_text(f"% {comment}\n{tex}", encoding="utf-8")
        self.written += [stem.with_suffix(s) for s in (".csv", ".md", ".tex")]
        return _HTML(self._wrap_table(html, name, stem.with_suffix(".csv")))

    def _wrap_table(self, html: str, name: str, csv: Path) -> str:
        """Give a displayed table its stable anchor and the path of its CSV."""
        from .headline import table_anchor

        rel = os.path.relpath(csv, self.out_dir).replace(os.sep, "/")
        esc = _html.escape
        return (f'<div class="ak-table" data-ak-table="{esc(name)}" '
                f'id="{esc(table_anchor(self.notebook, safe_file_name(name)))}" '
                f'data-csv="{esc(rel)}">{html}</div>')

    def frame(self, frame: pd.DataFrame, name: str, *, caption: str = "",
              max_rows: int = 1000) -> _HTML:
        """Write a plain frame (no intervals) as CSV and return it as HTML for display."""
        stem = self._stem("tables", name)
        write_csv(frame, stem.with_suffix(".csv"))
        stem.with_suffix(".provenance.json").write_text(
            json.dumps({"caption": caption, "provenance": self.provenance}, indent=1,
                       default=str), encoding="utf-8")
        self.written.append(stem.with_suffix(".csv"))
        more = f" (first {max_rows} of {len(frame)} rows)" if len(frame) > max_rows else ""
        body = escaped_frame_html(frame.head(max_rows), caption=f"{caption}{more}")
        return _HTML(self._wrap_table(body, name, stem.with_suffix(".csv")))

    def figure(self, fig: Any, name: str, *, data: pd.DataFrame | None = None,
               alt: str | None = None) -> None:
        """Save a figure as PNG and SVG (and its data as CSV) with the provenance line.

        Inside a notebook the figure is shown once, with a stable anchor
        (``fig-<notebook>__<name>``) and a link to the CSV of ``data`` (the frame it was
        drawn from), then closed; in a plain script it stays open. The paths are added to
        :attr:`written`.

        Parameters
        ----------
        fig : matplotlib Figure or seaborn grid
        name : str
            File name after ``<notebook>__``.
        data : DataFrame, optional
            The numbers behind the figure, written next to it as CSV.
        alt : str, optional
            Text alternative for the image (default: the figure's title or ``name``).
        """
        from ..plots import save_figure

        stem = self._stem("figures", name)
        paths = save_figure(fig, stem, description=self.line)
        self.written += paths
        csv = None
        if data is not None:
            csv = stem.with_suffix(".csv")
            write_csv(data, csv)
            self.written.append(csv)
        _show_figure(fig, paths[0], anchor=f"fig-{stem.name}",
                     csv=None if csv is None else
                     os.path.relpath(csv, self.out_dir).replace(os.sep, "/"),
                     alt=alt or _figure_title(fig) or name.replace("_", " "))


def _figure_title(fig: Any) -> str:
    figure = getattr(fig, "figure", fig)
    title = getattr(getattr(figure, "_suptitle", None), "get_text", lambda: "")()
    if not title:
        for ax in getattr(figure, "axes", []):
            if ax.get_title():
                return ax.get_title()
    return title


def _show_figure(fig: Any, png: Path, *, anchor: str, csv: str | None, alt: str) -> None:
    """In a notebook: display the saved PNG with its anchor and CSV link, close the figure."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return
    if get_ipython() is None:
        return
    import base64

    import matplotlib.pyplot as plt

    data = base64.b64encode(png.read_bytes()).decode("ascii")
    anchor = _html.escape(anchor)
    link = (f'<figcaption class="ak-downloads"><a href="{_html.escape(csv)}" download>'
            "data behind this figure (CSV)</a></figcaption>" if csv else "")
    display(HTML(f'<figure class="ak-figure" id="{anchor}" style="margin:0">'
                 f'<img src="data:image/png;base64,{data}" alt="{_html.escape(alt)}" '
                 f'style="max-width:100%">{link}</figure>'))
    plt.close(getattr(fig, "figure", fig))
