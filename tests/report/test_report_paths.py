"""A report names its sources as the user gave them and takes their digests from the store's
manifest (issue 33: paths as given; the report hashes no file twice)."""

from __future__ import annotations

import json
import os

from accordkit.report import build_report
from accordkit.report import provenance as provenance_mod
from accordkit.store import read_manifest


def test_a_source_through_a_link_keeps_its_name_and_its_digest_is_the_manifests(
        tmp_path, sample_dir, monkeypatch):
    real = tmp_path / "data"
    real.mkdir()
    src = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    (real / "run.parquet").write_bytes(src.read_bytes())
    link = tmp_path / "linked"
    link.symlink_to(real, target_is_directory=True)
    hashed: list[str] = []
    real_sha = provenance_mod.file_sha256
    monkeypatch.setattr(provenance_mod, "file_sha256",
                        lambda p: hashed.append(str(p)) or real_sha(p))
    out = tmp_path / "rep"
    build_report([str(link)], out=out, params={"n_resamples": 100},
                 notebooks=["reliability"], progress=False)
    manifest = read_manifest(out / "scores")
    (rec,) = manifest["inputs"]
    assert rec["source"] == str(link / "run.parquet")          # the name given
    assert rec["real"] == os.path.realpath(real / "run.parquet")  # the file, beside it
    prov = json.loads((out / "provenance.json").read_text())
    (source,) = prov["sources"]
    assert source["source"] == str(link) and source["kind"] == "folder"
    assert source["files"] == {"run.parquet": rec["sha256"]}
    assert hashed == [], "the digest is the manifest's, not computed again"
    assert str(link) in (out / "index.html").read_text()


def test_a_report_from_sources_hashes_each_source_file_once(tmp_path, sample_dir, tau2_dir,
                                                            monkeypatch):
    """The scoring plan hashes each input once; the episode cache, the manifest and the
    provenance take that digest, and no other step of the report reads a file to hash it."""
    import hashlib
    import shutil
    import time
    import types

    from accordkit._internal import files as files_mod
    from accordkit.ingest import cache as cache_mod
    from accordkit.ingest import cache_policy as cache_policy_mod
    from accordkit.ingest import prefetch as prefetch_mod

    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(tmp_path / "cache"))   # nothing remembered
    runs = tmp_path / "runs"
    runs.mkdir()
    for f in sorted(tau2_dir.glob("*.json"))[:2]:
        shutil.copy(f, runs / f.name)
    shutil.copy(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0], runs / "gs.parquet")
    an_hour_ago = time.time() - 3600          # files not written just now (see ingest.cache)
    for f in runs.iterdir():
        os.utime(f, (an_hour_ago, an_hour_ago))
    contents = {f.read_bytes(): os.path.realpath(f) for f in runs.iterdir()}
    hashed: list[str] = []

    def counted_sha256(data=b"", *args, **kwargs):
        if isinstance(data, bytes) and data in contents:
            hashed.append(contents[data])
        return hashlib.sha256(data, *args, **kwargs)

    real_file_sha256 = files_mod.file_sha256

    def counted_file_sha256(path):
        hashed.append(os.path.realpath(path))
        return real_file_sha256(path)

    spy = types.SimpleNamespace(sha256=counted_sha256)
    monkeypatch.setattr(prefetch_mod, "hashlib", spy)        # the read-ahead hashes a file
    monkeypatch.setattr(cache_policy_mod, "hashlib", spy)    # a run folder's digest
    monkeypatch.setattr(cache_mod, "hashlib", spy)
    monkeypatch.setattr(files_mod, "file_sha256", counted_file_sha256)
    monkeypatch.setattr(provenance_mod, "file_sha256", counted_file_sha256)
    out = tmp_path / "rep"
    build_report([str(runs)], out=out, params={"n_resamples": 100}, notebooks=["reliability"],
                 progress=False)
    sources = sorted(contents.values())
    assert sorted(h for h in hashed if h in sources) == sources, "each source hashed once"
    manifest = read_manifest(out / "scores")
    prov = json.loads((out / "provenance.json").read_text())
    (source,) = prov["sources"]
    assert source["files"] == {os.path.relpath(r["source"], runs): r["sha256"]
                               for r in manifest["inputs"]}
    assert len(source["files"]) == 3
