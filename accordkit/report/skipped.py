"""What a report left out: the records skipped as bad and the inputs that failed, per source
(at load), and the episodes an analysis left out of one level (at scoring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._internal.redact import redact_sources

__all__ = ["MAX_REASONS", "SkippedRecordsError", "skipped_summary", "store_skipped_summary",
           "left_out_summary"]

#: How many skip reasons per source the report lists.
MAX_REASONS = 5


class SkippedRecordsError(ValueError):
    """``strict=True`` and the loader skipped records, or scoring left an episode out of a
    level; ``.skipped`` and ``.left_out`` are the summaries (:func:`store_skipped_summary`,
    :func:`left_out_summary`)."""

    def __init__(self, skipped: Sequence[dict[str, Any]],
                 left_out: Sequence[dict[str, Any]] = ()) -> None:
        self.skipped = list(skipped)
        self.left_out = list(left_out)
        n = sum(e["skipped"] for e in self.skipped)
        lines = [f"  {e['source']}: {e['skipped']} skipped; first: {e['reasons'][0]}"
                 for e in self.skipped if e["skipped"]]
        said = [f"{n} bad record(s) were skipped"] if n or not self.left_out else []
        k = sum(e["left_out"] for e in self.left_out)
        if k:
            from ..metrics.action_diff import left_out_line

            said.append(f"{k} episode(s) were left out at scoring")
            lines += [f"  {e['source']}: {e['left_out']} left out; first: "
                      f"{left_out_line(e['episodes'][0])}"
                      for e in self.left_out if e["left_out"] and e["episodes"]]
        super().__init__(f"strict report: {' and '.join(said)}\n" + "\n".join(lines))


def _owner(record_source: str | None, sources: Sequence[str]) -> str | None:
    """The given source a skipped record's file belongs to (itself or a folder above it)."""
    if record_source is None:
        return None
    for src in sources:
        if record_source == src:
            return src
    path = Path(record_source).resolve() if Path(record_source).exists() else None
    for src in sources:
        base = Path(src)
        if path is not None and base.is_dir() and base.resolve() in path.parents:
            return src
    return None


def skipped_summary(sources: Sequence[str], counts: Mapping[str, int], skipped: Sequence[Any],
                    *, max_reasons: int = MAX_REASONS) -> list[dict[str, Any]]:
    """Per source: episodes loaded, records skipped and the first reasons, from a load.

    Parameters
    ----------
    sources : list of str
        The sources as given to the loader.
    counts : mapping
        Episodes loaded per source (``LoadReport.counts``).
    skipped : list of SkippedRecord
        ``LoadReport.skipped``.
    max_reasons : int
        Reasons listed per source (the count covers all).

    Returns
    -------
    list of dict
        ``source``, ``episodes``, ``skipped`` and ``reasons`` (up to ``max_reasons`` lines
        naming file, record and field), one per source; a skipped record outside every
        given source gets an entry of its own.

    Examples
    --------
    >>> skipped_summary(["a.json"], {"a.json": 3}, [])
    [{'source': 'a.json', 'episodes': 3, 'skipped': 0, 'reasons': []}]
    """
    entries: dict[str, dict[str, Any]] = {
        src: {"source": src, "episodes": int(counts.get(src, 0)), "skipped": 0, "reasons": []}
        for src in sources}
    for rec in skipped:
        src = _owner(rec.source, sources) or str(rec.source)
        entry = entries.setdefault(src, {"source": src, "episodes": 0, "skipped": 0,
                                         "reasons": []})
        entry["skipped"] += 1
        if len(entry["reasons"]) < max_reasons:
            entry["reasons"].append(str(rec))
    return redact_sources(list(entries.values()))


def store_skipped_summary(manifest: Mapping[str, Any],
                          sources: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per source: episodes scored, records skipped and the first reasons, from a manifest.

    With ``sources`` (as given to the report), the store's inputs (files found in them) are
    counted under the source they came from; otherwise one entry per input. An input that
    could not be read at all (or a batch of it that could not be scored) counts as one
    skipped record with the reason ``file <input>, whole input: <error>``, as a file the
    loader cannot read does: the report lists it and ``strict`` refuses it.

    Examples
    --------
    >>> store_skipped_summary({"inputs": [{"source": "a.json", "episodes": 2, "skipped": 0,
    ...                                    "error": None, "problems": []}]})
    [{'source': 'a.json', 'episodes': 2, 'skipped': 0, 'reasons': []}]
    """
    inputs = manifest["inputs"]
    sources = list(sources) if sources else [r["source"] for r in inputs]
    entries: dict[str, dict[str, Any]] = {
        src: {"source": src, "episodes": 0, "skipped": 0, "reasons": []} for src in sources}
    for r in inputs:
        src = _owner(r["source"], sources) or str(r["source"])
        entry = entries.setdefault(src, {"source": src, "episodes": 0, "skipped": 0,
                                         "reasons": []})
        entry["episodes"] += int(r["episodes"])
        entry["skipped"] += int(r["skipped"]) + (1 if r["error"] else 0)
        reasons = list(r["problems"]) + (
            [f"file {r['source']}, whole input: {r['error']}"] if r["error"] else [])
        entry["reasons"] += reasons[:max(0, MAX_REASONS - len(entry["reasons"]))]
    return redact_sources(list(entries.values()))


def left_out_summary(manifest: Mapping[str, Any],
                     sources: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per source: the episodes an analysis left out of one level while scoring, from a
    store's manifest (``left_out``, ``left_out_records`` of each input).

    Such an episode was loaded and keeps its other scores; only the level named lacks it
    (the action diff of arguments nested past its depth bound, say). Sources are matched
    as :func:`store_skipped_summary` matches them; only sources with such episodes get an
    entry, so an empty list means every episode was scored at every level.

    Returns
    -------
    list of dict
        ``source``, ``left_out`` (the count) and ``episodes`` (the first ones the manifest
        names, up to 20 per input: ``level``, ``source``, ``record``, ``field`` or None,
        ``reason``).

    Examples
    --------
    >>> left_out_summary({"inputs": [{"source": "a.json", "left_out": 1, "left_out_records": [
    ...     {"level": "action", "source": "a.json", "record": "tau2/7", "field": None,
    ...      "reason": "x"}]}, {"source": "b.json"}]})
    [{'source': 'a.json', 'left_out': 1, 'episodes': [{'level': 'action', 'source': 'a.json', 'record': 'tau2/7', 'field': None, 'reason': 'x'}]}]
    """
    inputs = manifest["inputs"]
    sources = list(sources) if sources else [r["source"] for r in inputs]
    entries: dict[str, dict[str, Any]] = {}
    for r in inputs:
        n = int(r.get("left_out") or 0)
        if not n:
            continue
        src = _owner(r["source"], sources) or str(r["source"])
        entry = entries.setdefault(src, {"source": src, "left_out": 0, "episodes": []})
        entry["left_out"] += n
        entry["episodes"] += [dict(e) for e in r.get("left_out_records") or ()]
    order = {src: k for k, src in enumerate(sources)}
    listed = sorted(entries.values(), key=lambda e: order.get(e["source"], len(order)))
    return redact_sources(listed)
