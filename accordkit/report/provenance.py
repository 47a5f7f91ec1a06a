"""Provenance: what produced a table or figure, so that it can be reproduced."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from .._internal.env import PROJECT_ROOT
from .._internal.files import file_sha256
from .._internal.redact import redact_sources

__all__ = ["collect_provenance", "file_sha256", "source_fingerprint", "git_revision",
           "provenance_line", "judges_of"]

_PACKAGES = ("accordkit", "datasets", "pandas", "numpy", "scipy", "seaborn", "papermill",
             "litellm")


def source_fingerprint(source: str, *, revision: str | None = None,
                       hashes: Mapping[str, str] | None = None,
                       hash_files: bool = True) -> dict[str, Any]:
    """Identify a source: each file's sha256 for local paths, the revision for hub ids; a
    URL is named without its credentials. ``hashes`` (file -> sha256, from a score store's
    manifest) are taken as they are: those files are not read again.

    With ``hash_files=False`` no file is read: the digests are those of ``hashes`` only (a
    report's, from its store's manifest), a folder lists the files of ``hashes`` inside it
    (the inputs read from it), and a file the manifest holds no digest for (one that could
    not be read) has ``sha256`` None. A source that is gone is still named by ``hashes``.

    Examples
    --------
    >>> source_fingerprint("/runs", hashes={"/runs/a.json": "ab12"}, hash_files=False)
    {'source': '/runs', 'kind': 'folder', 'files': {'a.json': 'ab12'}}
    """
    from ..ingest.inputs import is_url

    known = dict(hashes or {})

    def digest(p: Path) -> str:
        return known.get(str(p)) or file_sha256(p)

    if is_url(source):
        return {"source": redact_sources(source), "kind": "url"}
    path = Path(source)
    if not hash_files:
        if source in known:
            return {"source": source, "kind": "file", "sha256": known[source]}
        prefix = source.rstrip(os.sep) + os.sep
        inside = {name[len(prefix):]: sha for name, sha in sorted(known.items())
                  if name.startswith(prefix)}
        if inside or path.is_dir():
            return {"source": source, "kind": "folder", "files": inside}
        if path.is_file():
            return {"source": source, "kind": "file", "sha256": None}
    elif path.is_file():
        return {"source": source, "kind": "file", "sha256": digest(path)}
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and ".cache" not in p.parts)
        return {"source": source, "kind": "folder",
                "files": {str(p.relative_to(path)): digest(p) for p in files}}
    return {"source": source, "kind": "hub", "revision": revision or "main (not pinned)"}


def git_revision(root: Path = PROJECT_ROOT) -> str | None:
    """The checkout's commit, with ``+dirty`` when there are uncommitted changes."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root,
                             capture_output=True, text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty else "")


def _versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def judges_of(verdict_paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The judge, model and prompt version of each verdict file, with the file's sha256."""
    import pandas as pd

    rows = []
    for path in verdict_paths:
        frame = pd.read_parquet(path, columns=["judge", "judge_model", "prompt_id",
                                               "prompt_version"])
        for rec in frame.drop_duplicates().to_dict("records"):
            rows.append({**{k: str(v) for k, v in rec.items()}, "verdicts": str(path),
                         "sha256": file_sha256(path)})
    return rows


def collect_provenance(*, sources: Sequence[str], parameters: Mapping[str, Any],
                       revision: str | None = None,
                       verdicts: Iterable[str | Path] = (),
                       hashes: Mapping[str, str] | None = None,
                       hash_files: bool = True,
                       judges: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Everything a reader needs to reproduce a report.

    ``hashes`` and ``hash_files`` are :func:`source_fingerprint`'s; ``judges`` is
    :func:`judges_of` of ``verdicts`` when taken already (a report's runs share it).

    Returns
    -------
    dict
        ``accordkit`` version and git revision, package versions, Python, time, the
        parameters (metric modes and interval settings included), a fingerprint of each
        source (its files' sha256, taken from ``hashes`` when a score store's manifest has
        them) and the judge models and prompt versions of any verdict files.
    """
    verdicts = list(verdicts)
    return {
        "accordkit_version": _versions().get("accordkit"),
        "git_revision": git_revision(),
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "packages": _versions(),
        "parameters": redact_sources(json.loads(json.dumps(dict(parameters), default=str))),
        "sources": [source_fingerprint(s, revision=revision, hashes=hashes,
                                       hash_files=hash_files) for s in sources],
        "judges": [dict(j) for j in judges] if judges is not None else judges_of(verdicts),
    }


def provenance_line(prov: Mapping[str, Any]) -> str:
    """One line for captions and file headers."""
    params = prov.get("parameters", {})
    bits = [f"accordkit {prov.get('accordkit_version')}"]
    if prov.get("git_revision"):
        bits.append(f"git {prov['git_revision']}")
    for key in ("ci_method", "confidence", "n_resamples", "seed", "cluster", "tcrr_mode",
                "action_mode"):
        if key in params and params[key] is not None:
            bits.append(f"{key}={params[key]}")
    if params.get("shop_type_gate"):       # a score store scored with the gate
        bits.append("shop_type_gate=True")
    return "; ".join(bits)
