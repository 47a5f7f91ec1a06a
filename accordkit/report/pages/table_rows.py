"""Tables of data on a finished page: a row label merged over rows repeated on each, and
configuration labels cut to what tells the rows apart."""

from __future__ import annotations

import copy

__all__ = ["NOT_DATA_TABLES", "repeat_row_labels", "shorten_configurations"]

#: Tables that are layout, not data: never sorted, paged or shortened.
NOT_DATA_TABLES = ("ak-toc", "ak-conv", "ak-head")


def repeat_row_labels(table) -> int:
    """Give every body row its own copy of the row labels merged over several rows
    (``rowspan``), so that each row says what it is when the table is sorted or filtered.
    The copies are marked ``ak-repeat`` (drawn lighter) and carry no ``id``. Returns how
    many cells were added.

    Examples
    --------
    >>> from bs4 import BeautifulSoup
    >>> soup = BeautifulSoup("<table><tbody><tr><th rowspan=2 id=a>air</th><td>1</td></tr>"
    ...                      "<tr><td>2</td></tr></tbody></table>", "html.parser")
    >>> repeat_row_labels(soup.table), [r.get_text("|") for r in soup.find_all("tr")]
    (1, ['air|1', 'air|2'])
    """
    if table.tbody is None:
        return 0
    carry: dict[int, tuple[object, int]] = {}
    added = 0
    for tr in table.tbody.find_all("tr", recursive=False):
        cells = tr.find_all(["td", "th"], recursive=False)
        row, col, queue = [], 0, list(cells)
        while queue or col in carry:
            if col in carry:
                cell, left = carry[col]
                clone = copy.copy(cell)
                for attr in ("rowspan", "id"):
                    clone.attrs.pop(attr, None)
                clone["class"] = [*clone.get("class", []), "ak-repeat"]
                row.append(clone)
                added += 1
                if left > 1:
                    carry[col] = (cell, left - 1)
                else:
                    del carry[col]
                col += 1
                continue
            cell = queue.pop(0)
            span = _int(cell.get("rowspan"))
            if span > 1:
                cell.attrs.pop("rowspan")
                carry[col] = (copy.copy(cell), span - 1)
            row.append(cell)
            col += _int(cell.get("colspan"))
        if len(row) != len(cells):
            for cell in cells:
                cell.extract()
            for cell in row:
                tr.append(cell)
    return added


def _int(value) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def shorten_configurations(soup, table) -> int:
    """Cut the configuration labels of a table's body to what tells its rows apart
    (:func:`accordkit.plots.labels.short_labels`), the full label as hover text, and say
    under the table what every row shares. Returns how many cells were shortened."""
    from ...plots.labels import shared_part, short_labels

    if table.tbody is None:
        return 0
    cells = [c for c in table.tbody.find_all(["td", "th"])
             if c.find(True) is None and c.get_text(strip=True)]
    texts = [c.get_text(strip=True) for c in cells]
    short = short_labels(texts)
    changed = 0
    for cell, text in zip(cells, texts, strict=True):
        if short.get(text, text) != text:
            span = soup.new_tag("span", attrs={"class": "ak-short", "title": text})
            span.string = short[text]
            cell.clear()
            cell.append(span)
            changed += 1
    if changed:
        note = soup.new_tag("p", attrs={"class": "ak-shared"})
        note.string = (f"Every configuration here: {shared_part(texts)} (hover a label for "
                       "it in full).")
        (table.find_parent(attrs={"data-ak-table": True}) or table).insert_after(note)
    return changed
