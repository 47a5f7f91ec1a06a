"""File and folder names of a report, made safe from names that come from the data.

Table names are built from domains, benchmarks and metric names, run folders from the values
of a parameter grid: any of them may hold ``/``, ``..``, a dot that looks like a suffix, or
markup. A name of plain characters is kept (readable file names for the common case); any
other becomes a slug plus a short hash of the name, so two names never share a file.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["safe_file_name", "run_folder", "UnsafeOutputPathError"]


class UnsafeOutputPathError(ValueError):
    """An output file would land outside the folder it belongs in."""


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]{1,120}")
_PLAIN_RUN = re.compile(r"[A-Za-z0-9_=+,-][A-Za-z0-9_.=+,-]{0,119}")


def safe_file_name(name: str) -> str:
    """A file name (without suffix) made from ``name``, which may come from the data.

    A name of letters, digits, ``_`` and ``-`` only (up to 120 characters) is kept as it
    is; any other is turned into such a slug and given the first 8 hex digits of its
    sha256, so two names never share a file (``airline.v2`` and ``airline_v2``) and no
    name reaches outside its folder (``../x``) or picks its suffix (``a.csv``).

    Examples
    --------
    >>> safe_file_name("table3_by_domain")
    'table3_by_domain'
    >>> safe_file_name("tau2__airline.v2__reward")
    'tau2__airline-v2__reward-c0b89e50'
    >>> safe_file_name("x/../../etc/escaped")
    'x-etc-escaped-cbae952f'
    """
    text = str(name)
    if _PLAIN_NAME.fullmatch(text):
        return text
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-_")[:80] or "item"
    return f"{slug}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def run_folder(run: str) -> str:
    """The folder of one run of a parameter grid (named after its values, which the user
    or the data chose): kept when plain (``domains=shop,seed=1``), else
    :func:`safe_file_name`, so that no run is written outside the report.

    Examples
    --------
    >>> run_folder("domains=shop,ci_method=bca")
    'domains=shop,ci_method=bca'
    >>> run_folder("domains=x/..").startswith("domains-x-")
    True
    """
    text = str(run)
    return text if _PLAIN_RUN.fullmatch(text) and ".." not in text else safe_file_name(text)


