"""Credentials out of recorded source names (accordkit._internal.redact)."""

from __future__ import annotations

import pytest

from accordkit._internal.redact import redact_sources


@pytest.mark.parametrize("given, recorded", [
    ("http://user:TOKEN@host/run.json", "http://host/run.json"),
    ("https://TOKEN@host:8443/a/b.json", "https://host:8443/a/b.json"),
    ("s3://AKIA:secret@bucket/x.parquet", "s3://bucket/x.parquet"),
    ("https://h/r.json?sig=abc&sv=2024&se=1", "https://h/r.json?sig=REDACTED&sv=2024&se=1"),
    ("https://h/r.json?access_token=a&api_key=b&page=2",
     "https://h/r.json?access_token=REDACTED&api_key=REDACTED&page=2"),
    ("https://h/r?X-Amz-Credential=c&X-Amz-Security-Token=t&X-Amz-Signature=s",
     "https://h/r?X-Amz-Credential=REDACTED&X-Amz-Security-Token=REDACTED"
     "&X-Amz-Signature=REDACTED"),
    ("file http://u:p@h/x.json, record 3, field reward: not a number",
     "file http://h/x.json, record 3, field reward: not a number"),
    ("data/runs/user@host.json", "data/runs/user@host.json"),     # a path, not a URL
    ("http://alice:p@ssSECRET@host/run.json", "http://host/run.json"),   # issue 41.4
    ("https://a@b:c@d@host:8443/x?y=1", "https://host:8443/x?y=1"),
    ("see http://u:p@ss@h/x.json, record 3", "see http://h/x.json, record 3"),
    ("org/name", "org/name"),
])
def test_credentials_are_removed_and_everything_else_kept(given, recorded):
    assert redact_sources(given) == recorded


def test_nested_values_are_redacted_and_other_types_kept():
    value = {"inputs": [{"source": "http://u:p@h/x", "episodes": 3, "ok": True}],
             "pair": ("http://a:b@h/y", None)}
    assert redact_sources(value) == {"inputs": [{"source": "http://h/x", "episodes": 3,
                                                 "ok": True}], "pair": ("http://h/y", None)}


@pytest.mark.parametrize("url", [
    "http://alice:p@ssSECRET@host/run.json",
    "https://a@b@c@host:8443/x/y.json?page=2",
    "http://u:p@ss@host?x=1",
    "http://u:p@ss@host#frag",
    "s3://KEY:se@cr@et@bucket/part.parquet",
    "http://host/path@not-userinfo/x.json",
    "http://u@host/a@b",
])
def test_user_info_is_split_where_the_url_parser_splits_it(url):
    """What is kept of the authority is what ``urllib.parse`` takes as the host (and port):
    nothing of the user info, whatever ``@`` it holds, and nothing of the path is lost."""
    from urllib.parse import urlsplit

    given, kept = urlsplit(url), urlsplit(redact_sources(url))
    assert kept.netloc == given.netloc.rpartition("@")[2]
    assert (kept.scheme, kept.path, kept.query, kept.fragment) == (
        given.scheme, given.path, given.query, given.fragment)
