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
