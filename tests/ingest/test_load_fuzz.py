"""Property-based tests: mutated fixture records never crash the loader.

Hypothesis drops keys, changes types, truncates, inserts junk values and shuffles lists in
real result files (and in canonical JSONL made from them). Whatever it does:

* ``errors="raise"``: ``ak.load`` returns a dataset or raises ``EpisodeValidationError``
  naming file, record and field, never anything else;
* ``errors="skip"``: ``ak.load`` never raises, and every simulation / line is accounted
  for: loaded, listed as skipped, or kept once as a duplicate.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accordkit as ak
from accordkit.ingest.report import DuplicateEpisodesWarning, SkippedRecordsWarning

#: Examples per test; the suite keeps it small, ``benchmarks/load_fuzz.py`` raises it.
EXAMPLES = int(os.environ.get("ACCORDKIT_FUZZ_EXAMPLES", "60"))

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                         max_size=2),
    st.just({"role": "robot"}), st.just([{"x": None}]), st.just("{not json"),
    # Shapes that once crashed the loader or were dropped silently (issue 11).
    st.just(["user_simulator"]), st.just("[1, 2]"), st.just('"text"'),
    st.just({"role": "tool", "tool_messages": []}),
    st.just({"role": "tool", "tool_messages": [
        {"role": "tool", "tool_messages": [{"role": "tool", "id": "a", "content": "x"},
                                           {"role": "tool", "id": "b", "content": "y"}]}]}),
    st.integers(200, 990).map(lambda n: _nested(n)),
)


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def _small_results(path: Path, n_sims: int) -> dict:
    """The first simulations of a fixture, with only the tasks they use."""
    raw = json.loads(path.read_text())
    raw["simulations"] = raw["simulations"][:n_sims]
    used = {s["task_id"] for s in raw["simulations"]}
    raw["tasks"] = [t for t in raw["tasks"] if t["id"] in used]
    return raw


@pytest.fixture(scope="module")
def seeds(acb_dir, tau2_dir) -> list[dict]:
    return [
        _small_results(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json", 3),
        _small_results(acb_dir / "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json", 3),
        _small_results(tau2_dir / "telecom_grok-3_5tasks_1trial.json", 2),
    ]


def _containers(obj: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every dict and list inside ``obj`` (breadth limited to stay fast)."""
    out = [path]
    if isinstance(obj, dict):
        for k, v in list(obj.items())[:40]:
            if isinstance(v, dict | list):
                out += _containers(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:12]):
            if isinstance(v, dict | list):
                out += _containers(v, (*path, i))
    return out


def _get(obj: Any, path: tuple) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def _mutate(data: st.DataObject, obj: Any) -> Any:
    """Apply 1-3 random mutations in place; returns the (possibly replaced) root."""
    for _ in range(data.draw(st.integers(1, 3), label="n_mutations")):
        paths = _containers(obj)
        target = _get(obj, data.draw(st.sampled_from(paths), label="where"))
        keys = list(target) if isinstance(target, dict) else list(range(len(target)))
        op = data.draw(st.sampled_from(["drop", "junk", "truncate", "shuffle", "insert"]),
                       label="op")
        if not keys and op != "insert":
            op = "insert"
        if op == "insert":
            if isinstance(target, dict):
                target[data.draw(st.sampled_from(["zz", "id", "role", "trial"]))] = data.draw(JUNK)
            else:
                target.insert(0, data.draw(JUNK))
            continue
        key = data.draw(st.sampled_from(keys), label="key")
        if op == "drop":
            del target[key]
        elif op == "junk":
            target[key] = data.draw(JUNK, label="junk")
        elif op == "truncate":
            value = target[key]
            if isinstance(value, str | list):
                target[key] = value[: data.draw(st.integers(0, max(len(value) - 1, 0)))]
            else:
                target[key] = None
        else:  # shuffle the list / dict values at this place
            value = target[key]
            if isinstance(value, list):
                target[key] = data.draw(st.permutations(value), label="perm")
    return obj


def _load_both_modes(path: Path) -> tuple[Any, list, dict]:
    """Check raise mode, then return (dataset, skipped, duplicates) from skip mode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ak.load(path)
        except ak.EpisodeValidationError as err:
            assert err.source and err.record and err.field, str(err)
            assert str(err).startswith(f"file {err.source}, record {err.record}, field ")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load(path, errors="skip")
    skipped_warnings = [w.message for w in caught if isinstance(w.message, SkippedRecordsWarning)]
    assert len(skipped_warnings) <= 1
    skipped = skipped_warnings[0].skipped if skipped_warnings else []
    dups = [w.message for w in caught if isinstance(w.message, DuplicateEpisodesWarning)]
    return ds, skipped, (dups[0].duplicates if dups else {})


def _accounted(n_items: int, ds, skipped: list, duplicates: dict) -> None:
    whole = [s for s in skipped if s.record in ("(whole file)", "(file header)")]
    if whole:
        assert len(skipped) == 1 and len(ds) == 0
        return
    n_dup = sum(len(srcs) - 1 for srcs in duplicates.values())
    assert len(ds) + len(skipped) + n_dup == n_items, (len(ds), skipped, duplicates)


@SETTINGS
@given(data=st.data())
def test_mutated_results_files(seeds, tmp_path, data):
    obj = json.loads(json.dumps(data.draw(st.sampled_from(seeds), label="seed")))
    obj = _mutate(data, obj)
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps(obj, allow_nan=True))
    ds, skipped, duplicates = _load_both_modes(path)
    sims = obj.get("simulations") if isinstance(obj, dict) else None
    n = len(sims) if isinstance(sims, list) else 0
    _accounted(n, ds, skipped, duplicates)


@settings(max_examples=max(EXAMPLES // 3, 10), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_stray_bytes_in_results_files(seeds, tmp_path, data):
    """Bytes that are not UTF-8 inside a text value: the file still loads, nothing dropped."""
    obj = seeds[data.draw(st.integers(0, len(seeds) - 1), label="seed")]
    raw = json.dumps(obj, indent=1).encode()
    quotes = [i for i in range(len(raw)) if raw[i:i + 3] == b': "'][:400]
    for _ in range(data.draw(st.integers(1, 3), label="n_bytes")):
        at = data.draw(st.sampled_from(quotes), label="where") + 3
        raw = raw[:at] + data.draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80"])) + raw[at:]
    path = tmp_path / "bytes.json"
    path.write_bytes(raw)
    ds, skipped, duplicates = _load_both_modes(path)
    _accounted(len(obj["simulations"]), ds, skipped, duplicates)


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_truncated_results_files(seeds, tmp_path, data):
    text = json.dumps(data.draw(st.sampled_from(seeds)), indent=1)
    cut = data.draw(st.integers(0, len(text) - 1), label="cut")
    path = tmp_path / "cut.json"
    path.write_text(text[:cut])
    ds, skipped, _ = _load_both_modes(path)
    assert len(ds) == 0 and len(skipped) == 1 and skipped[0].record == "(whole file)"


@pytest.fixture(scope="module")
def canonical_rows(seeds, tmp_path_factory) -> list[dict]:
    path = tmp_path_factory.mktemp("canon") / "seed.json"
    path.write_text(json.dumps(seeds[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.load(path).to_list()


@SETTINGS
@given(data=st.data())
def test_mutated_canonical_jsonl(canonical_rows, tmp_path, data):
    rows = json.loads(json.dumps(canonical_rows))
    rows = _mutate(data, rows)
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r, allow_nan=True) for r in rows) + "\n")
    ds, skipped, duplicates = _load_both_modes(path)
    _accounted(len(rows), ds, skipped, duplicates)
