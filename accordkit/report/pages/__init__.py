"""Turn an exported notebook page into a report page people can navigate.

nbconvert's HTML is a faithful copy of the notebook: one long scroll, scripts fetched from
a CDN, warnings wherever a cell printed them. :func:`finish_page` rewrites it, offline, in
named passes run in order (:data:`PASSES`, listed in docs/report.md):

* every section heading, table and figure gets a stable anchor, and a table of contents
  (``nav.ak-toc``) after the page title links them all;
* warnings a cell printed to stderr (and elements marked ``ak-note``) move into one
  "Notes" box near the top of the page, each linking back to where it was raised;
* a header on top links the report's index and its other pages, with the page's one
  provenance line under it (captions no longer repeat it);
* tables get sticky headers and their first column stays in view when they scroll
  sideways; every table of data is sortable and filterable, and one longer than
  ``page_rows`` rows is paged too, by a small script embedded in the page (no network, no
  dependency); merged row labels are repeated on each row, so that a sorted or filtered
  row still says what it is;
* configuration labels (``model (method) | user: …``) are cut to what tells the rows of
  a table apart, with the full label as their hover text, and the table says once what
  every row shares;
* the page follows the reader's light or dark colour scheme (``prefers-color-scheme``);
* any ``<script src=...>`` pointing off the machine is removed: a report opens offline
  with no failed request and no console error;
* nothing in the page body runs: every script, frame, object and embed the notebook's
  outputs held is removed, and so is every event-handler attribute (``onerror=``) and
  ``javascript:`` link. Values from the data are escaped where they are rendered; this is
  the second line, for anything that slipped through. The third is a Content-Security-Policy
  (:func:`content_security_policy`) that lets only the page's own scripts run, named by
  their sha256;
* no inline style is trusted: the policy names each ``<style>`` element of the page's head
  by its sha256 and allows nothing else (no ``'unsafe-inline'``). A notebook output's own
  ``<style>`` element is removed (pandas' default table rules are in :data:`PAGE_CSS`), and
  every ``style=`` attribute becomes a class of one generated stylesheet, keeping only
  declarations that cannot move or draw over anything else (:func:`seal_page`): an
  escaping slip cannot lay a box of fake numbers over the real ones. Images (and fonts)
  are embedded in the page (``data:``) and none is loaded from a file: for a page opened
  from disk a browser counts every local file as the page's own origin (``'self'``), so
  only embedding keeps the page from showing other files of the disk.

The function is pure (text in, text out), so it is unit-tested without a browser; the
browser tests in ``tests/browser`` check what a reader sees.

The package, one job a module:

* :mod:`.finish`: :func:`finish_page`, its passes and the pages header;
* :mod:`.table_rows`: merged row labels repeated, configuration labels shortened;
* :mod:`.assets`: the pages' style and script (:func:`own_script`);
* :mod:`.policy`: active content, the Content-Security-Policy, safe style declarations;
* :mod:`.seal`: :func:`seal_page`, a whole page made to obey its policy.
"""

from __future__ import annotations

from .assets import DARK_CSS, PAGE_CSS, PAGE_SCRIPT, own_script
from .finish import PASSES, PageOutline, finish_page, pages_header
from .policy import content_security_policy, safe_declarations, strip_active_content
from .seal import seal_page

__all__ = ["finish_page", "PageOutline", "PASSES", "PAGE_CSS", "PAGE_SCRIPT", "DARK_CSS",
           "own_script", "content_security_policy", "strip_active_content", "pages_header",
           "seal_page", "safe_declarations"]
