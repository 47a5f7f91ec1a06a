"""The typed (msgspec) decoding of results files agrees with the general converter.

The typed path is only an accelerator: on every input, real or mutated, ``ak.load`` must give
the same table, the same skipped records and the same notes as when the typed decoder is
switched off, and the same error in raise mode.
"""

from __future__ import annotations

import json
import sys
import warnings

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.ingest.formats import tau2 as results_reader
from accordkit.ingest.formats.tau2 import typed as tau2_format

from ..test_load_errors import _results, _sim, _write
from ..test_load_fuzz import SETTINGS, _mutate, seeds  # noqa: F401 - seeds is a fixture

TAU2 = sys.modules["accordkit.ingest.formats.tau2.convert"]


def _outcome(path, *, typed: bool, monkeypatch) -> tuple:
    """(table or None, skipped, notes, raise-mode error text) of one load."""
    with monkeypatch.context() as m:
        if not typed:
            m.setattr(results_reader, "decode_results", lambda data: None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ak.load(path, cache=False)
                raised = None
            except ak.EpisodeValidationError as exc:
                raised = str(exc)
        ds, report = ak.load_with_report(path, errors="skip", cache=False)
    table = arrow_table(ds)
    return table, [str(s) for s in report.skipped], report.notes, raised


def _same(path, monkeypatch) -> None:
    fast = _outcome(path, typed=True, monkeypatch=monkeypatch)
    slow = _outcome(path, typed=False, monkeypatch=monkeypatch)
    assert fast[0].equals(slow[0])
    assert fast[1:] == slow[1:]


@pytest.fixture(params=["one pass", "two steps"])
def decoding(request, monkeypatch):
    """Each test runs with small files decoded in one pass, and in two steps (as a file
    larger than ONE_PASS_BYTES is)."""
    if request.param == "two steps":
        monkeypatch.setattr(tau2_format, "ONE_PASS_BYTES", -1)
    return request.param


def test_fixture_files_load_identically(acb_dir, tau2_dir, monkeypatch, decoding):
    files = sorted(p for d in (acb_dir, tau2_dir) for p in d.glob("*.json")
                   if p.name != "expected_upstream.json")
    assert files
    for path in files:
        _same(path, monkeypatch)


def test_fixture_simulations_take_the_typed_path(acb_dir, decoding):
    """The fast path is really used on real files (no silent fallback for every record)."""
    path = acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json"
    results = tau2_format.decode_results(path.read_bytes())
    assert isinstance(results, tau2_format.DecodedResults) == (decoding == "one pass")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = [flag for _, _, flag in TAU2.converted_simulations(results, source=str(path))]
    assert typed == [True] * 13


@pytest.mark.parametrize("changes", [
    {"trial": "0"},
    {"messages": "not a list"},
    {"messages": []},
    {"messages": [{"role": "robot", "content": "x", "turn_idx": 0}]},
    {"messages": [{"role": "user", "content": 5, "turn_idx": 0}]},
    {"messages": [{"role": "assistant", "turn_idx": 0,
                   "tool_calls": [{"id": "c", "arguments": {}}]}]},
    {"messages": [{"role": "assistant", "turn_idx": 0,
                   "tool_calls": [{"id": "c", "name": "f", "arguments": "[1]"}]}]},
    {"messages": [{"role": "tool", "id": "c", "content": "x", "error": "no"}]},
    {"messages": [{"role": "user", "content": "x", "error": "ignored on a user turn"}]},
    {"messages": [{"role": "tool", "tool_messages": [
        {"role": "tool", "id": "a", "content": "x"}, {"role": "tool", "id": "b"}]}]},
    {"seed": 2**64},
    {"reward_info": {"reward": "high"}},
])
def test_bad_or_unusual_simulations_agree(tmp_path, monkeypatch, changes, decoding):
    path = _write(tmp_path, _results(_sim("s1"), _sim("s2", **changes)))
    _same(path, monkeypatch)


def test_bytes_that_are_not_utf8_go_the_general_way(tmp_path, monkeypatch):
    raw = json.dumps(_results(_sim("s1"), _sim("s2"))).encode()
    at = raw.index(b"Cancel my booking") + 3
    path = tmp_path / "run.json"
    path.write_bytes(raw[:at] + b"\xff" + raw[at:])
    assert tau2_format.decode_results(path.read_bytes()) is None
    _same(path, monkeypatch)


def test_utf8_check_reads_in_chunks():
    from accordkit.ingest.formats.text import is_utf8

    text = ("é" * 10).encode()
    assert is_utf8(text, chunk=3)  # a character split across chunks
    assert not is_utf8(text[:-1], chunk=3)  # truncated at the end


def test_a_plain_text_file_is_told_a_chunk_at_a_time():
    import io

    from accordkit.ingest.formats.text import plain_text_file

    text = ('{"a": "é"}\n' * 10).encode()
    assert plain_text_file(io.BytesIO(text), chunk=4)
    assert not plain_text_file(io.BytesIO(text[:-4]), chunk=4)          # cut inside an "é"
    assert not plain_text_file(io.BytesIO(text + b"\x00"), chunk=4)     # a NUL byte
    assert not plain_text_file(io.BytesIO(b'{"a": "\\ud83d"}' * 3), chunk=5)  # an escape


def test_messages_stay_undecoded_until_asked_in_two_steps(tmp_path, monkeypatch):
    path = _write(tmp_path, _results(_sim("s1")))
    monkeypatch.setattr(tau2_format, "ONE_PASS_BYTES", path.stat().st_size - 1)
    results = tau2_format.decode_results(path.read_bytes())
    (sim,) = results.simulations
    assert isinstance(sim.messages, msgspec.Raw)
    assert [m.role for m in tau2_format.decode_messages(sim.messages)] == \
        ["assistant", "user", "assistant", "tool"]


def test_a_small_file_is_decoded_in_one_pass_unless_it_holds_a_multi_tool_message(tmp_path):
    path = _write(tmp_path, _results(_sim("s1")))
    (sim,) = tau2_format.decode_results(path.read_bytes()).simulations
    assert [m.role for m in sim.messages] == ["assistant", "user", "assistant", "tool"]
    multi = {"role": "tool", "tool_messages": [{"role": "tool", "id": "a", "content": "x"}]}
    path = _write(tmp_path, _results(_sim("s1"), _sim("s2", messages=[multi])))
    first, second = tau2_format.decode_results(path.read_bytes()).simulations
    assert isinstance(first.messages, msgspec.Raw) and isinstance(second.messages, msgspec.Raw)
    assert tau2_format.decode_messages(first.messages) is not None  # s1 stays typed


@SETTINGS
@given(data=st.data())
def test_mutated_results_files_agree(seeds, tmp_path, monkeypatch, data, decoding):  # noqa: F811
    obj = json.loads(json.dumps(data.draw(st.sampled_from(seeds), label="seed")))
    obj = _mutate(data, obj)
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps(obj, allow_nan=True))
    _same(path, monkeypatch)
