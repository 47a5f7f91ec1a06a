"""The pages' policy in Chromium: a style attribute that slipped into a page is refused,
and no image is loaded from a file (issue 41, item 9)."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from accordkit.report.pages import seal_page

pytestmark = [pytest.mark.browser]


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def test_a_slipped_style_overlay_and_a_local_image_are_refused(visit, tmp_path):
    # the reproduction: under style-src 'unsafe-inline' a style attribute that escaped the
    # escaping laid a white box with fake numbers over the table; img-src file: showed any
    # file of the disk
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "own.png").write_bytes(_png())
    (tmp_path.parent / "elsewhere.png").write_bytes(_png())
    embedded = base64.b64encode(_png()).decode("ascii")
    sealed = seal_page(
        "<html><head><style>td{color:#111}</style></head><body>"
        "<p id='kept' style='font-weight:600;position:fixed;top:0'>kept</p>"
        "<table><tr><td id='real'>0.41</td></tr></table>"
        f"<img id='data' src='data:image/png;base64,{embedded}'>"
        "<img id='own' src='figures/own.png'>"
        f"<img id='other' src='{(tmp_path.parent / 'elsewhere.png').as_uri()}'>"
        "</body></html>")
    slipped = ("<div id='fake' style='position:fixed;top:0;left:0;width:100%;height:100%;"
               "background:#fff;z-index:99'>0.99</div>")
    page = tmp_path / "page.html"
    page.write_text(sealed.replace("</body>", slipped + "</body>"), encoding="utf-8")
    v = visit(page.as_uri())
    look = v.page.evaluate(
        "['kept','fake'].map(i => {const s = getComputedStyle(document.getElementById(i));"
        " return [i, s.position, s.fontWeight, s.zIndex];})")
    assert look == [["kept", "static", "600", "auto"], ["fake", "static", "400", "auto"]]
    widths = v.page.evaluate(
        "['data','own','other'].map(i => document.getElementById(i).naturalWidth)")
    assert widths == [1, 0, 0], "only the embedded image shows"
    refused = [text for kind, text in v.errors if "Content Security Policy" in text]
    assert any("inline style" in t for t in refused) and sum("img-src" in t for t in refused) == 2
