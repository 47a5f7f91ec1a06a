"""The reader contract held by every registered reader (accordkit/ingest/registry.py, issue 42).

Each reader's ``sniff`` turns down what is not its own (a picture, a foreign document, an
input of another kind), so that the order in which the corridor asks them decides nothing
but precedence; and an empty or garbled input that a reader takes ends in the loader's error,
naming the file, the whole file as the record and the top level as the field, never in a
silent empty table. A reader added to the registry without a case here fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import accordkit as ak
from accordkit.ingest.inputs import Input
from accordkit.ingest.registry import KINDS, formats
from accordkit.schema import EpisodeValidationError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))

#: For each file reader, an input it takes that cannot be read: (file name, bytes, what the
#: error says).
GARBLED = {
    "parquet": ("cut.parquet", b"PAR1 not really", "unreadable parquet file"),
    "results-file": ("cut.json", b'{"info": {"agent_info"', "invalid or truncated JSON"),
    "json": ("empty.json", b"", "empty file"),
    "inspect": ("cut.eval", b"PK\x03\x04 not a whole zip", "not a readable Inspect log"),
    # a sidecar is JSON Lines: its first line is the record at fault
    "eee": ("run_samples.jsonl",
            b'{"schema_version": "0.3.0", "evaluation_id": "e", "sample_id"', "invalid JSON"),
}
#: The record a garbled file's error names, where it is not the whole file.
GARBLED_RECORD = {"eee": "line 1"}

#: Documents no document reader may claim.
FOREIGN_DOCUMENTS = [{"foo": [1, 2]}, [1, 2, 3], "text", [], {"info": "not a run"}]


def _input(path: Path, *, kind: str = "file") -> Input:
    return Input(name=str(path), kind=kind, path=str(path), real=str(path.resolve()),
                 source=str(path))


def test_every_kind_has_readers_and_the_file_fallback_is_asked_last():
    assert set(KINDS) == {"document", "folder", "file", "run", "hub"}
    for kind in KINDS:
        assert formats(kind), kind
    names = [r.name for r in formats("file")]
    assert names[-1] == "json" and len(set(names)) == len(names)


@pytest.mark.parametrize("reader", formats("file")[:-1], ids=lambda r: r.name)
def test_every_file_reader_but_the_fallback_turns_down_a_foreign_file(reader, tmp_path):
    for name in ("picture.png", "picture.json", "picture"):
        path = tmp_path / name
        path.write_bytes(PNG)
        assert reader.sniff(_input(path)) is False, (reader.name, name)


@pytest.mark.parametrize("reader", formats("document"), ids=lambda r: r.name)
def test_every_document_reader_turns_down_a_foreign_document(reader):
    assert [doc for doc in FOREIGN_DOCUMENTS if reader.sniff(doc)] == []


@pytest.mark.parametrize("kind", ["run", "hub"])
def test_the_run_and_hub_readers_take_only_inputs_of_their_kind(kind, tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"info": {}, "tasks": [], "simulations": []}')
    for reader in formats(kind):
        assert reader.sniff(_input(path)) is False, reader.name
        assert reader.sniff(_input(path, kind=kind)) is True, reader.name


def test_every_file_reader_has_a_garbled_case():
    assert set(GARBLED) == {r.name for r in formats("file")}


@pytest.mark.parametrize("name", sorted(GARBLED))
def test_an_empty_or_garbled_input_ends_in_the_loaders_error_naming_the_file(name, tmp_path):
    file_name, content, says = GARBLED[name]
    path = tmp_path / file_name
    path.write_bytes(content)
    # the reader under test claims the file (the results-file reader, asked before eee,
    # claims every JSON object and hands back what is not a tau2 run; the error below
    # shows which reader read it)
    assert next(r for r in formats("file") if r.name == name).sniff(_input(path))
    with pytest.raises(EpisodeValidationError) as caught:
        ak.load(str(path))
    record = GARBLED_RECORD.get(name, "(whole file)")
    assert str(caught.value).startswith(
        f"file {path}, record {record}, field (top level): {says}")
