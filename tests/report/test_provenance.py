import hashlib
import json

from accordkit.report.provenance import (
    collect_provenance,
    file_sha256,
    provenance_line,
    source_fingerprint,
)


def test_file_sha256_matches_hashlib(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'{"x": 1}\n')
    assert file_sha256(path) == hashlib.sha256(b'{"x": 1}\n').hexdigest()


def test_folder_fingerprint_lists_every_file(tmp_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "test.parquet").write_bytes(b"abc")
    (tmp_path / "README.md").write_text("card")
    fp = source_fingerprint(str(tmp_path))
    assert fp["kind"] == "folder"
    assert fp["files"] == {"README.md": hashlib.sha256(b"card").hexdigest(),
                           "cfg/test.parquet": hashlib.sha256(b"abc").hexdigest()}


def test_hub_id_records_revision():
    assert source_fingerprint("org/name", revision="v1") == {
        "source": "org/name", "kind": "hub", "revision": "v1"}
    assert "not pinned" in source_fingerprint("org/name")["revision"]


def test_collect_provenance_is_json_and_names_versions_and_parameters(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{}")
    prov = collect_provenance(sources=[str(path)],
                              parameters={"ci_method": "bca", "n_resamples": 100, "seed": 3})
    json.dumps(prov)
    assert prov["accordkit_version"]
    assert prov["packages"]["pandas"]
    assert prov["sources"][0]["sha256"] == file_sha256(path)
    line = provenance_line(prov)
    assert "ci_method=bca" in line and "n_resamples=100" in line and "seed=3" in line


def test_no_secret_in_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    prov = collect_provenance(sources=[], parameters={"seed": 0})
    assert "SECRET" not in json.dumps(prov)
