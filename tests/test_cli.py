"""The accordkit command: help text, validate, score and synth."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from accordkit.cli import build_parser, main

from .conftest import SAMPLE


def test_help_explains_the_data_flow_and_lists_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for word in ("load", "score", "judge", "report", "validate", "synth", "examples:"):
        assert word in text


def test_every_subcommand_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"validate", "synth", "score", "report", "judge"} <= set(sub.choices)
    for name, p in sub.choices.items():
        assert p.description, name


def test_validate_clean_source_exits_0(capsys, sample_dir):
    assert main(["validate", str(sample_dir / "goalshift")]) == 0
    out = capsys.readouterr().out
    assert "agentchangebench" in out and "no problems found" in out


def test_validate_reports_every_problem_and_exits_1(tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text('{"info": {"environment_info": {"domain_name": "retail"}}, "simulations": [')
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "1 problem(s)" in out and "broken.json" in out and "truncated" in out


def test_score_writes_a_tidy_csv(tmp_path, sample_dir):
    out = tmp_path / "prefs.csv"
    assert main(["score", str(sample_dir / "accord"), "--level", "preference", "-o",
                 str(out)]) == 0
    frame = pd.read_csv(out)
    assert {"episode_id", "dynamic", "satisfied", "target"} <= set(frame.columns)
    assert set(frame["benchmark"]) == {"accord"}


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_synth_regenerates_the_committed_sample_bit_for_bit(tmp_path, sample_dir):
    assert main(["synth", "--out", str(tmp_path), "--seed", "0"]) == 0
    for part in ("accord", "goalshift", "verdicts"):
        assert _digest(tmp_path / part) == _digest(SAMPLE / part), part


def test_synth_with_another_seed_differs(tmp_path):
    assert main(["synth", "--out", str(tmp_path), "--seed", "7", "--only", "goalshift"]) == 0
    assert _digest(tmp_path / "goalshift") != _digest(SAMPLE / "goalshift")


@pytest.mark.parametrize("args, code, match", [
    (["nonexistent.json", "--errors", "skip", "-o", "s.csv"], 1, "no such file or folder"),
    (["{sample}", "-o", "out.xlsx"], 64, "a .csv or .parquet file"),
    (["{sample}", "-o", "no/such/folder/x.csv"], 64, "a .csv or .parquet file"),
    (["{sample}", "--out", "store", "--num-proc", "0"], 64, "at least 1"),
])
def test_score_refuses_before_scoring(tmp_path, capsys, monkeypatch, sample_dir, args, code,
                                      match):
    monkeypatch.chdir(tmp_path)
    args = [a.format(sample=sample_dir / "goalshift") for a in args]
    assert main(["score", *args]) == code
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())                # nothing written


def test_score_reads_one_split_in_memory_and_into_a_store(tmp_path, capsys, sample_dir):
    assert main(["score", str(sample_dir / "accord"), "--split", "test",
                 "-o", str(tmp_path / "t.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "t.csv")) == 576
    assert main(["score", str(sample_dir / "accord"), "--split", "nosuch",
                 "-o", str(tmp_path / "n.csv")]) == 1
    assert "no split 'nosuch'" in capsys.readouterr().err
    assert main(["score", str(sample_dir / "accord"), "--split", "nosuch", "--out",
                 str(tmp_path / "s"), "--quiet"]) == 1


def _optional_list_actions(parser, path=("accordkit",)):
    """(command path, option, action) of every option taking one or more values."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _optional_list_actions(sub, (*path, name))
        elif action.option_strings and action.nargs in ("+", "*"):
            yield " ".join(path), action.option_strings[-1], action


def test_every_list_option_adds_up_when_repeated():
    # argparse's default "store" keeps only the last repeat: `report --source A --source B`
    # read B alone, without a word
    found = list(_optional_list_actions(build_parser()))
    assert {(cmd, opt) for cmd, opt, _ in found} >= {
        ("accordkit report", "--source"), ("accordkit report", "--verdicts"),
        ("accordkit report", "--notebooks"), ("accordkit score", "--verdicts"),
        ("accordkit synth", "--only"), ("accordkit judge-merge", "--caches")}
    stores = [(cmd, opt) for cmd, opt, action in found if type(action).__name__ != "_ExtendAction"]
    assert stores == []


@pytest.mark.parametrize(("argv", "dest", "expected"), [
    (["report", "--source", "a", "--source", "b", "c"], "source", ["a", "b", "c"]),
    (["report", "--notebooks", "x", "--source", "a", "--notebooks", "y"], "notebooks",
     ["x", "y"]),
    (["score", "s", "--verdicts", "v1", "--verdicts", "v2"], "verdicts", ["v1", "v2"]),
    (["score", "s"], "verdicts", []),
    (["synth", "--only", "accord", "--only", "verdicts"], "only", ["accord", "verdicts"]),
    (["judge-merge", "v.parquet", "-o", "m.parquet", "--caches", "a", "--caches", "b"],
     "caches", ["a", "b"]),
])
def test_repeated_list_options_keep_every_value(argv, dest, expected):
    assert getattr(build_parser().parse_args(argv), dest) == expected


def test_score_verdicts_default_is_not_shared_between_parses():
    parser = build_parser()
    parser.parse_args(["score", "s", "--verdicts", "v1"])
    assert parser.parse_args(["score", "s"]).verdicts == []
