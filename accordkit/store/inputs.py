"""Whether a store's inputs are still the files it scored: checked by size and time, hashed
again only when those changed, and said with a warning."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .format import _StatMemo

__all__ = ["PartialStoreWarning", "StoreChangedWarning", "scored_inputs", "warn_about_inputs",
           "warn_if_changed"]


class PartialStoreWarning(UserWarning):
    """A finished store lacks the episodes of inputs that could not be read or scored (the
    manifest lists them with their error)."""


class StoreChangedWarning(UserWarning):
    """An input of a score store changed since it was scored."""



def scored_inputs(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each input of a store as it was scored (its sha256 then), and whether the local file
    now differs (``changed``; a file moved away is ``present: False``, not changed: the
    scores need no transcripts).

    A file of the size and modification time it was scored at is trusted unchanged and not
    read; a file of another size has changed; any other is hashed again, once per process
    while its size and time stay the same. ``changed`` is None, with the reason in
    ``unchecked``, when the file cannot be read.
    """
    from ..ingest.inputs import is_url

    out = []
    for rec in manifest.get("inputs", []):
        entry = {"source": rec["source"], "sha256": rec.get("sha256")}
        path = Path(rec["source"])
        if rec.get("sha256") and not is_url(rec["source"]):
            try:
                entry["present"] = path.is_file()
                st = path.stat() if entry["present"] else None
                if st is None:
                    entry["changed"] = False
                elif rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
                    entry["changed"] = False
                elif isinstance(rec.get("size"), int) and rec["size"] != st.st_size:
                    entry["changed"] = True
                else:
                    entry["changed"] = _sha256_now(path) != rec["sha256"]
            except OSError as exc:
                entry["changed"] = None
                entry["unchecked"] = f"{type(exc).__name__}: {exc}"
        out.append(entry)
    return out


def _hash_input(path: Path) -> str:
    from .._internal import files as _files

    return _files.file_sha256(path)


#: sha256 of an input file, remembered for the process while ``stat`` says it is the same
#: (its ctime too: :class:`accordkit.store.format._StatMemo`).
_sha256_now = _StatMemo(_hash_input, maxsize=4096)


def warn_about_inputs(store: Path, manifest: Mapping[str, Any],
                      level: str | None = None) -> None:
    """Warn of the store's inputs that failed (:class:`PartialStoreWarning`) and of those
    whose file changed since it was scored (:class:`StoreChangedWarning`); with ``level``,
    also of episodes left out of that level while scoring (:class:`PartialStoreWarning`)."""
    import warnings

    failed = [r for r in manifest["inputs"] if r.get("error")]
    if failed:
        first = failed[0]
        warnings.warn(PartialStoreWarning(
            f"{len(failed)} of the {len(manifest['inputs'])} input(s) of the score store "
            f"{store} could not be read or scored in full, and what failed is absent (first: "
            f"{first.get('source')}: {first.get('error')}); see its manifest.json"),
            stacklevel=3)
    if level is not None:
        _warn_left_out(store, manifest, level)
    changed = [r["source"] for r in scored_inputs(manifest) if r.get("changed")]
    if changed:
        warnings.warn(StoreChangedWarning(
            f"{len(changed)} input(s) of the score store {store} changed since they were "
            f"scored ({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}): its "
            "scores are those of the files as scored; score them again for scores of the "
            "files as they are"), stacklevel=3)


def _warn_left_out(store: Path, manifest: Mapping[str, Any], level: str) -> None:
    """One :class:`PartialStoreWarning` when scoring left episodes out of ``level`` (their
    other levels hold them), naming the first."""
    import warnings

    from ..metrics.action_diff import LeftOut

    inputs = [r for r in manifest["inputs"]
              if any(e.get("level") == level for e in r.get("left_out_records") or ())]
    if not inputs:
        return
    first = next(e for e in inputs[0]["left_out_records"] if e.get("level") == level)
    n = sum(int(r.get("left_out") or 0) for r in inputs)
    warnings.warn(PartialStoreWarning(
        f"{n} episode(s) of the score store {store} were left out of level {level!r} while "
        f"scoring (their other scores stand; first: {LeftOut.from_record(first)}); see "
        "left_out_records in its manifest.json"), stacklevel=4)


def warn_if_changed(store: Path, manifest: Mapping[str, Any], indexes: Sequence[int]) -> None:
    """Warn (:class:`StoreChangedWarning`) of each of these inputs whose file is not the one
    scored (its sha256 differs from the manifest's), before its transcripts are shown."""
    import warnings

    checked = {r["index"]: c for r, c in zip(manifest["inputs"], scored_inputs(manifest),
                                                strict=True)}
    changed = [checked[i]["source"] for i in indexes if checked.get(i, {}).get("changed")]
    if changed:
        warnings.warn(StoreChangedWarning(
            f"{len(changed)} input(s) of the score store {store} are not the file(s) it scored "
            f"(their sha256 differs from manifest.json: {', '.join(changed[:3])}"
            f"{' ...' if len(changed) > 3 else ''}): the conversations shown are read from "
            "the files as they are now, and may not be the ones the scores describe"),
            stacklevel=3)

