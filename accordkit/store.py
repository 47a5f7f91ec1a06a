"""The score store: score tables on disk, with a manifest saying what made them.

``accordkit score SOURCE... --out DIR`` (:func:`write_scores`) writes one parquet file per
level (``episode.parquet``, ``preference.parquet``, ``shift.parquet``) and ``manifest.json``:
the accordkit and schema versions, the scoring modes, every source (with the sha256 of each
file it holds), the rows and sha256 of each table, the records skipped while loading, and the
pandas dtype of every column so that :func:`read_scores` gives back frames equal to
:func:`accordkit.score`'s.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .score import LEVELS

__all__ = ["write_scores", "read_scores", "MANIFEST", "STORE_FORMAT"]

MANIFEST = "manifest.json"
STORE_FORMAT = "accordkit.scores/1"
_SUFFIXES = (".json", ".jsonl", ".parquet")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _describe_source(src: str | Path) -> dict[str, Any]:
    """Path and sha256 of a file, or of every data file below a folder; hub ids as given."""
    path = Path(src)
    if path.is_file():
        return {"source": str(src), "kind": "file", "sha256": _sha256(path)}
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file()
                       and p.suffix.lower() in _SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        return {"source": str(src), "kind": "folder",
                "files": [{"path": str(p.relative_to(path)), "sha256": _sha256(p)}
                          for p in files]}
    return {"source": str(src), "kind": "hub", "sha256": None}


def write_scores(sources: str | Path | Sequence[str | Path], out: str | Path, *,
                 errors: str = "raise", tcrr_mode: str = "episode",
                 action_mode: str = "best_match", shop_type_gate: bool = False,
                 metadata: Mapping[str, Any] | None = None) -> Path:
    """Load ``sources``, score every level and write the tables and a manifest to ``out``.

    Parameters
    ----------
    sources : path, hub id or list of them
        What :func:`accordkit.load` accepts.
    out : str or Path
        Folder to write (created; existing tables in it are replaced).
    errors : {"raise", "skip"}
        Loader policy; skipped records are listed in the manifest.
    tcrr_mode, action_mode, shop_type_gate
        Scoring modes (:func:`accordkit.score`), recorded in the manifest.
    metadata : mapping, optional
        Passed to :func:`accordkit.load` (τ-bench files).

    Returns
    -------
    Path
        The manifest's path.

    Examples
    --------
    >>> import accordkit as ak
    >>> ak.write_scores("data/sample/goalshift", "scores/")       # doctest: +SKIP
    >>> ak.read_scores("scores/", level="shift")                  # doctest: +SKIP
    """
    from . import __version__
    from .load import load_with_report
    from .schema import SCHEMA_VERSION
    from .score import score
    from .validate import warn_skipped

    srcs = [sources] if isinstance(sources, str | Path) else list(sources)
    ds, report = load_with_report(srcs, errors=errors,  # type: ignore[arg-type]
                                  metadata=dict(metadata) if metadata else None)
    warn_skipped(report.skipped, stacklevel=3)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    modes = {"tcrr_mode": tcrr_mode, "action_mode": action_mode,
             "shop_type_gate": shop_type_gate}
    tables = {}
    for level in LEVELS:
        frame = score(ds, level=level, **modes)
        path = out / f"{level}.parquet"
        frame.to_parquet(path, index=False)
        tables[level] = {"file": path.name, "rows": len(frame), "sha256": _sha256(path),
                         "dtypes": {c: str(t) for c, t in frame.dtypes.items()}}
    manifest = {
        "format": STORE_FORMAT,
        "accordkit_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "modes": modes,
        "metadata": dict(metadata) if metadata else None,
        "sources": [{**_describe_source(s), "episodes": report.counts.get(str(s), 0)}
                    for s in srcs],
        "episodes": len(ds),
        "skipped": [{"source": s.source, "record": s.record, "field": s.field,
                     "reason": s.reason} for s in report.skipped],
        "tables": tables,
    }
    path = out / MANIFEST
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return path


def _restore(frame: pd.DataFrame, dtypes: Mapping[str, str], path: Path) -> pd.DataFrame:
    missing = [c for c in dtypes if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: columns {missing} listed in {MANIFEST} are missing")
    for col, dtype in dtypes.items():
        if dtype == "object" and frame[col].dtype != object:
            values = frame[col].astype(object)
            frame[col] = values.where(frame[col].notna(), None)
    return frame[list(dtypes)]


def read_scores(folder: str | Path, *, level: str | None = None
                ) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Read a score store written by :func:`write_scores` (``accordkit score --out``).

    Parameters
    ----------
    folder : str or Path
        The folder holding ``manifest.json`` and the tables.
    level : {"episode", "preference", "shift"}, optional
        One table; default: a dict of every level. The manifest itself is plain JSON
        (``manifest.json``).

    Returns
    -------
    pandas.DataFrame or dict
        Frames equal to what :func:`accordkit.score` returned when the store was written.

    Raises
    ------
    FileNotFoundError
        No manifest in ``folder``.
    ValueError
        Unknown level, unknown store format, or a table that does not match its manifest
        entry (changed after it was written).
    """
    folder = Path(folder)
    mpath = folder / MANIFEST
    if not mpath.is_file():
        raise FileNotFoundError(f"{folder}: no {MANIFEST}; not a score store "
                                "(write one with `accordkit score SOURCE... --out DIR`)")
    manifest = json.loads(mpath.read_text("utf-8"))
    if manifest.get("format") != STORE_FORMAT:
        raise ValueError(f"{mpath}: format {manifest.get('format')!r}, expected "
                         f"{STORE_FORMAT!r}")
    if level is not None and level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    out = {}
    for name in [level] if level else LEVELS:
        entry = manifest["tables"][name]
        path = folder / entry["file"]
        if _sha256(path) != entry["sha256"]:
            raise ValueError(f"{path}: sha256 differs from {MANIFEST}; the table was changed "
                             "after it was written")
        frame = _restore(pd.read_parquet(path), entry["dtypes"], path)
        out[name] = frame
    return out[level] if level else out
