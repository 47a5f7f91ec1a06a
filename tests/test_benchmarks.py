"""The benchmark catalogue (issue 33): one entry per benchmark, and no id spelled elsewhere.

A benchmark id written as a string literal anywhere in ``accordkit/`` outside the catalogue
is a place that a new benchmark would have to find: each one left is listed in
:data:`ALLOWED` with the reason it stays. Every name an entry holds (metric module, table
builders, notebooks, readers, judges, sample generator) resolves to something that exists.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from accordkit import benchmarks as bm
from accordkit.names import BENCHMARKS, REWARD_RANGE

from .conftest import REPO

PACKAGE = REPO / "accordkit"
CATALOGUE_FILES = {"accordkit/benchmarks.py"}

_READER = "a reader decides which benchmark a released file is: it writes that id"
_GENERATOR = "the simulator of the sample writes the id of the benchmark it imitates"
_FAKES = "test helpers build fake episodes of a given benchmark (a keyword default)"

#: (file, id) -> why the file spells the id. Stale entries fail too.
ALLOWED = {
    ("accordkit/names.py", "accord"): "the schema's vocabulary of ids (BENCHMARKS)",
    ("accordkit/names.py", "agentchangebench"): "the schema's vocabulary of ids (BENCHMARKS)",
    ("accordkit/names.py", "tau2"): "the schema's vocabulary of ids (BENCHMARKS)",
    ("accordkit/names.py", "taubench"): "the schema's vocabulary of ids (BENCHMARKS)",
    ("accordkit/ingest/formats/tau2/convert.py", "tau2"): _READER,
    ("accordkit/ingest/formats/inspect.py", "tau2"): _READER,
    ("accordkit/ingest/formats/eee.py", "tau2"): _READER,
    ("accordkit/ingest/formats/eee.py", "taubench"): _READER,
    ("accordkit/ingest/formats/eee.py", "agentchangebench"): _READER,
    ("accordkit/ingest/formats/tau2/convert.py", "agentchangebench"): _READER,
    ("accordkit/ingest/formats/taubench.py", "taubench"): _READER,
    ("accordkit/synth/accord.py", "accord"): _GENERATOR,
    ("accordkit/synth/goalshift.py", "agentchangebench"): _GENERATOR,
    ("accordkit/testing.py", "accord"): _FAKES,
    ("accordkit/testing.py", "agentchangebench"): _FAKES,
    ("accordkit/plots/__init__.py", "tau2"):
        "the name of the module plots/tau2.py (tau2's figures), not a dispatch on the benchmark",
    ("accordkit/metrics/passk.py", "taubench"):
        "the name of τ-bench's pass^k convention (rule='taubench'), a user's choice, "
        "never a dispatch on the benchmark column",
}


def _id_literals() -> dict[tuple[str, str], list[int]]:
    """(file, id) -> lines where a string literal equal to a benchmark id is written."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in CATALOGUE_FILES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in BENCHMARKS:
                found.setdefault((rel, node.value), []).append(node.lineno)
    return found


def test_no_benchmark_id_is_spelled_outside_the_catalogue_but_those_allowed():
    found = _id_literals()
    unexplained = {f"{f}:{lines} {bid!r}" for (f, bid), lines in found.items()
                   if (f, bid) not in ALLOWED}
    assert not unexplained, ("benchmark ids spelled outside accordkit/benchmarks.py: ask the "
                             f"catalogue instead, or allow them with a reason: {unexplained}")
    assert set(ALLOWED) <= set(found), f"stale allow-list entries: {set(ALLOWED) - set(found)}"


def test_the_literal_scan_sees_an_id_in_code():
    """The scan finds literals (the check would be blind without it): names.py has four."""
    assert {bid for (f, bid) in _id_literals() if f == "accordkit/names.py"} == set(BENCHMARKS)


def test_catalogue_holds_every_schema_benchmark_in_order():
    assert tuple(bm.CATALOG) == BENCHMARKS
    assert all(key == b.id for key, b in bm.CATALOG.items())
    assert len({b.name for b in bm.CATALOG.values()}) == len(BENCHMARKS)


def test_each_metric_family_resolves_and_score_dispatches_every_benchmark():
    score = importlib.import_module("accordkit.score")

    families = {b.metrics for b in bm.CATALOG.values()}
    for family in families:
        module = bm.resolve(family)
        assert callable(module.score_episodes), family
    assert sorted(score.ACCORD_BENCHMARKS + score.GOALSHIFT_BENCHMARKS) == sorted(BENCHMARKS)
    assert families == {score.accord.__name__, score.goalshift.__name__}


def _episode_columns(family: str) -> set[str]:
    module = bm.resolve(family)
    return set(getattr(module, "EPISODE_COLUMNS", None) or module.EPISODE_METRICS)


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_comparison_and_binary_metrics_are_columns_of_its_family(bid):
    b = bm.entry(bid)
    columns = _episode_columns(b.metrics)
    for metric in (*b.comparison_metrics, *b.paper_comparison_metrics, b.binary_metric):
        for column in (metric if isinstance(metric, tuple) else (metric,)):
            assert column in columns, f"{bid}: {column!r} is not a column of {b.metrics}"


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_table_builders_resolve_to_functions(bid):
    for builder in bm.entry(bid).tables:
        assert inspect.isfunction(bm.resolve(builder)), builder


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_notebooks_exist_and_ask_the_catalogue(bid):
    from accordkit.report.notebooks import NOTEBOOKS

    specs = {spec.name: spec for spec in NOTEBOOKS}
    assert bm.entry(bid).notebooks, f"{bid} is shown in no notebook"
    for name in bm.entry(bid).notebooks:
        assert name in specs, f"{bid}: no report notebook {name!r}"
        assert specs[name].path.is_file()
        assert "benchmarks" in specs[name].needs and specs[name].absent


def _builtin_readers() -> dict[str, list[object]]:
    from accordkit.ingest.registry import KINDS, formats

    readers: dict[str, list[object]] = {}
    for kind in KINDS:
        for reader in formats(kind):
            readers.setdefault(reader.name, []).append(reader)
    return readers


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_readers_exist_and_are_where_the_id_is_written(bid):
    readers = _builtin_readers()
    writers = [Path(f) for (f, b), why in ALLOWED.items() if b == bid and why == _READER]
    for name in bm.entry(bid).readers:
        assert name in readers, f"{bid}: no built-in reader {name!r}"
        homes = [Path(inspect.getfile(type(r))).relative_to(REPO) for r in readers[name]]
        homes = [h.parent if h.name == "__init__.py" else h for h in homes]
        assert any(w == h or h in w.parents for w in writers for h in homes), (bid, name)


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_judges_exist_and_take_its_episodes(bid):
    from accordkit.judges.registry import JUDGES

    for judge in bm.entry(bid).judges:
        assert judge in JUDGES, f"{bid}: no judge {judge!r}"
        assert bid in JUDGES[judge].benchmarks
    for name, spec in JUDGES.items():
        assert (bid in spec.benchmarks) == (name in bm.entry(bid).judges)


@pytest.mark.parametrize("bid", BENCHMARKS)
def test_reward_range_is_the_one_the_schema_checks(bid):
    from accordkit.schema import RULES

    (rule,) = [r for r in RULES if r.path == "reward" and r.test == "in_range"]
    reward_range = bm.entry(bid).reward_range
    assert reward_range is None or tuple(reward_range) == tuple(rule.bounds) == REWARD_RANGE


def test_sample_parts_resolve_and_their_domains_are_the_benchmarks():
    parts = bm.sample_parts()
    assert len({s.part for s in parts}) == len(parts)
    for b in bm.CATALOG.values():
        if b.sample is None:
            continue
        assert callable(bm.resolve(b.sample.generator))
        generator = importlib.import_module(b.sample.generator.partition(":")[0])
        assert set(generator.DOMAINS) <= set(b.domains), b.id


def test_questions_the_catalogue_answers():
    assert bm.ids(tau2_format=True) == ("agentchangebench", "tau2", "taubench")
    assert bm.scored_by("accordkit.metrics.accord") == ("accord",)
    assert bm.judged_by("usersim_tests") == ("accord",)
    assert bm.shown_in("goalshift_results") == ("agentchangebench",)
    assert bm.shown_in_table("accordkit.tables.paper:accord_table") == ("accord",)
    assert bm.ids(premature_stop_reward=0.0) == ("tau2",)


def test_unknown_ids_and_fields_are_errors_that_name_them():
    with pytest.raises(ValueError, match="unknown benchmark 'tau3'"):
        bm.entry("tau3")
    with pytest.raises(ValueError, match=r"no catalogue field \['colour'\]"):
        bm.ids(colour="red")


def test_entries_are_frozen():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        bm.entry("tau2").name = "other"  # type: ignore[misc]
