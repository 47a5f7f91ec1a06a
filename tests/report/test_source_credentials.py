"""A source URL carrying a credential is read, and never written down (issue 35, item 4).

The password holds an unencoded ``@`` (issue 41, item 4): clients split the user info at the
authority's last ``@``, so redaction must too — the tail of the password after its first
``@`` (``SECRETUSERTOKEN``) must not reach any file, nor any column of any store part.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from accordkit.cli import main

pytestmark = pytest.mark.network

SECRETS = ("SECRETUSERTOKEN", "SECRETQUERYSIG")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):   # the server's own log would print the URL asked for
        pass


@pytest.fixture
def served(tmp_path, tau2_dir):
    """A tau2 results file served on 127.0.0.1, and its URL with credentials in it."""
    root = tmp_path / "served"
    root.mkdir()
    shutil.copy(tau2_dir / "telecom_grok-3_5tasks_1trial.json", root / "run.json")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        yield (f"http://reader:p@ss{SECRETS[0]}@127.0.0.1:{port}/run.json"
               f"?sig={SECRETS[1]}&page=1")
    finally:
        server.shutdown()
        server.server_close()


def _files_naming_a_secret(folder: Path) -> list[str]:
    """Every file whose bytes hold a secret, and every Parquet column (read back, so a
    compressed page cannot hide one) whose values do."""
    import pyarrow.parquet as pq

    found = [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
             and any(s.encode() in p.read_bytes() for s in SECRETS)]
    parts = sorted(folder.rglob("*.parquet"))
    for part in parts:
        table = pq.read_table(part)
        for name in table.column_names:
            text = repr(table.column(name).to_pylist())
            if any(s in text for s in SECRETS):
                found.append(f"{part.relative_to(folder)}:{name}")
    return sorted(found)


def test_a_report_from_a_url_with_credentials_records_none_of_them(served, tmp_path, capsys,
                                                                   report_command):
    out = tmp_path / "rep"
    assert report_command("--source", served, "--out", str(out),
                          "--notebooks", "tau2_results", "error_analysis") == 0
    printed = capsys.readouterr()
    assert not any(s in printed.out + printed.err for s in SECRETS)
    assert len(list(out.rglob("*.html"))) >= 3          # the report was built from the URL
    assert _files_naming_a_secret(out) == []
    prov = (out / "provenance.json").read_text()
    assert "http://127.0.0.1:" in prov and "sig=REDACTED&page=1" in prov


def test_a_score_store_from_a_url_with_credentials_records_none_of_them(served, tmp_path,
                                                                          capsys):
    import json

    store = tmp_path / "store"
    assert main(["score", served, "--out", str(store)]) == 0
    printed = capsys.readouterr()
    assert not any(s in printed.out + printed.err for s in SECRETS)
    assert _files_naming_a_secret(store) == []
    assert len(list(store.rglob("*.parquet"))) >= 2     # the parts were searched
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["episodes"] == 5
    assert manifest["inputs"][0]["source"].endswith("/run.json?sig=REDACTED&page=1")
