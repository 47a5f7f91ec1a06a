"""`accordkit score --out DIR`: a store from the command line; bad input in one line."""

from __future__ import annotations

import pandas as pd

import accordkit as ak
from accordkit.cli import main


def test_score_out_writes_a_store_equal_to_ak_score(tmp_path, sample_dir, capsys):
    out = tmp_path / "store"
    code = main(["score", str(sample_dir / "goalshift"), "--out", str(out), "--num-proc", "2",
                 "--batch-size", "30", "--quiet"])
    assert code == 0
    assert "scored 216 episodes from 3 input(s)" in capsys.readouterr().out
    want = ak.score(ak.load(str(sample_dir / "goalshift")), level="shift")
    got = ak.read_scores(out, level="shift")
    pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)


def test_a_failed_input_gives_exit_1_and_names_it(tmp_path, sample_dir, capsys):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 truncated")
    code = main(["score", str(sample_dir / "goalshift" / "airline"), str(bad), "--out",
                 str(tmp_path / "s"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert f"FAILED {bad}" in captured.err and "scored 72 episodes" in captured.out


def test_bad_input_is_one_clear_line_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "results.json"
    bad.write_text("{ not json")
    assert main(["score", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith(f"accordkit score: error: file {bad}, record (whole file)")
