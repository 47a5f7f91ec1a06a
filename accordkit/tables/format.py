"""Paper-style result tables from :func:`accordkit.stats.summarize` / ``compare`` output.

``format_table`` pivots a tidy summary (e.g. model x method rows, metric columns) and
renders each cell as ``estimate [ci_low, ci_high]``, marking small cells and writing a
caption that says how the intervals were made. HTML and LaTeX go through pandas'
``Styler``; markdown is rendered here, because ``DataFrame.to_markdown`` needs the
optional ``tabulate`` package.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Sequence

import pandas as pd

__all__ = ["format_table", "interval_caption", "FORMATS"]

FORMATS = ("markdown", "latex", "html")
_INTERVAL_VALUES = ("estimate", "delta")
_SMALL_NOTE = "Fewer than 10 clusters or 10 events: interpret with care."
_METHOD_NAMES = {"bca": "BCa", "percentile": "percentile", "basic": "basic", "t": "t"}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def format_table(
    summary: pd.DataFrame,
    *,
    rows: str | Sequence[str],
    columns: str | Sequence[str] | None = None,
    fmt: str = "markdown",
    digits: int = 3,
    value: str = "estimate",
    small_mark: str = "†",
    caption: str | None = None,
) -> str:
    """Render a summary as a pivoted table with ``estimate [low, high]`` cells.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`~accordkit.stats.summarize` or :func:`~accordkit.stats.compare`
        (or a concatenation of several).
    rows : str or list of str
        Columns whose values label the table rows (e.g. ``["agent_model", "method"]``).
    columns : str, list of str, or None
        Columns whose values label the table columns (e.g. ``"metric"``). ``None``
        gives a single column named after ``value``. Each combination of ``rows`` and
        ``columns`` must pick at most one row of ``summary``.
    fmt : {"markdown", "latex", "html"}, default "markdown"
    digits : int, default 3
        Decimals of every number.
    value : str, default "estimate"
        The column shown. For ``"estimate"`` and ``"delta"`` the interval
        ``[ci_low, ci_high]`` follows; other columns (``p_adjusted``, ``n_clusters``)
        are shown alone. A missing interval end shows as a dash.
    small_mark : str, default "†"
        Appended to cells whose ``small_cell`` is True, and explained in a footnote.
        In LaTeX the default dagger is written ``$^\\dagger$``.
    caption : str, optional
        Replaces the caption built from ``summary.attrs["provenance"]`` (or, when the
        attributes were lost, e.g. by ``pd.concat``, from the setting columns).

    Returns
    -------
    str
        The table source. Markdown puts the caption and footnote after the table.

    Examples
    --------
    >>> import pandas as pd
    >>> from accordkit.tables import format_table
    >>> summary = pd.DataFrame({
    ...     "agent_model": ["a", "a", "b", "b"],
    ...     "metric": ["success", "outcome", "success", "outcome"],
    ...     "estimate": [0.644, 0.5, 0.7, 0.41], "ci_low": [0.612, 0.4, 0.65, 0.2],
    ...     "ci_high": [0.676, 0.6, 0.75, 0.62], "small_cell": [False, False, False, True],
    ... })
    >>> print(format_table(summary, rows="agent_model", columns="metric", caption="Demo."))
    | agent_model |              success |                outcome |
    | :---------- | -------------------: | ---------------------: |
    | a           | 0.644 [0.612, 0.676] |   0.500 [0.400, 0.600] |
    | b           | 0.700 [0.650, 0.750] | 0.410 [0.200, 0.620] † |
    <BLANKLINE>
    Demo.
    <BLANKLINE>
    † Fewer than 10 clusters or 10 events: interpret with care.
    """
    rows_, columns_ = _format_iv(summary, rows, columns, fmt, digits, value, small_mark)
    fmt = fmt.lower()
    show_interval = value in _INTERVAL_VALUES and {"ci_low", "ci_high"} <= set(summary.columns)
    small = (summary["small_cell"].fillna(False).astype(bool) if "small_cell" in summary
             else pd.Series(False, index=summary.index))
    mark = r"$^\dagger$" if (fmt == "latex" and small_mark == "†") else small_mark
    text = [
        _cell(r, value, digits, show_interval, mark if is_small else "", fmt)
        for (_, r), is_small in zip(summary.iterrows(), small, strict=True)
    ]
    table = _pivot(summary, rows_, columns_, pd.Series(text, index=summary.index), value)
    caption = interval_caption(summary, value=value) if caption is None else caption
    note = _SMALL_NOTE if bool(small.any()) and small_mark else ""
    if fmt == "markdown":
        return _markdown(table, caption, f"{small_mark} {note}" if note else "")
    if fmt == "html":
        return _html(table, caption, f"{small_mark} {note}" if note else "")
    return _latex(table, caption, note, mark)


def _as_names(arg: object, name: str, summary: pd.DataFrame) -> list[str]:
    names = [arg] if isinstance(arg, str) else list(arg) if isinstance(arg, list | tuple) else None
    if names is None or not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"`{name}` must be a column name or a non-empty list of names, got {arg!r}")
    for n in names:
        if n not in summary.columns:
            raise ValueError(f"`{name}` column {n!r} is not in the summary; columns are "
                             f"{', '.join(map(repr, map(str, summary.columns)))}")
    return names


def _format_iv(summary, rows, columns, fmt, digits, value, small_mark):
    if not isinstance(summary, pd.DataFrame):
        raise TypeError(f"`summary` must be a pandas DataFrame, got {type(summary).__name__}")
    rows_ = _as_names(rows, "rows", summary)
    columns_ = [] if columns is None else _as_names(columns, "columns", summary)
    if set(rows_) & set(columns_):
        raise ValueError(f"{sorted(set(rows_) & set(columns_))!r} is in both `rows` and `columns`")
    if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(map(repr, FORMATS))}; got {fmt!r}")
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 0:
        raise ValueError(f"`digits` must be a non-negative integer, got {digits!r}")
    if not isinstance(value, str) or value not in summary.columns:
        raise ValueError(f"`value` column {value!r} is not in the summary")
    if not isinstance(small_mark, str):
        raise TypeError(f"`small_mark` must be a string, got {small_mark!r}")
    keys = summary[rows_ + columns_]
    dup = keys.duplicated(keep=False)
    if dup.any():
        first = keys[dup].iloc[0]
        n_same = int((keys == first).all(axis=1).sum())
        raise ValueError(
            f"`rows` {rows_!r} and `columns` {columns_!r} do not pick a single row: "
            f"{n_same} rows share {first.to_dict()!r}; add the column that tells them apart "
            "(e.g. 'metric' or a `by` column) to `rows` or `columns`, or filter first"
        )
    return rows_, columns_


def _number(x: object, digits: int, fmt: str) -> str:
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return "--" if fmt == "latex" else "–"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real) and math.isinf(x):
        # an open interval end: a Kaplan–Meier median not reached in the resamples
        return "not reached" if x > 0 else ("-\\infty" if fmt == "latex" else "−∞")
    if isinstance(x, numbers.Real):
        return f"{float(x):.{digits}f}"
    return str(x)


def _cell(row: pd.Series, value: str, digits: int, interval: bool, mark: str, fmt: str) -> str:
    text = _number(row[value], digits, fmt)
    if interval:
        text += f" [{_number(row['ci_low'], digits, fmt)}, {_number(row['ci_high'], digits, fmt)}]"
    return f"{text} {mark}" if mark else text


def _ordered_index(frame: pd.DataFrame, names: list[str]) -> pd.Index:
    """Index of the distinct values of ``names`` in order of first appearance."""
    if len(names) == 1:
        return pd.Index(pd.unique(frame[names[0]]), name=names[0])
    return pd.MultiIndex.from_frame(frame[names].drop_duplicates())


def _pivot(summary, rows_, columns_, text: pd.Series, value: str) -> pd.DataFrame:
    data = summary[rows_ + columns_].assign(_cell=text.to_numpy())
    index = _ordered_index(summary, rows_)
    if not columns_:
        table = data.set_index(rows_)["_cell"].to_frame(value)
        return table.reindex(index)
    table = data.pivot(index=rows_, columns=columns_, values="_cell")
    return table.reindex(index=index, columns=_ordered_index(summary, columns_))


def interval_caption(summary: pd.DataFrame, *, value: str = "estimate") -> str:
    """The caption :func:`format_table` writes by default: what the cells show and how the
    intervals were made (level, method, resamples, clusters, seed, pairing).

    Useful to extend the default caption instead of replacing it.
    """
    interval = value in _INTERVAL_VALUES and {"ci_low", "ci_high"} <= set(summary.columns)
    return _caption(summary, value, interval)


def _caption(summary: pd.DataFrame, value: str, interval: bool) -> str:
    prov = dict(summary.attrs.get("provenance", {}))
    for key in ("confidence", "n_resamples", "seed"):
        if key not in prov and key in summary and summary[key].nunique() == 1:
            prov[key] = summary[key].iloc[0]
    if "method" not in prov and "ci_method" in summary and summary["ci_method"].nunique() == 1:
        prov["method"] = summary["ci_method"].iloc[0]
    parts = []
    what = "Difference from baseline" if value == "delta" else value.replace("_", " ").capitalize()
    if interval:
        conf = prov.get("confidence")
        level = f"{conf * 100:g}% " if conf is not None else ""
        method = _METHOD_NAMES.get(prov.get("method"), prov.get("method") or "bootstrap")
        parts.append(f"{what} [{level}{method} confidence interval]")
        used = set(summary["ci_method"].dropna()) if "ci_method" in summary else set()
        if prov.get("method") == "bca" and "percentile" in used:
            parts.append("percentile interval where BCa was undefined")
    else:
        parts.append(what)
    details = []
    if prov.get("n_resamples") is not None:
        details.append(f"{int(prov['n_resamples']):,} bootstrap resamples")
    cluster = prov.get("cluster")
    if prov.get("function") == "compare":
        pass  # the pairing unit is named below
    elif cluster:
        details.append(f"clusters: {cluster}")
    elif "cluster" in prov:
        details.append("rows resampled independently")
    if prov.get("strata"):
        details.append(f"strata: {prov['strata']}")
    if prov.get("seed") is not None:
        details.append(f"seed {prov['seed']}")
    if prov.get("function") == "compare":
        details.append(f"scenarios paired on {prov.get('pair_on')}")
        details.append(f"p-values: {prov.get('test')}, adjusted: {prov.get('adjust')}")
    text = "; ".join(parts)
    return text + (f" ({', '.join(details)})." if details else ".")


def _flat(label: object) -> str:
    return " / ".join(map(str, label)) if isinstance(label, tuple) else str(label)


#: Characters a Markdown table cell may not hold as they are: HTML markup (Markdown renders
#: inline HTML), the cell separator, and line breaks (a table row is one line).
_MARKDOWN_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|",
                                   "\n": " ", "\r": " "})


def _markdown_escape(s: str) -> str:
    """Text safe in a Markdown table: no markup, no broken row (see :data:`_MARKDOWN_ESCAPES`).

    >>> _markdown_escape("<script>a|b</script>\\nc & d")
    '&lt;script&gt;a\\\\|b&lt;/script&gt; c &amp; d'
    """
    return " ".join(s.translate(_MARKDOWN_ESCAPES).splitlines())


def _markdown(table: pd.DataFrame, caption: str, footnote: str) -> str:
    esc = _markdown_escape

    head = [esc(_flat(n)) for n in table.index.names] + [esc(_flat(c)) for c in table.columns]
    body = []
    for label, values in zip(table.index, table.to_numpy(), strict=True):
        labels = label if isinstance(label, tuple) else (label,)
        body.append([esc(str(v)) for v in labels]
                    + [esc("" if pd.isna(v) else str(v)) for v in values])
    n_index = table.index.nlevels
    widths = [max(3, len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        padded = [c.ljust(w) if i < n_index else c.rjust(w)
                  for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = [(":" + "-" * (w - 1)) if i < n_index else ("-" * (w - 1) + ":")
            for i, w in enumerate(widths)]
    lines = [line(head), "| " + " | ".join(rule) + " |", *(line(r) for r in body)]
    out = "\n".join(lines)
    for extra in (caption, footnote):
        if extra:
            out += "\n\n" + esc(extra)
    return out


def _html(table: pd.DataFrame, caption: str, footnote: str) -> str:
    styler = table.style.format(na_rep="", escape="html").format_index(escape="html", axis=0)
    styler = styler.format_index(escape="html", axis=1)
    text = html.escape(caption)
    if footnote:
        text += "<br>" + html.escape(footnote)
    return styler.set_caption(text).to_html()


def _latex_escape(s: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in s)


def _latex(table: pd.DataFrame, caption: str, note: str, mark: str) -> str:
    # cells were built with LaTeX dashes and mark; escape the rest of each cell here so
    # the mark survives (Styler's escape would escape the `$` of `$^\dagger$`)
    def esc_cell(v: object) -> str:
        if pd.isna(v):
            return ""
        s = str(v)
        if mark and s.endswith(" " + mark):
            return _latex_escape(s[: -len(mark) - 1]) + " " + mark
        return _latex_escape(s)

    body = table.map(esc_cell)
    # the names of the row and column levels head the table too
    body.index.names = [None if n is None else _latex_escape(str(n)) for n in body.index.names]
    body.columns.names = [None if n is None else _latex_escape(str(n))
                          for n in body.columns.names]
    styler = body.style.format_index(escape="latex", axis=0).format_index(escape="latex", axis=1)
    text = _latex_escape(caption)
    if note:
        text += " " + mark + " " + _latex_escape(note)
    return styler.to_latex(caption=text, hrules=True, position_float="centering",
                           multirow_align="t", multicol_align="c")
