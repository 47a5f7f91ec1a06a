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
    ("org/name", "org/name"),
])
def test_credentials_are_removed_and_everything_else_kept(given, recorded):
    assert redact_sources(given) == recorded


def test_nested_values_are_redacted_and_other_types_kept():
    value = {"inputs": [{"source": "http://u:p@h/x", "episodes": 3, "ok": True}],
             "pair": ("http://a:b@h/y", None)}
    assert redact_sources(value) == {"inputs": [{"source": "http://h/x", "episodes": 3,
                                                 "ok": True}], "pair": ("http://h/y", None)}
