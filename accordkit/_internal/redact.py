"""Credentials out of every source name that is written down (manifests, reports, logs).

A source may be a URL that carries a credential: ``https://user:TOKEN@host/run.json`` or
``https://host/run.json?sig=...&token=...`` (signed cloud links). accordkit reads it as
given, but what it records — the store's manifest, a report's provenance, pages, notebooks
and messages — names it with the user info removed (up to the authority's last ``@``, where URL parsers
split it) and the value of every query parameter
whose name looks secret (``token``, ``key``, ``secret``, ``sig``, ``signature``,
``password``, ``auth``, ``credential``, ``session``) replaced by ``REDACTED``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["redact_sources", "REDACTED"]

REDACTED = "REDACTED"

#: The user info of a URL, split as URL parsers split it: the authority runs to the first
#: ``/``, ``?`` or ``#`` (or white space, in running text) and the user info to its *last*
#: ``@`` — a password holding an unencoded ``@`` is removed whole.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#]*@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&;][^=&#\s]*(?:token|key|secret|sig|signature|password|passwd|pwd|auth"
    r"|credential|session)[^=&#\s]*=)[^&#\s]*")


def redact_sources(value: Any) -> Any:
    """``value`` with credentials removed from every URL in it (text, or lists, tuples and
    mappings holding text; other values are returned as they are).

    Examples
    --------
    >>> redact_sources("http://user:TOKEN@host/run.json")
    'http://host/run.json'
    >>> redact_sources("http://alice:p@ssSECRET@host/run.json")
    'http://host/run.json'
    >>> redact_sources("file https://h/r.json?X-Amz-Signature=abc&page=2, record 3")
    'file https://h/r.json?X-Amz-Signature=REDACTED&page=2, record 3'
    >>> redact_sources({"inputs": [{"source": "s3://k:s@b/x.parquet", "episodes": 2}]})
    {'inputs': [{'source': 's3://b/x.parquet', 'episodes': 2}]}
    """
    if isinstance(value, str):
        if "://" not in value:
            return value
        return _SECRET_QUERY.sub(rf"\g<1>{REDACTED}", _USERINFO.sub(r"\1", value))
    if isinstance(value, dict):
        return {k: redact_sources(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_sources(v) for v in value)
    return value
